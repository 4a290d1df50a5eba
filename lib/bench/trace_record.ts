/**
 * What the records of a trace replay (`bench serve --mode trace`, and `ik merge` of its slices) say
 * of it: `data.trace` (the schedule planned against what was sent, the set's source rows), the
 * limitation lines (a sampled set's thinned arrivals, an interrupt, a trace with no span), and the
 * capacity claim: a replay is one level at the trace's own times, with no grid above it, so its
 * rate is the trace's mean where the SLO held over the whole replay, and nothing where the trace has
 * no span (every arrival at one instant has no rate).
 * @module
 */
import { TIME_WINDOW_SELECTION, type TraceFacts, type TraceSource } from "../schedule/trace_schedule.ts";
import type { LevelResult } from "./load_level.ts";

type Obj = Record<string, unknown>;

/** The trace readers' filter entry that counts skipped lines: a blank line is not one of the `rows`. */
const BLANK_LINES_FILTER = "blank lines";

/**
 * The rows of a set's source that passed its filters: the manifest's own `passed` (written since the
 * trace readers count it), else `rows` less what the row filters dropped (a manifest written before:
 * its "blank lines" entry counts lines that never were rows, so it is not taken off).
 */
function passedRowsOf(o: Obj & { rows: number }): number {
  if (typeof o.passed === "number") return o.passed;
  const filters = Array.isArray(o.filters) ? (o.filters as Obj[]) : [];
  const dropped = filters.reduce((a, f) => a + (f.filter !== BLANK_LINES_FILTER && typeof f.dropped === "number" ? f.dropped : 0), 0);
  return Math.max(0, o.rows - dropped);
}

/**
 * A replayed set's source trace, from its manifest's `dataset` block (`ik prompts build`, `bench
 * serve --dataset`), or null where the set has none.
 */
export function traceSourceOf(manifest: Obj | null | undefined): TraceSource | null {
  const d = manifest?.dataset;
  if (!d || typeof d !== "object") return null;
  const o = d as Obj;
  if (typeof o.rows !== "number" || typeof o.chosen !== "number") return null;
  const passed = passedRowsOf(o as Obj & { rows: number });
  const window = (o.options as Obj | undefined)?.selection === TIME_WINDOW_SELECTION;
  return { sourceRows: o.rows, passedRows: passed, chosenRows: o.chosen, sampled: !window && o.chosen < passed };
}

/** Requests the replay sent (its one level's), against the planned `tf.n`. */
function sentOf(levels: readonly LevelResult[]): number {
  return levels[0]?.sent ?? 0;
}

/** The record's `data.trace`. */
export function traceData(tf: TraceFacts, levels: readonly LevelResult[]): Obj {
  const src = tf.source ?? null;
  return {
    rows: tf.rows, planned_rows: tf.n, sent_rows: sentOf(levels), dropped_after_max_duration: tf.dropped, time_scale: tf.timeScale, max_duration_s: tf.maxDurationS,
    span_s: tf.spanS, mean_rate_rps: tf.rateRps, interrupted_at_s: levels[0]?.interrupted_at_s ?? null,
    ...(src ? { source_rows: src.sourceRows, passed_rows: src.passedRows, chosen_rows: src.chosenRows, sampled: src.sampled } : {}),
    schedule: "the set's arrival_s from its first row, x time_scale; request i is the i-th prompt in arrival order; mean_rate_rps = (planned_rows − 1) / span_s, null with no span",
  };
}

/** The measured record's trace lines. */
export function traceLimitations(tf: TraceFacts, levels: readonly LevelResult[], interrupted: boolean): string[] {
  const out: string[] = [];
  const sent = sentOf(levels);
  const count = interrupted ? `${sent} of ${tf.n}` : `${tf.n}`;
  const rate = tf.rateRps === null
    ? `all due at one instant (no span: no mean rate)`
    : `over ${tf.spanS.toFixed(1)} s (mean ${tf.rateRps.toFixed(2)} req/s, bursts included: the level's rate is the trace's mean, not a steady load)`;
  out.push(`trace replay: ${count} request(s) at the trace's own arrival times${tf.timeScale !== 1 ? ` x ${tf.timeScale} (--time-scale)` : ""} ${rate}` +
    `${tf.dropped ? `; ${tf.dropped} later row(s) past --max-duration-s ${tf.maxDurationS} not sent` : ""}; per-second windows in data.levels[0].windows`);
  const src = tf.source ?? null;
  if (src?.sampled) {
    out.push(`replaying ${src.chosenRows} of ${src.passedRows} trace rows (a seeded sample of the rows that passed the filters): arrivals thinned, the rate is not the trace's; ik prompts build --num-prompts 0 keeps every row`);
  }
  if (interrupted) {
    const at = levels[0]?.interrupted_at_s;
    out.push(`the replay was interrupted${typeof at === "number" ? ` ${at} s into its schedule` : ""} after ${sent} of ${tf.n} request(s): its per-second windows end at the interrupt`);
  }
  const behind = (levels[0]?.windows ?? []).filter((w) => w.send_lag_p99_ms !== null && w.send_lag_p99_ms > 5);
  if (behind.length) out.push(`the replay fell behind the trace (send lag p99 > 5 ms) in ${behind.length} one-second window(s), first at ${behind[0].t_s} s`);
  return out;
}

/** A capacity claim, as nStar gives one. */
export interface Star {
  value: number | null;
  reason: string;
  lowerBound: boolean;
}

/**
 * A replay's claim: the trace's mean rate where the SLO held over the whole replay (the one level
 * eligible, as nStar judged it), else none; its reason in a replay's words (no grid to be above).
 */
export function traceStar(tf: TraceFacts, star: Star, level: LevelResult | undefined): Star {
  if (!level) return { value: null, reason: "trace replay: nothing ran", lowerBound: false };
  if (level.not_judged) return { value: null, reason: `trace replay not judged (${level.not_judged})`, lowerBound: false };
  if (level.summary.slo_ok === null) return { value: null, reason: "trace replay: no SLO given", lowerBound: false };
  if (level.summary.slo_ok === false) return { value: null, reason: "trace replay: the SLO failed over the replay", lowerBound: false };
  if (tf.rateRps === null) return { value: null, reason: "trace replay: the SLO held, but every arrival was at one instant (no span): no rate to claim", lowerBound: false };
  if (star.value === null) return { value: null, reason: `trace replay: the SLO held, no rate claimed (${star.reason})`, lowerBound: false };
  return { value: star.value, reason: "trace replay: the SLO held over the whole replay at the trace's own times; the rate is the trace's mean, bursts included (one level, no grid)", lowerBound: false };
}

/** The capacity summary's head for a replay (what was sent of what was planned). */
export function traceSummaryHead(tf: TraceFacts, levels: readonly LevelResult[], interrupted: boolean): string {
  const sent = sentOf(levels);
  const rate = tf.rateRps === null ? "all at one instant" : `mean ${tf.rateRps.toFixed(2)} req/s`;
  return `trace replay of ${interrupted ? `${sent} of ${tf.n} (interrupted)` : tf.n} request(s) at the trace's own times (${rate})`;
}
