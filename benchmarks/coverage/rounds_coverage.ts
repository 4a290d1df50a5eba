/**
 * Coverage of `bench rounds`' interval of a median over rounds (lib/rounds/summary.ts medianCi) on
 * simulated positive quantities: each round's value is truth × exp(σ·Z), a log-normal round effect
 * (a GPU's clocks, heat and caches scale a time or a rate; they do not add to it), so the truth is
 * the population median. Counts how often the interval covers the truth and how often its lower
 * bound is ≤ 0 (impossible for a time, a rate or a ratio). Under 3 rounds ik gives no interval.
 * @module
 */
import { medianCi, MIN_ROUNDS_FOR_CI } from "../../lib/rounds/summary.ts";
import { SeededRng } from "../../lib/stats/mod.ts";

/** One case: rounds per comparison and the log-scale SD of the round effect. */
export interface RoundsCase {
  rounds: number;
  sigma: number;
}

/** The result of one case. */
export interface RoundsCoverage extends RoundsCase {
  repetitions: number;
  /** Share of repetitions whose interval covered the truth (null: no interval at this many rounds). */
  coverage: number | null;
  /** Share of intervals with a lower bound ≤ 0. */
  nonPositive: number | null;
  /** Median of hi / lo over the repetitions (how wide the interval is, as a ratio). */
  widthRatio: number | null;
}

/** Simulates `repetitions` comparisons of one case (seeded: same arguments, same result). */
export function roundsCoverage(c: RoundsCase, repetitions: number, resamples = 2000): RoundsCoverage {
  const truth = 100;
  const rng = new SeededRng(7, c.rounds, Math.round(c.sigma * 1000));
  if (c.rounds < MIN_ROUNDS_FOR_CI) return { ...c, repetitions, coverage: null, nonPositive: null, widthRatio: null };
  let hit = 0, bad = 0;
  const widths: number[] = [];
  for (let r = 0; r < repetitions; r++) {
    const xs = Array.from({ length: c.rounds }, () => truth * Math.exp(c.sigma * rng.normal()));
    const [lo, hi] = medianCi(xs, resamples, r);
    if (lo === null || hi === null) continue;
    if (lo <= truth && truth <= hi) hit++;
    if (lo <= 0) bad++;
    widths.push(hi / lo);
  }
  widths.sort((a, b) => a - b);
  return { ...c, repetitions, coverage: hit / repetitions, nonPositive: bad / repetitions, widthRatio: widths[Math.floor(widths.length / 2)] ?? null };
}

/** The cases the issue names: 2, 3, 5 and 10 rounds; round effects of 5 %, 20 % and 50 % (log SD). */
export const ROUNDS_CASES: RoundsCase[] = [2, 3, 5, 10].flatMap((rounds) => [0.05, 0.2, 0.5].map((sigma) => ({ rounds, sigma })));
