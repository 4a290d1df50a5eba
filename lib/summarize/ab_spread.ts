/**
 * The two-boot replication: per dataset and level, the spread of output tok/s between the first
 * two passes, |A - B| / mean. A spread over --spread-max fails a decision, except at levels listed
 * in --spread-exempt (c1 boot-to-boot noise, R592).
 * @module
 */
import type { CellRow } from "./cell.ts";

/** One level's A/B comparison. */
export interface SpreadLine {
  dataset: string;
  conc: number;
  /** The two cells, or null where a pass has no result. */
  a: CellRow | null;
  b: CellRow | null;
  /** (A + B) / 2 of output tok/s, null when a side is missing. */
  mean: number | null;
  /** |A - B| / mean × 100, null when a side is missing. */
  spread_pct: number | null;
}

/** The comparison of the first two passes. */
export interface SpreadResult {
  passA: string;
  passB: string;
  /** Per dataset (first-seen order), its levels in ascending order. */
  datasets: { dataset: string; lines: SpreadLine[] }[];
  /** Spreads over the gate (decision reasons). */
  bad: string[];
}

/**
 * Compares the first two passes; null with fewer than two.
 * @param rows every cell, in runs.tsv order
 * @param spreadMax the gate, percent
 * @param exempt levels reported but not gated
 */
export function abSpread(rows: readonly CellRow[], spreadMax: number, exempt: readonly number[]): SpreadResult | null {
  const passes = [...new Set(rows.map((r) => r.pass))];
  if (passes.length < 2) return null;
  const [passA, passB] = passes;
  const bad: string[] = [];
  const datasets = [...new Set(rows.map((r) => r.dataset))].map((dataset) => {
    const cells = new Map<string, CellRow>();
    for (const r of rows) if (r.dataset === dataset && r.has_result) cells.set(`${r.pass}\u0000${r.conc}`, r);
    const concs = [...new Set([...cells.values()].map((r) => r.conc))].sort((x, y) => x - y);
    const lines = concs.map((conc): SpreadLine => {
      const a = cells.get(`${passA}\u0000${conc}`) ?? null, b = cells.get(`${passB}\u0000${conc}`) ?? null;
      if (!(a && b && a.out_tps && b.out_tps)) return { dataset, conc, a, b, mean: null, spread_pct: null };
      const m = (a.out_tps + b.out_tps) / 2;
      const s = Math.abs(a.out_tps - b.out_tps) / m * 100;
      if (s > spreadMax && !exempt.includes(conc)) {
        bad.push(`${dataset} c${conc}: A/B spread ${s.toFixed(2)} % > ${spreadMax} % (${a.out_tps.toFixed(1)} vs ${b.out_tps.toFixed(1)} tok/s)`);
      }
      return { dataset, conc, a, b, mean: m, spread_pct: s };
    });
    return { dataset, lines };
  });
  return { passA, passB, datasets, bad };
}
