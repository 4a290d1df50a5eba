/**
 * Per-second windows of a replayed schedule (trace mode): for each window of the schedule's own
 * time axis, the requests the trace put there (its rate) against the requests the client sent in
 * it (the achieved rate, by actual send time) and those that ended ok, with the send lag of the
 * requests due in it (nearest-rank p99 and max). A replay that keeps up shows the same counts in
 * both columns; a client or server that falls behind shows the sent column lagging the trace.
 * @module
 */
import { nearestRank } from "../stats/mod.ts";

/** One window, as the record keeps it. */
export interface ScheduleWindow {
  /** Window start, s from the schedule's start. */
  t_s: number;
  /** Requests the schedule put in this window (per second: the trace's rate). */
  trace_rps: number;
  /** Requests sent in this window (by send time). */
  sent_rps: number;
  /** Requests due in this window that ended ok. */
  ok: number;
  send_lag_p99_ms: number | null;
  send_lag_max_ms: number | null;
}

/** Accumulates a schedule's windows as its requests end. */
export class ScheduleWindows {
  readonly #due: number[] = [];
  readonly #sent: number[] = [];
  readonly #ok: number[] = [];
  readonly #lags: number[][] = [];

  /** @param windowS window length, s (1: per second) */
  constructor(readonly windowS = 1) {
    if (!(windowS > 0)) throw new RangeError(`window must be > 0 s, got ${windowS}`);
  }

  /** Counts a scheduled arrival (every one of the schedule, sent or not). */
  schedule(offsetMs: number): void {
    this.#bump(this.#due, this.#at(offsetMs));
  }

  /**
   * Adds a request that was sent: its offset on the schedule, its send lag (ms, null if unknown)
   * and whether it ended ok.
   */
  add(offsetMs: number, sendLagMs: number | null, ok: boolean): void {
    const w = this.#at(offsetMs);
    if (sendLagMs !== null) {
      this.#bump(this.#sent, this.#at(offsetMs + sendLagMs));
      (this.#lags[w] ??= []).push(sendLagMs);
    }
    if (ok) this.#bump(this.#ok, w);
  }

  /** Every window from the first to the last that holds anything. */
  windows(): ScheduleWindow[] {
    const n = Math.max(this.#due.length, this.#sent.length, this.#ok.length, this.#lags.length);
    const out: ScheduleWindow[] = [];
    for (let w = 0; w < n; w++) {
      const lags = this.#lags[w] ?? [];
      out.push({
        t_s: Number((w * this.windowS).toFixed(6)),
        trace_rps: (this.#due[w] ?? 0) / this.windowS,
        sent_rps: (this.#sent[w] ?? 0) / this.windowS,
        ok: this.#ok[w] ?? 0,
        send_lag_p99_ms: nearestRank(lags, 99),
        send_lag_max_ms: lags.length ? Math.max(...lags) : null,
      });
    }
    return out;
  }

  #at(ms: number): number {
    return Math.max(0, Math.floor(ms / 1000 / this.windowS));
  }

  #bump(a: number[], w: number): void {
    while (a.length <= w) a.push(0);
    a[w]++;
  }
}
