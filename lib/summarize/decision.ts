/**
 * The pre-registered decision of R731 (seed 003), in its precedence:
 *
 * 1. VOID when the boots differ or a clock offset is wrong: the unit measured something else;
 * 2. else NOT-PUBLISHABLE when a required pass is incomplete, or any integrity line, cache line or
 *    A/B spread over the gate exists (a unit without its container logs is never publishable:
 *    the missing log is an integrity line);
 * 3. else PUBLISHABLE, naming the largest A/B spread.
 *
 * The category-mapping notes are FLAGS but do not decide.
 * @module
 */
import type { SpreadResult } from "./ab_spread.ts";
import type { CellRow } from "./cell.ts";

/** The verdict word. */
export type Verdict = "VOID" | "NOT-PUBLISHABLE" | "PUBLISHABLE";

/** A decision: the verdict and the line printed after `DECISION: `. */
export interface Decision {
  verdict: Verdict;
  text: string;
}

/** What the decision weighs. */
export interface DecisionInput {
  /** Passes that must each have a result at every (dataset, level) seen in any pass. */
  passes: readonly string[];
  rows: readonly CellRow[];
  bootBad: readonly string[];
  integrity: readonly string[];
  cacheBad: readonly string[];
  spread: SpreadResult | null;
  cacheMax: number;
}

/** Decides. */
export function decide(x: DecisionInput): Decision {
  const reasons: string[] = [];
  const grid: [string, number][] = [];
  const seen = new Set<string>();
  for (const r of x.rows) {
    const k = `${r.dataset}\u0000${r.conc}`;
    if (!seen.has(k)) {
      seen.add(k);
      grid.push([r.dataset, r.conc]);
    }
  }
  grid.sort((p, q) => (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : p[1] - q[1]));
  for (const ps of x.passes) {
    const miss = grid.filter(([ds, c]) => !x.rows.some((r) => r.pass === ps && r.dataset === ds && r.conc === c && r.has_result)).map(([ds, c]) => `${ds} c${c}`);
    if (miss.length) reasons.push(`pass ${ps} incomplete (${miss.join(", ")})`);
  }
  if (x.bootBad.length) return { verdict: "VOID", text: `VOID ${x.bootBad.slice(0, 3).join("; ")}` };
  reasons.push(...x.integrity.slice(0, 3), ...x.cacheBad.slice(0, 3), ...(x.spread?.bad ?? []));
  const more = x.integrity.length > 3 || x.cacheBad.length > 3 ? ` (and ${Math.max(0, x.integrity.length - 3) + Math.max(0, x.cacheBad.length - 3)} more under FLAGS)` : "";
  if (reasons.length) return { verdict: "NOT-PUBLISHABLE", text: `NOT-PUBLISHABLE ${reasons.join("; ")}${more}` };
  let max: { ds: string; c: number; s: number } | null = null;
  for (const d of x.spread?.datasets ?? []) for (const l of d.lines) if (l.spread_pct !== null && (!max || l.spread_pct > max.s)) max = { ds: d.dataset, c: l.conc, s: l.spread_pct };
  const text = max
    ? `PUBLISHABLE (max A/B spread ${max.s.toFixed(2)} % at ${max.ds} c${max.c}; every cell cached <= ${+(x.cacheMax * 100).toPrecision(12)} %)`
    : `PUBLISHABLE (no A/B pair to compare; every cell cached <= ${+(x.cacheMax * 100).toPrecision(12)} %)`;
  return { verdict: "PUBLISHABLE", text };
}
