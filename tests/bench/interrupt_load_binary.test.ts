/**
 * Ctrl-C in a load run, through dist/ik: an interrupted level is not judged (its aborted requests
 * are no SLO failure), N* is then a lower bound ("max rate >= 4") in the data and the text, and an
 * interrupt before the first level claims nothing ("no load levels ran", never "SLO first fails").
 * Both exit 130 with the records marked incomplete.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ikBin, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let dir = "";
let fast: MockProc, slow: MockProc;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-int-load-"));
  fast = await startMock(["--engine", "vllm", "--ttft-ms", "20", "--tpot-ms", "2"]);
  slow = await startMock(["--engine", "vllm", "--ttft-ms", "3000", "--tpot-ms", "2"]);
});
after(async () => {
  await fast?.stop();
  await slow?.stop();
  await rm(dir, { recursive: true, force: true });
});

const start = (mock: MockProc, args: string[], sub: string) =>
  startArgv([ikBin()], ["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--max-tokens", "4", "--json", ...args], {
    env: { IK_RUNS_DIR: join(dir, sub), IK_KEY_FILE: join(dir, "key") },
  });

test("Ctrl-C during the third level: it is not judged, N* >= the level below, exit 130", async () => {
  const p = start(fast, ["--rates", "2,4,8", "--duration-s", "3", "--warmup", "0", "--slo-ttft-p95-ms", "2000", "--gpu-price-usd-h", "2"], "a");
  await p.waitFor(/load r8: sent [1-9]/, 60_000);
  const st = await p.stop("SIGINT");
  assert.equal(st.code, 130, p.stderr());
  assert.match(p.stderr(), /interrupted; the records serve_benchmark-\S+ and capacity-\S+ are marked incomplete/);
  const cap = JSON.parse(p.stdout());
  assert.equal(cap.complete, false);
  assert.equal(cap.data.rate_star_rps, 4);
  assert.equal(cap.data.n_star_lower_bound, true);
  assert.match(cap.summary, /max rate >= 4 req\/s .*level 8 was not judged \(interrupted\): N\* is at least 4/);
  assert.doesNotMatch(cap.summary, /SLO first fails/);
  const top = cap.data.curve.find((c: { level: number }) => c.level === 8);
  assert.equal(top.not_judged, "interrupted");
  assert.equal(top.slo_ok, null);
  assert.ok(cap.limitations.some((l: string) => /not judged against the SLO: r8 \(interrupted\); N\* >= 4 is a lower bound/.test(l)), cap.limitations.join("\n"));
  // The cost at a lower-bound N* is an upper bound (more capacity costs less per token).
  assert.ok(cap.data.usd_per_1m_output_tokens > 0);
  assert.equal(cap.data.usd_per_1m_output_tokens_bound, "upper");
  assert.match(cap.summary, /; <= \$\d+\.\d{3} per 1M output tokens at \$2\/GPU-h \(an upper bound\)/);
  assert.ok(cap.limitations.includes("the cost at N* is an upper bound: N* is a lower bound, and more capacity costs less per token"));
});

test("Ctrl-C during warm-up, before any level: no N*, no failure claimed, exit 130", async () => {
  const p = start(slow, ["--rates", "2,4", "--duration-s", "3", "--warmup", "2", "--slo-ttft-p95-ms", "5000"], "b");
  await new Promise((r) => setTimeout(r, 800));
  const st = await p.stop("SIGINT");
  assert.equal(st.code, 130, p.stderr());
  const cap = JSON.parse(p.stdout());
  assert.equal(cap.complete, false);
  assert.equal(cap.data.rate_star_rps, null);
  assert.match(cap.summary, /max rate = n\/a req\/s .*\(no load levels ran\)/);
  assert.doesNotMatch(cap.summary, /fails/);
});
