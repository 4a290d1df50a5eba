/**
 * A replay's schedule (`bench serve --mode trace`): the prompts' own `arrival_s` (kept by `ik
 * prompts build` from a burstgpt, azure or mooncake trace), in arrival order, from the first one,
 * times `--time-scale` (0.5 replays twice as fast), cut at `--max-duration-s` of the scaled
 * schedule. Pure: prompts in, offsets (ms) and the prompts in their send order out.
 * @module
 */
import { dataError, usageError } from "../cli/errors.ts";
import type { Prompt } from "../prompts/mod.ts";

/** A replay schedule. */
export interface TraceSchedule {
  /** The prompts in send order (request i is prompt i). */
  prompts: Prompt[];
  /** Request i's offset from the replay's start, ms (non-decreasing). */
  offsetsMs: Float64Array;
  timeScale: number;
  maxDurationS: number | null;
  /** Rows of the set that had an arrival time. */
  rows: number;
  /** Rows past --max-duration-s, not sent. */
  dropped: number;
  /** The last offset, s. */
  spanS: number;
  /**
   * The level's nominal rate (its grid value): the trace's mean rate, or for arrivals with no span
   * (one row, or every row at one instant) their count, as nothing else names the level.
   */
  rateRps: number;
  /**
   * The trace's mean rate over the replay: (n − 1) gaps over the span, as a level's offered rate
   * is counted; null when the arrivals have no span (a rate would be invented).
   */
  meanRateRps: number | null;
}

/**
 * The schedule of `prompts` (a set made from a trace).
 * @param setName named in the error when a prompt has no `arrival_s`
 * @throws IkError data (65) naming the first prompt without a usable arrival time; usage (64) when --max-duration-s leaves nothing
 */
export function traceSchedule(prompts: readonly Prompt[], setName: string, o: { timeScale: number; maxDurationS: number | null }): TraceSchedule {
  const timed = prompts.map((p, i) => ({ p, i, t: p.extra.arrival_s }));
  const bad = timed.find((x) => typeof x.t !== "number" || !Number.isFinite(x.t) || x.t < 0);
  if (bad) {
    throw dataError(setName, `prompt '${bad.p.id}' has no arrival_s (seconds, 0 or more): --mode trace replays a trace's own arrival times`,
      "make the set with ik prompts build --dataset mooncake|azure|burstgpt --num-prompts 0, or give --dataset and --dataset-path");
  }
  const order = timed.sort((a, b) => (a.t as number) - (b.t as number) || a.i - b.i);
  const t0 = order.length ? order[0].t as number : 0;
  const all = order.map((x) => ((x.t as number) - t0) * 1000 * o.timeScale);
  const limit = o.maxDurationS === null ? Infinity : o.maxDurationS * 1000;
  const keep = all.findIndex((ms) => ms > limit);
  const n = keep === -1 ? all.length : keep;
  if (n === 0) throw usageError("--max-duration-s", "leaves no request of the trace", "raise it, or drop it");
  const offsetsMs = Float64Array.from(all.slice(0, n), (ms) => Math.round(ms * 1000) / 1000);
  const spanS = offsetsMs[n - 1] / 1000;
  return {
    prompts: order.slice(0, n).map((x) => x.p), offsetsMs, timeScale: o.timeScale, maxDurationS: o.maxDurationS,
    rows: all.length, dropped: all.length - n, spanS, rateRps: traceRateRps(offsetsMs) ?? n, meanRateRps: traceRateRps(offsetsMs),
  };
}

/**
 * A replay's mean rate: arrivals per second between the first and the last, (n − 1) gaps over the
 * span, as a level's offered rate is counted; null when the offsets have no span.
 * @param offsetsMs non-decreasing offsets, ms, from the replay's start
 */
export function traceRateRps(offsetsMs: ArrayLike<number>): number | null {
  const n = offsetsMs.length;
  const spanMs = n > 1 ? offsetsMs[n - 1] - offsetsMs[0] : 0;
  return spanMs > 0 ? (n - 1) / (spanMs / 1000) : null;
}

/** A trace reader's `options.selection` when it kept the first rows in time order (a time window), not a seeded sample. */
export const TIME_WINDOW_SELECTION = "time_window";

/** Where a replayed set came from: its trace's rows against the rows the set holds. */
export interface TraceSource {
  /** Rows of the trace file. */
  sourceRows: number;
  /** Of them, the rows that passed the dataset's filters. */
  passedRows: number;
  /** The rows the set holds. */
  chosenRows: number;
  /** The set is a seeded sample of the rows that passed (arrivals thinned), not all of them or a time window. */
  sampled: boolean;
}

/** What a record says of a replay (a merge has these from its slices, not the offsets). */
export interface TraceFacts {
  /** Requests the replay's schedule holds (planned; fewer are sent when it is interrupted). */
  n: number;
  rows: number;
  dropped: number;
  timeScale: number;
  maxDurationS: number | null;
  spanS: number;
  /** The trace's mean rate, (n − 1) / span; null when the arrivals have no span. */
  rateRps: number | null;
  /** The set's source trace, where its manifest says (null: a set without one). */
  source?: TraceSource | null;
}

/** The facts of a schedule. */
export function traceFacts(t: TraceSchedule): TraceFacts {
  return { n: t.offsetsMs.length, rows: t.rows, dropped: t.dropped, timeScale: t.timeScale, maxDurationS: t.maxDurationS, spanS: t.spanS, rateRps: t.meanRateRps };
}

/** The facts back from a record's `data.trace`, or null when it has none. */
export function traceFactsOf(d: unknown): TraceFacts | null {
  if (!d || typeof d !== "object") return null;
  const o = d as Record<string, unknown>;
  const num = (k: string) => (typeof o[k] === "number" ? o[k] as number : NaN);
  // Records before planned_rows wrote the planned count as sent_rows.
  const n = typeof o.planned_rows === "number" ? o.planned_rows : num("sent_rows");
  const rate = o.mean_rate_rps === null ? null : num("mean_rate_rps");
  const f: TraceFacts = { n, rows: num("rows"), dropped: num("dropped_after_max_duration"), timeScale: num("time_scale"), maxDurationS: typeof o.max_duration_s === "number" ? o.max_duration_s : null, spanS: num("span_s"), rateRps: rate };
  const src = typeof o.source_rows === "number" && typeof o.passed_rows === "number" && typeof o.chosen_rows === "number"
    ? { sourceRows: o.source_rows, passedRows: o.passed_rows, chosenRows: o.chosen_rows, sampled: o.sampled === true }
    : null;
  return [f.n, f.rows, f.dropped, f.timeScale, f.spanS, rate ?? 0].every(Number.isFinite) ? { ...f, source: src } : null;
}
