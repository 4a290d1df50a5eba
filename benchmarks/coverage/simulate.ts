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

/** The standard normal's quantile (Acklam's rational approximation, |error| < 1.2e-9 in the centre). */
function normalQuantile(q: number): number {
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const tail = (x: number) => (((((c[0] * x + c[1]) * x + c[2]) * x + c[3]) * x + c[4]) * x + c[5]) / ((((d[0] * x + d[1]) * x + d[2]) * x + d[3]) * x + 1);
  if (q < 0.02425) return tail(Math.sqrt(-2 * Math.log(q)));
  if (q > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - q)));
  const x = q - 0.5, r = x * x;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * x / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/**
 * Simulates `repetitions` benchmarks of one case and counts how often each interval of the p-th
 * percentile (default the median) covers the truth (seeded: the same arguments give the same
 * result). The truth is the population's percentile: a request's value is the centre plus a round
 * effect plus its own noise, both normal, so it is normal with both variances.
 */
export function coverage(c: CoverageCase, repetitions: number, opts: { resamples?: number; seed?: number; naive?: boolean; p?: number } = {}): CoverageResult {
  const p = opts.p ?? 50;
  const centre = 100;
  const truth = centre + normalQuantile(p / 100) * Math.sqrt(1 + c.roundSdRatio * c.roundSdRatio);
  const rng = new SeededRng(opts.seed ?? 1, c.rounds, c.perRound, Math.round(c.roundSdRatio * 1000));
  let hit = 0;
  let naiveHit = 0;
  for (let r = 0; r < repetitions; r++) {
    const values: number[] = [];
    const units: number[] = [];
    for (let k = 0; k < c.rounds; k++) {
      const effect = c.roundSdRatio * rng.normal();
      for (let i = 0; i < c.perRound; i++) {
        values.push(centre + effect + rng.normal());
        units.push(k);
      }
    }
    const ci = clusterBootstrapCi(values, units, [p], { resamples: opts.resamples ?? 2000, seed: r })[p].ci;
    if (ci && ci[0] <= truth && truth <= ci[1]) hit++;
    if (opts.naive) {
      const n = clusterBootstrapCi(values, null, [p], { resamples: opts.resamples ?? 2000, seed: r })[p].ci;
      if (n && n[0] <= truth && truth <= n[1]) naiveHit++;
    }
  }
  return { ...c, repetitions, clusterCoverage: hit / repetitions, naiveCoverage: opts.naive ? naiveHit / repetitions : null };
}

/** The cases the issue names: 3, 5 and 10 rounds of 8 requests, round SD 0, 0.5, 1 and 3 × noise. */
export const CASES: CoverageCase[] = [3, 5, 10].flatMap((rounds) =>
  [0, 0.5, 1, 3].map((roundSdRatio) => ({ rounds, perRound: 8, roundSdRatio }))
);
