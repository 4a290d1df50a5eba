/**
 * `ik export --format vllm` of an interrupted load record (Ctrl-C mid-level, through dist/ik):
 * the level file says so (`ik_interrupted`, with how many requests the interrupt aborted), its
 * runs.tsv row has rc 130, and `ik summarize vllm` reading the export back flags the cell instead of
 * counting the aborted requests as server failures with no sign of the interrupt.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let mock: MockProc;
let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-export-int-"));
  // Long answers, so the interrupt finds requests in flight.
  mock = await startMock(["--engine", "vllm", "--ttft-ms", "1500", "--tpot-ms", "5"]);
});
after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("an interrupted load record exports with ik_interrupted and rc 130, and summarize flags it", async () => {
  const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  const p = startArgv([ikBin()], ["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--warmup", "0", "--max-tokens", "4", "--rates", "6", "--duration-s", "20", "--label", "cut"], { env });
  await p.waitFor(/load r6: sent [1-9]/, 30_000);
  const st = await p.stop("SIGINT");
  assert.equal(st.code, 130, p.stderr());
  const ids = (await readdir(env.IK_RUNS_DIR)).filter((n) => n.startsWith("serve_benchmark-"));
  assert.equal(ids.length, 1, ids.join(" "));
  const out = join(dir, "exp");
  const e = await runIk(["export", ids[0], "--format", "vllm", "--out", out], { env, timeoutMs: 30_000 });
  assert.equal(e.code, 0, e.stderr);
  const file = JSON.parse(await readFile(join(out, "cut-r6.json"), "utf8"));
  assert.match(file.ik_interrupted, /^the ik run was interrupted \(Ctrl-C or a signal\) during this level: [1-9]\d* of the \d+ requests counted in failed were aborted by the interrupt/);
  assert.ok(file.failed >= 1, String(file.failed));
  const tsv = (await readFile(join(out, "runs.tsv"), "utf8")).trim().split("\n");
  assert.equal(tsv[1].split("\t")[7], "130", tsv.join("\n"));
  const s = await runIk(["summarize", "vllm", "--runs", join(out, "runs.tsv"), "--results", out], { env, timeoutMs: 30_000 });
  const text = s.stdout + s.stderr;
  assert.match(text, /client rc 130/);
  assert.match(text, /interrupted run \(the ik run was interrupted/);
});
