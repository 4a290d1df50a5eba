/**
 * bench rounds' interval of a median over rounds, on simulated log-normal round effects
 * (benchmarks/coverage/rounds_coverage.ts): never a lower bound ≤ 0, about nominal coverage from 3 rounds,
 * none at 2. Seeded, a few hundred repetitions: both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { roundsCoverage } from "../../benchmarks/coverage/rounds_coverage.ts";

test("3 and 5 rounds: no interval crosses zero, coverage near 95 %; 2 rounds: no interval", () => {
  for (const c of [{ rounds: 3, sigma: 0.5 }, { rounds: 5, sigma: 0.2 }]) {
    const r = roundsCoverage(c, 200, 400);
    assert.equal(r.nonPositive, 0, JSON.stringify(r));
    assert.ok((r.coverage ?? 0) >= 0.9 && (r.coverage ?? 0) <= 1, JSON.stringify(r));
  }
  assert.equal(roundsCoverage({ rounds: 2, sigma: 0.2 }, 50).coverage, null);
});
