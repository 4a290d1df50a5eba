/**
 * `npm run bench:coverage`: prints how often the 95% CI of the median covers the truth, for ik's
 * t-scaled cluster bootstrap and for a naive per-request bootstrap, on simulated rounds.
 * Then the same for `bench rounds`' interval of a median over rounds, with log-normal round effects
 * (rounds_coverage.ts).
 *   bun benchmarks/coverage/run.ts [--repetitions N] [--resamples N]
 */
import { CASES, coverage } from "./simulate.ts";
import { ROUNDS_CASES, roundsCoverage } from "./rounds_coverage.ts";

function arg(name: string, dflt: number): number {
  const argv = (globalThis as { Bun?: { argv: string[] } }).Bun?.argv ?? [];
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
}

const repetitions = arg("--repetitions", 1000);
const resamples = arg("--resamples", 2000);
console.log(`coverage of the 95% CI of the median: ${repetitions} seeded repetitions, ${resamples} resamples, 8 requests per round\n`);
console.log("| rounds | round SD / noise SD | t-scaled cluster bootstrap | naive per-request bootstrap |");
console.log("|---:|---:|---:|---:|");
for (const c of CASES) {
  const r = coverage(c, repetitions, { resamples, naive: true });
  console.log(`| ${c.rounds} | ${c.roundSdRatio} | ${(r.clusterCoverage * 100).toFixed(1)}% | ${((r.naiveCoverage ?? 0) * 100).toFixed(1)}% |`);
}

// The tails: nearest-rank p95 and p99 from few rounds sit low (a handful of round effects spread
// less than the population's), and the bootstrap, which resamples those same rounds, cannot see it.
for (const p of [95, 99]) {
  console.log(`\ncoverage of the 95% CI of p${p}: the same cases\n`);
  console.log("| rounds | round SD / noise SD | t-scaled cluster bootstrap |");
  console.log("|---:|---:|---:|");
  for (const c of CASES) {
    const r = coverage(c, repetitions, { resamples, p });
    console.log(`| ${c.rounds} | ${c.roundSdRatio} | ${(r.clusterCoverage * 100).toFixed(1)}% |`);
  }
}

console.log(`\nbench rounds: coverage of the 95% CI of the median over rounds (lib/rounds medianCi), log-normal round effects, ${repetitions} repetitions\n`);
console.log("| rounds | round effect (log SD) | covers the truth | lower bound ≤ 0 | median hi / lo |");
console.log("|---:|---:|---:|---:|---:|");
for (const c of ROUNDS_CASES) {
  const r = roundsCoverage(c, repetitions, resamples);
  const pct = (v: number | null) => (v === null ? "no interval (< 3 rounds)" : `${(v * 100).toFixed(1)}%`);
  console.log(`| ${c.rounds} | ${c.sigma} | ${pct(r.coverage)} | ${r.nonPositive === null ? "-" : pct(r.nonPositive)} | ${r.widthRatio === null ? "-" : r.widthRatio.toFixed(2)} |`);
}
