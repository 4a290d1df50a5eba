/**
 * One load level (seed 002 level_summary), accumulated row by row so that memory is one number
 * per kept value (typed columns), never the rows themselves:
 *
 * - p50/p90/p95/p99 of TTFT, TPOT, e2e (ok requests) and ITL (every gap between token events);
 * - failures by kind; output tokens, tok/s (and per GPU), goodput and achieved rps (ok requests)
 *   over the level's window, first send to last end;
 * - mean in flight by Little's law; send lag, and the send lag less the loop thread's wait for a CPU;
 * - failure-adjusted percentiles of TTFT and e2e: every failed request counts as infinitely slow,
 *   so a server that refuses half its requests cannot look faster than one that serves them all
 *   (CONTRACTS.md "Words": a percentile that falls on a failure is null with `censored: true`);
 * - the SLO checks.
 * @module
 */
import { nearestRankIndex, nearestRankSorted, orderStatisticCi } from "../stats/mod.ts";
import { type ChunkSpill, Column, type Percentiles, percentiles, percentilesOfSorted } from "./column.ts";
import { meetsSlo, type Slo, type SloCheck, sloChecks } from "./slo.ts";

/** The row fields a level reads. */
export interface LevelRow {
  ok: boolean;
  error_kind: string | null;
  ttft_ms: number | null;
  tpot_ms: number | null;
  e2e_ms: number | null;
  n_tokens: number | null;
  send_lag_ms: number | null;
  /** Open loop: the loop thread's wait for a CPU while the request waited for its deadline (absent or null: not read). */
  send_cpu_wait_ms?: number | null;
  t_send_ns: number;
  t_end_ns: number;
}

/**
 * A row's send lag less the loop thread's wait for a CPU while it waited for its deadline, never
 * below zero: the lag ik's own work caused; null when the row has no lag or no wait read.
 */
export function sendLagWithoutCpuWait(row: { send_lag_ms?: unknown; send_cpu_wait_ms?: unknown }): number | null {
  const lag = row.send_lag_ms, wait = row.send_cpu_wait_ms;
  return typeof lag === "number" && typeof wait === "number" ? Math.max(0, lag - wait) : null;
}

/** A percentile that may fall on a failed (infinitely slow) request. */
export interface CensoredValue {
  value: number | null;
  censored: boolean;
}

/** A level's summary, as stored in the record (snake_case, the seed's names). */
export interface LevelSummary {
  n_requests: number;
  n_ok: number;
  n_failed: number;
  failures_by_kind: Record<string, number>;
  window_s: number;
  ttft_ms: Percentiles & { ci95_p95: [number, number] | null };
  tpot_ms: Percentiles & { ci95_p95: [number, number] | null };
  e2e_ms: Percentiles;
  itl_ms: Percentiles;
  ttft_ms_failure_adjusted: Record<string, CensoredValue>;
  e2e_ms_failure_adjusted: Record<string, CensoredValue>;
  output_tokens: number;
  output_tok_s: number | null;
  output_tok_s_per_gpu: number | null;
  goodput_rps: number | null;
  achieved_rps: number | null;
  mean_inflight: number | null;
  send_lag_ms: Percentiles;
  /**
   * The send lag less the loop thread's wait for a CPU in its request's wait (never below zero):
   * the lag ik's own work caused. Over the requests whose wait was read; null where none was
   * (a closed loop, a host without Linux schedstat, a record made before it was measured).
   */
  send_lag_without_cpu_wait_ms?: Percentiles | null;
  slo_checks: Record<string, SloCheck>;
  slo_ok: boolean | null;
}

/** How many recent values a progress peek looks at (a 4096-value sort is well under a millisecond). */
export const RECENT = 4096;

/** A ring of the last {@link RECENT} values. */
class Recent {
  readonly #v = new Float64Array(RECENT);
  #n = 0;

  push(x: number): void {
    this.#v[this.#n++ % RECENT] = x;
  }

  p(p: number): number | null {
    const n = Math.min(this.#n, RECENT);
    if (n === 0) return null;
    return nearestRankSorted(this.#v.slice(0, n).sort(), p);
  }
}

/** Collects one level's rows and ITLs, then summarises them. */
export class LevelAccumulator {
  readonly #ttft: Column;
  readonly #tpot: Column;
  readonly #e2e: Column;
  readonly #itl: Column;
  readonly #lag: Column;
  readonly #lagLessWait: Column;
  readonly #failures: Record<string, number> = {};
  readonly #recentTtft = new Recent();
  readonly #recentLag = new Recent();
  #n = 0;
  #ok = 0;
  #good = 0;
  #tokens = 0;
  #t0 = Infinity;
  #t1 = -Infinity;
  #busyNs = 0;

  /**
   * @param slo the targets goodput is counted against
   * @param spill where the columns park their full chunks (column.ts), or null to keep every value in memory
   */
  constructor(readonly slo: Slo = {}, spill: ChunkSpill | null = null) {
    this.#ttft = new Column(256, "f64", spill);
    this.#tpot = new Column(256, "f64", spill);
    this.#e2e = new Column(256, "f64", spill);
    // 32-bit floats: one value per token gap, the column that grows with every token (column.ts).
    this.#itl = new Column(4096, "f32", spill);
    this.#lag = new Column(256, "f64", spill);
    this.#lagLessWait = new Column(256, "f64", spill);
  }

  /** Adds one finished request and its inter-token gaps. */
  add(row: LevelRow, itlMs: ArrayLike<number> = []): void {
    this.#n++;
    this.#t0 = Math.min(this.#t0, row.t_send_ns);
    this.#t1 = Math.max(this.#t1, row.t_end_ns);
    this.#busyNs += row.t_end_ns - row.t_send_ns;
    if (row.send_lag_ms !== null) {
      this.#lag.push(row.send_lag_ms);
      this.#recentLag.push(row.send_lag_ms);
      const own = sendLagWithoutCpuWait(row);
      if (own !== null) this.#lagLessWait.push(own);
    }
    if (meetsSlo(row, this.slo)) this.#good++;
    if (!row.ok) {
      const k = row.error_kind ?? "unknown";
      this.#failures[k] = (this.#failures[k] ?? 0) + 1;
      return;
    }
    this.#ok++;
    this.#tokens += row.n_tokens ?? 0;
    if (row.ttft_ms !== null) {
      this.#ttft.push(row.ttft_ms);
      this.#recentTtft.push(row.ttft_ms);
    }
    if (row.tpot_ms !== null) this.#tpot.push(row.tpot_ms);
    if (row.e2e_ms !== null) this.#e2e.push(row.e2e_ms);
    this.#itl.pushAll(itlMs);
  }

  /**
   * Adds inter-token gaps of an ok request on their own (a merge streams outputs apart from rows;
   * the ITL column is order-free, so this equals passing them to {@link add}).
   */
  addItl(itlMs: ArrayLike<number>): void {
    this.#itl.pushAll(itlMs);
  }

  /** The p95 TTFT of the last {@link RECENT} ok requests (for a progress line: cheap at any level size). */
  peekTtftP95(): number | null {
    return this.#recentTtft.p(95);
  }

  /** The p99 send lag of the last {@link RECENT} requests (for a progress line). */
  peekSendLagP99(): number | null {
    return this.#recentLag.p(99);
  }

  /**
   * The summary.
   * @param gpuCount GPUs serving (for tok/s per GPU)
   */
  summary(gpuCount = 1): LevelSummary {
    const window = this.#n ? (this.#t1 - this.#t0) / 1e9 : 0;
    const per = (x: number) => (window > 0 ? x / window : null);
    // Each column is sorted once. Under load requests interact; the interval treats them as
    // independent (records say so).
    const ttftSorted = this.#ttft.sorted(), tpotSorted = this.#tpot.sorted(), e2eSorted = this.#e2e.sorted();
    const ttft = { ...percentilesOfSorted(ttftSorted), ci95_p95: orderStatisticCi(ttftSorted, 95) };
    const tpot = { ...percentilesOfSorted(tpotSorted), ci95_p95: orderStatisticCi(tpotSorted, 95) };
    const e2e = percentilesOfSorted(e2eSorted);
    const nFailed = this.#n - this.#ok;
    const checks = sloChecks({ ttftP95: ttft.p95, tpotP95: tpot.p95, e2eP95: e2e.p95, nFailed, nOk: this.#ok }, this.slo);
    const tokS = per(this.#tokens);
    return {
      n_requests: this.#n,
      n_ok: this.#ok,
      n_failed: nFailed,
      failures_by_kind: { ...this.#failures },
      window_s: window,
      ttft_ms: ttft,
      tpot_ms: tpot,
      e2e_ms: e2e,
      itl_ms: this.#itl.percentilesInPlace(),
      ttft_ms_failure_adjusted: failureAdjustedSorted(ttftSorted, this.#n - ttftSorted.length),
      e2e_ms_failure_adjusted: failureAdjustedSorted(e2eSorted, this.#n - e2eSorted.length),
      output_tokens: this.#tokens,
      output_tok_s: tokS,
      output_tok_s_per_gpu: tokS === null ? null : tokS / Math.max(1, gpuCount),
      goodput_rps: per(this.#good),
      achieved_rps: per(this.#ok),
      mean_inflight: window > 0 ? this.#busyNs / 1e9 / window : null,
      send_lag_ms: percentiles(this.#lag),
      send_lag_without_cpu_wait_ms: this.#lagLessWait.length ? percentiles(this.#lagLessWait) : null,
      slo_checks: checks,
      slo_ok: Object.keys(checks).length ? Object.values(checks).every((c) => c.ok) : null,
    };
  }
}

/**
 * p50/p95/p99 over every request with the `missing` ones (failed, or without the value) counted
 * as +∞: a percentile that lands on one is `{value: null, censored: true}`.
 */
export function failureAdjusted(c: Column, missing: number, ps: readonly number[] = [50, 95, 99]): Record<string, CensoredValue> {
  return failureAdjustedSorted(c.sorted(), missing, ps);
}

function failureAdjustedSorted(s: Float64Array, missing: number, ps: readonly number[] = [50, 95, 99]): Record<string, CensoredValue> {
  const n = s.length + missing;
  const out: Record<string, CensoredValue> = {};
  for (const p of ps) {
    if (n === 0) {
      out[`p${p}`] = { value: null, censored: false };
      continue;
    }
    const rank = nearestRankIndex(n, p);
    out[`p${p}`] = rank < s.length ? { value: s[rank], censored: false } : { value: null, censored: true };
  }
  return out;
}
