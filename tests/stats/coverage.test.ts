/**
 * Coverage of the 95% CI of the median (issue: single mode, statistics). Bun only, for time
 * (about 50 s on a 2-core machine): 12 cases × 1000 seeded repetitions × 2000 resamples; the naive
 * bootstrap's under-coverage (~70 % against a bound of 85 %) is plain at 300 repetitions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { CASES, coverage } from "../../benchmarks/coverage/simulate.ts";
import { CI_TAIL_COVERAGE } from "../../lib/stats/mod.ts";

const skip = runtime.name !== "bun" ? "Bun only (CONTRACTS.md CI time)" : false;

test("t-scaled cluster bootstrap covers the truth 90–98% at 3, 5 and 10 rounds, whatever the round effect", { skip, timeout: 600_000 }, () => {
  const lines: string[] = [];
  for (const c of CASES) {
    const r = coverage(c, 1000);
    lines.push(`rounds ${c.rounds}, round SD ${c.roundSdRatio}× noise: ${(r.clusterCoverage * 100).toFixed(1)}%`);
    assert.ok(r.clusterCoverage >= 0.9 && r.clusterCoverage <= 0.98, lines.join("\n"));
  }
});

test("a naive per-request bootstrap under-covers on the same data once rounds differ", { skip, timeout: 600_000 }, () => {
  for (const rounds of [3, 5, 10]) {
    const r = coverage({ rounds, perRound: 8, roundSdRatio: 1 }, 300, { naive: true });
    assert.ok((r.naiveCoverage ?? 1) < 0.85, `rounds ${rounds}: naive ${r.naiveCoverage}, cluster ${r.clusterCoverage}`);
  }
});

test("the tails' intervals under-cover as CI_TAIL_COVERAGE says (p95 below 90 % and p99 below 85 % with 5 rounds that differ)", { skip, timeout: 600_000 }, () => {
  const c = { rounds: 5, perRound: 8, roundSdRatio: 3 };
  const p95 = coverage(c, 200, { resamples: 500, p: 95 }).clusterCoverage;
  const p99 = coverage(c, 200, { resamples: 500, p: 99 }).clusterCoverage;
  assert.ok(p95 < 0.9 && p95 > 0.6, `p95 ${p95}`);
  assert.ok(p99 < 0.85, `p99 ${p99}`);
  assert.match(CI_TAIL_COVERAGE, /73–94 % \(p95\) and 56–81 % \(p99\)/);
});
