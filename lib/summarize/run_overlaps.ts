/**
 * runs.tsv's cells against each other: a (pass, dataset, conc) cell written twice (the A/B
 * comparison keeps only one of them), and serial ranges that overlap within one container log
 * (the same container lines counted in two cells). Integrity lines in the seed's `tag: what` style,
 * each naming the runs.tsv lines concerned.
 * @module
 */
import type { RunRow } from "./runs_table.ts";

/**
 * The integrity lines for repeated cells and overlapping serial ranges.
 * @param runs runs.tsv's rows, in file order
 * @param where runs.tsv's path as given (lines are named `where:LINE`)
 * @param containerOf the container log a row reads (null: none), so ranges are compared only
 *   within one log (a per-cell log starts its own serials)
 */
export function runOverlapFlags(runs: readonly RunRow[], where: string, containerOf: (run: RunRow) => string | null): string[] {
  const out: string[] = [];
  const cells = new Map<string, RunRow>();
  // the passes the A/B comparison reads (the first two), as ab_spread.ts picks them
  const ab = [...new Set(runs.map((r) => r.pass))].slice(0, 2);
  for (const r of runs) {
    const key = `${r.pass}\u0000${r.dataset}\u0000${r.conc}`;
    const first = cells.get(key);
    if (first) {
      const kept = ab.length === 2 && ab.includes(r.pass) ? "; the A/B comparison keeps only the later one with a result" : "";
      out.push(`${r.tag}: ${where}:${r.line} repeats cell (pass ${r.pass}, ${r.dataset}, c${r.conc}) of ${first.tag} (${where}:${first.line})${kept}`);
    } else cells.set(key, r);
  }
  const seen: { run: RunRow; log: string }[] = [];
  for (const r of runs) {
    const log = containerOf(r);
    if (log === null || r.serialHi <= r.serialLo) continue;
    for (const o of seen) {
      if (o.log === log && r.serialLo < o.run.serialHi && o.run.serialLo < r.serialHi) {
        out.push(`${r.tag}: serials (${r.serialLo},${r.serialHi}] (${where}:${r.line}) overlap ${o.run.tag}'s (${o.run.serialLo},${o.run.serialHi}] (${where}:${o.run.line}) in ${log}: those container lines are counted in both cells`);
      }
    }
    seen.push({ run: r, log });
  }
  return out;
}
