/**
 * Through dist/ik: `--rates 5,1e9 --max-requests-per-level 20` once headlined "max rate =
 * 1000000000 req/s" for a level that sent a few thousand per second. The level is now "not
 * achieved" in the measured record, the capacity curve and the table, and N* is at least 5.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let dir = "";
let mock: MockProc;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-achieved-"));
  mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1"]);
});
after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("a level the client could not send at is not achieved, not eligible for N*, and says what capped it", async () => {
  const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  const common = ["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--warmup", "0", "--max-tokens", "4", "--slo-ttft-p95-ms", "2000"];
  const r = await runIk([...common, "--rates", "5,1e9", "--max-requests-per-level", "20", "--duration-s", "2", "--json"], { env, timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  const cap = JSON.parse(r.stdout);
  assert.equal(cap.data.rate_star_rps, 5, cap.summary);
  assert.equal(cap.data.n_star_lower_bound, true);
  assert.match(cap.summary, /max rate >= 5 req\/s/);
  assert.match(cap.summary, /level 1000000000 was not achieved, offered \d+ of the 1000000000 req\/s scheduled .*--max-requests-per-level 20/);
  const top = cap.data.curve.find((c: { level: number }) => c.level === 1e9);
  assert.match(top.not_achieved, /--max-requests-per-level 20 let only 20 requests go/);
  assert.equal(cap.data.curve.find((c: { level: number }) => c.level === 5).not_achieved, null);
  assert.ok(cap.limitations.some((l: string) => /^not achieved \(not eligible for N\*\): r1000000000/.test(l)), cap.limitations.join("\n"));
  const measured = JSON.parse(await readFile(join(env.IK_RUNS_DIR, cap.data.measurement, "evidence.json"), "utf8"));
  const lv = measured.data.levels.find((l: { level: number }) => l.level === 1e9);
  assert.ok(lv.offered_rate_rps < 0.9e9 && lv.sent === 20, JSON.stringify(lv).slice(0, 300));
  // (On Linux the send-lag note also says what is left without the loop thread's wait for a CPU.)
  assert.match(lv.not_achieved, /the client could not send (at this rate|faster \(send lag p99 [\d.]+ ms > 5 ms( \([\d.]+ ms less the loop thread's wait for a CPU[^)]*\))?\))/);
  // The terminal table marks the level (human output of the same run kind).
  const h = await runIk([...common, "--rates", "1e9", "--max-requests-per-level", "20", "--duration-s", "1"], { env, timeoutMs: 60_000 });
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout + h.stderr, /max rate = n\/a req\/s/);
  assert.match(h.stdout + h.stderr, /ok \(not achieved\)/);
});
