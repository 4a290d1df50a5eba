/**
 * A capacity record's own curve (`data.curve`: one entry per level with its p95s, throughput and
 * SLO verdict, copied from the measurement when the record was made), read for the report when the
 * measured record it cites cannot be read: the per-level figures then come from here, without the
 * CIs, per-bucket rows and CDF that only the measurement's request rows give. Pure.
 * @module
 */
import { sloCell } from "../terminal/capacity_table.ts";
import { type Block, num, obj, text } from "./doc.ts";
import type { CurveLevel } from "./curve_level.ts";

type Obj = Record<string, any>;
const strOrNull = (v: unknown): string | null => (typeof v === "string" && v ? v : null);
const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The entries of a capacity record's `data.curve` (objects only). */
export function capacityCurveEntries(capacity: Obj): Obj[] {
  const curve = obj(capacity.data).curve;
  return Array.isArray(curve) ? curve.filter((c) => c && typeof c === "object" && !Array.isArray(c)) as Obj[] : [];
}

/**
 * The levels of a capacity record's curve, read as the latency–throughput chart reads a
 * measurement's levels (x: output tok/s per GPU where any level has it, else achieved req/s).
 */
export function capacityCurveLevels(capacity: Obj): { levels: CurveLevel[]; xLabel: string } {
  const entries = capacityCurveEntries(capacity);
  const tok = entries.some((c) => numOrNull(c.output_tok_s_per_gpu) !== null);
  return {
    xLabel: tok ? "output tok/s per GPU" : "achieved req/s",
    levels: entries.map((c) => ({
      level: typeof c.level === "number" || typeof c.level === "string" ? c.level : text(c.level),
      name: text(c.name ?? c.level),
      x: numOrNull(tok ? c.output_tok_s_per_gpu : c.achieved_rps),
      ttft: numOrNull(c.ttft_p95_ms), tpot: numOrNull(c.tpot_p95_ms), e2e: numOrNull(c.e2e_p95_ms),
      sloOk: typeof c.slo_ok === "boolean" ? c.slo_ok : null,
      notJudged: strOrNull(c.not_judged), notAchieved: strOrNull(c.not_achieved),
    })),
  };
}

/** The per-level table of a capacity record's curve (p95s as recorded, no CIs), or null when it has no level. */
export function capacityCurveTable(capacity: Obj): Block | null {
  const entries = capacityCurveEntries(capacity);
  if (!entries.length) return null;
  return {
    kind: "table",
    head: ["level", "target/offered rps", "failed", "TTFT p95 ms", "TTFT p95 fail-adj", "TPOT p95 ms", "e2e p95 ms", "out tok/s/GPU", "goodput rps", "in flight", "SLO"],
    rows: entries.map((c) => {
      const fa = obj(c.ttft_p95_ms_failure_adjusted);
      return [text(c.name ?? c.level) + (c.client_limited ? " (client-limited?)" : ""), `${num(c.target_rate_rps)}/${num(c.offered_rate_rps)}`, num(c.n_failed),
        num(c.ttft_p95_ms), fa.censored ? "> max" : num(fa.value), num(c.tpot_p95_ms), num(c.e2e_p95_ms), num(c.output_tok_s_per_gpu), num(c.goodput_rps), num(c.mean_inflight),
        sloCell(c.slo_ok, strOrNull(c.not_judged), strOrNull(c.not_achieved))];
    }),
    caption: "from the capacity record's own curve (data.curve): p95s as recorded, without CIs",
  };
}
