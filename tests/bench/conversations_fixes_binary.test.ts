/**
 * `bench serve --mode conversations` through dist/ik, what only the binary shows: Ctrl-C cuts the
 * turns in flight without counting them as failed (exit 130, no aborted rows); a huge or malformed
 * --think-time-ms and the flags the mode does not use are usage errors (64, no Node timer warning);
 * a .jsonl.gz conversation file is read; `ik report` and `ik export --format csv` render the
 * record's turns. Bun only (end to end): ~8 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";

describe("conversations mode fixes (binary)", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let dir = "";
  let env: Record<string, string> = {};
  let mock: MockProc;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-conv-fix-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "400", "--tpot-ms", "2"]);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const serve = (extra: string[]) => ["bench", "serve", "--mode", "conversations", "--base-url", mock.base, "--model", "mock-model", ...extra];
  const rowsOf = async (id: string) => (await readFile(join(env.IK_RUNS_DIR, id, "requests.jsonl"), "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l));

  test("Ctrl-C: exit 130, an incomplete record, the cut turns not sent (no aborted rows, no failure)", async () => {
    const p = startArgv([ikBin()], serve(["--conversations", "synth:4:3:8:4", "--sessions", "2", "--json"]), { env });
    await new Promise((r) => setTimeout(r, 2000));
    const st = await p.stop("SIGINT");
    assert.equal(st.code, 130, p.stderr());
    const rec = JSON.parse(p.stdout());
    assert.equal(rec.complete, false);
    const rows = await rowsOf(rec.evidence_id);
    assert.ok(rows.length < 12, `${rows.length} rows`);
    assert.deepEqual(rows.filter((r) => !r.ok).map((r) => r.error_kind), []);
    assert.ok(!rec.limitations.some((l: string) => /failed/.test(l)), rec.limitations.join(" | "));
    assert.equal(rec.data.not_sent_turns + rows.length, 12);
  });

  test("usage errors (64): think time over the timer limit or malformed, and flags the mode does not use", async () => {
    for (const [args, re] of [
      [["--think-time-ms", "1e12"], /--think-time-ms: '1e12' is not MEAN\[:SD\]/],
      [["--think-time-ms", "3000000000"], /--think-time-ms: the mean 3000000000 ms is over 2147483647 ms/],
      [["--think-time-ms", "100:"], /--think-time-ms: '100:' is not MEAN\[:SD\]/],
      [["--slo-ttft-p95-ms", "1", "--fail-on-slo"], /--slo-ttft-p95-ms: is not for --mode conversations/],
      [["--warmup", "5"], /--warmup: is not for --mode conversations/],
      [["--buckets", "short"], /--buckets: is not for --mode conversations/],
    ] as [string[], RegExp][]) {
      const r = await runIk(serve(["--conversations", "synth:2:2:8:4", ...args]), { env });
      assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.doesNotMatch(r.stderr, /TimeoutOverflowWarning/);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
  });

  test("a .jsonl.gz file is read; ik report and ik export --format csv render the turns", async () => {
    const file = join(dir, "c.jsonl.gz");
    await writeFile(file, gzipSync([JSON.stringify({ id: 1, turns: ["hello there", "more"] }), JSON.stringify({ id: "b", messages: [{ role: "user", content: [{ type: "text", text: "parts" }] }] })].join("\n") + "\n"));
    const r = await runIk(serve(["--conversations", file, "--max-tokens", "4", "--json"]), { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    assert.deepEqual((await rowsOf(rec.evidence_id)).map((x) => `${x.conversation}#${x.turn}`).sort(), ["1#1", "1#2", "b#1"]);
    const rep = await runIk(["report", rec.evidence_id], { env });
    assert.equal(rep.code, 0, rep.stderr);
    assert.match(rep.stdout, /Conversations benchmark/);
    assert.doesNotMatch(rep.stdout, /no per-bucket figures/);
    const out = join(dir, "csv");
    const ex = await runIk(["export", rec.evidence_id, "--format", "csv", "--out", out], { env });
    assert.equal(ex.code, 0, ex.stderr);
    const csv = (await readFile(join(out, `${rec.evidence_id}.csv`), "utf8")).trimEnd().split("\r\n");
    assert.equal(csv.length, 1 + 2, csv.join("\n"));
    assert.match(csv[0], /(^|,)turn(,|$)/);
  });
});
