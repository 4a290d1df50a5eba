/**
 * `ik bench rounds` end to end (Bun only, dist/ik and an `ik mock` engine; ~15 s):
 * - run twice into the same run dir: the first run's outputs are moved to `previous/<start>/`, so
 *   the second run's summary and `ik report` count only its own cells;
 * - nested secrets in `--extra-body` and in a JSON value of `--serve-args` reach no file of the
 *   run dir (plan.json and summary.json store `serve_args` scrubbed word by word, summary.md shows
 *   the scrubbed extra body).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePort } from "../_helpers/ports.ts";
import { runIk } from "../_helpers/ik.ts";
import { ikBin } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const BUN = runtime.name === "bun";
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-rounds-rerun-"));
  await writeFile(join(dir, "p.jsonl"), JSON.stringify({ id: "p1", bucket: "short", messages: [{ role: "user", content: "Hi" }] }) + "\n");
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every file under `d`, recursively. */
function allFiles(d: string): string[] {
  return readdirSync(d).flatMap((n) => statSync(join(d, n)).isDirectory() ? allFiles(join(d, n)) : [join(d, n)]);
}

describe("bench rounds rerun into one run dir, with nested secrets", { skip: BUN ? false : "Bun only (end to end)" }, () => {
  test("the earlier run is moved aside; no secret reaches a file (~15 s)", async () => {
    const port = await freePort();
    const ik = ikBin();
    const engine = (label: string) => ({ label, name: "vllm", launch: [ik, "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", "1"], port });
    const run = join(dir, "run");
    const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    const args = (m: string) => ["bench", "rounds", join(dir, m), "--prompts", join(dir, "p.jsonl"), "--rounds", "1", "--run-dir", run, "--gpu-lock", join(dir, "lock"),
      "--warmup", "0", "--serve-args", `--max-tokens 4 --warmup 0 --chat-template-kwargs '{"auth":{"pw":"NESTSEC7"}}'`,
      "--extra-body", '{"credentials":{"password":"PWVAL7"},"auth":{"pw":"NESTSEC8"},"top_k":5}'];
    // The first run's engine is labelled "old": the second run's report must not count its cell.
    await writeFile(join(dir, "m1.json"), JSON.stringify({ engines: [engine("old")] }));
    await writeFile(join(dir, "m2.json"), JSON.stringify({ engines: [engine("new")] }));
    const first = await runIk(args("m1.json"), { env, timeoutMs: 60_000 });
    assert.equal(first.code, 0, first.stderr.slice(-2000));
    const second = await runIk(args("m2.json"), { env, timeoutMs: 60_000 });
    assert.equal(second.code, 0, second.stderr.slice(-2000));
    assert.match(second.stderr, /the run dir held an earlier run: its \d+ file\(s\) were moved to .*previous\/\d{8}T\d{6}Z/);
    const rd = join(run, "rounds");
    assert.deepEqual(readdirSync(rd).filter((n) => /\.r\d+\.json$/.test(n)), ["new.r1.json"]);
    const plan = JSON.parse(readFileSync(join(rd, "plan.json"), "utf8"));
    const prev = join(run, plan.previous_run.moved_to);
    assert.ok(existsSync(join(prev, "rounds", "old.r1.json")) && existsSync(join(prev, "rounds", "summary.json")) && existsSync(join(prev, "logs", "old.r1.log")));
    assert.equal(existsSync(join(run, "logs", "old.r1.log")), false);
    const rep = await runIk(["report", run], { env, timeoutMs: 30_000 });
    assert.equal(rep.code, 0, rep.stderr);
    assert.match(rep.stdout, /\b1 cells, 0 not ok/);
    assert.doesNotMatch(rep.stdout, /\bold\b/);
    // Secrets: stored scrubbed, word by word for --serve-args.
    assert.equal(plan.settings.serve_args, `--max-tokens 4 --warmup 0 --chat-template-kwargs '{"auth":"***"}'`);
    assert.match(readFileSync(join(rd, "summary.md"), "utf8"), /--extra-body \{"auth": "\*\*\*", "credentials": \{"password": "\*\*\*"\}, "top_k": 5\}/);
    for (const f of allFiles(run)) {
      const text = readFileSync(f, "latin1");
      for (const secret of ["NESTSEC7", "NESTSEC8", "PWVAL7"]) assert.ok(!text.includes(secret), `${secret} in ${f}`);
    }
    for (const out of [first, second, rep]) assert.ok(!/NESTSEC|PWVAL/.test(out.stdout + out.stderr));
  });
});
