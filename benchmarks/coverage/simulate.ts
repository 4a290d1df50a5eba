/**
 * Coverage of ik's confidence intervals on simulated benchmark rounds: each round draws a round
 * effect (the drift a GPU's clocks, heat and caches create between rounds) and every request adds
 * its own noise. The truth is the population median (the centre: both effects are symmetric).
 * Used by tests/stats/coverage.test.ts and `npm run bench:coverage`.
 * @module
 */
import { clusterBootstrapCi, SeededRng } from "../../lib/stats/mod.ts";

/** One simulated case. */
export interface CoverageCase {
  /** Rounds per benchmark. */
  rounds: number;
  /** Requests per round. */
  perRound: number;
  /** Round-effect SD as a multiple of the request-noise SD. */
  roundSdRatio: number;
}

/** The coverage of one case, for the t-scaled cluster bootstrap and the naive per-request one. */
export interface CoverageResult extends CoverageCase {
  repetitions: number;
  clusterCoverage: number;
  naiveCoverage: number | null;
}

/**
 * Simulates `repetitions` benchmarks of one case and counts how often each interval of the median
 * covers the truth (seeded: the same arguments give the same result).
 */
export function coverage(c: CoverageCase, repetitions: number, opts: { resamples?: number; seed?: number; naive?: boolean } = {}): CoverageResult {
  const truth = 100;
  const rng = new SeededRng(opts.seed ?? 1, c.rounds, c.perRound, Math.round(c.roundSdRatio * 1000));
  let hit = 0;
  let naiveHit = 0;
  for (let r = 0; r < repetitions; r++) {
    const values: number[] = [];
    const units: number[] = [];
    for (let k = 0; k < c.rounds; k++) {
      const effect = c.roundSdRatio * rng.normal();
      for (let i = 0; i < c.perRound; i++) {
        values.push(truth + effect + rng.normal());
        units.push(k);
      }
    }
    const ci = clusterBootstrapCi(values, units, [50], { resamples: opts.resamples ?? 2000, seed: r })[50].ci;
    if (ci && ci[0] <= truth && truth <= ci[1]) hit++;
    if (opts.naive) {
      const n = clusterBootstrapCi(values, null, [50], { resamples: opts.resamples ?? 2000, seed: r })[50].ci;
      if (n && n[0] <= truth && truth <= n[1]) naiveHit++;
    }
  }
  return { ...c, repetitions, clusterCoverage: hit / repetitions, naiveCoverage: opts.naive ? naiveHit / repetitions : null };
}

/** The cases the issue names: 3, 5 and 10 rounds of 8 requests, round SD 0, 0.5, 1 and 3 × noise. */
export const CASES: CoverageCase[] = [3, 5, 10].flatMap((rounds) =>
  [0, 0.5, 1, 3].map((roundSdRatio) => ({ rounds, perRound: 8, roundSdRatio }))
);
