/**
 * The per-request columns of token-event times and ids (see {@link EventLog}).
 * @module
 */

/** Rows a per-request column starts with when the caller gives no expected count. */
const INITIAL_ROWS = 128;
/**
 * The most rows an event log reserves up front from the caller's expected count: a request that
 * asks for 32k tokens and stops at 100 must not hold 256 KB per stream while it streams.
 */
export const MAX_RESERVED_EVENTS = 1024;

/**
 * Ticks per ms of an event log's times: 0.1 µs, the precision the outputs write event times in
 * (row.ts `eventTimings`: offsets from t_send to 1e-4 ms).
 */
export const TICKS_PER_MS = 1e4;
/**
 * Rows to reserve for a request that may bring `expected` (its max_tokens) plus `extra`, capped at
 * {@link MAX_RESERVED_EVENTS}; {@link INITIAL_ROWS} when the count is unknown.
 */
export function reservedRows(expected: number | null | undefined, extra = 0): number {
  return expected !== undefined && expected !== null && Number.isFinite(expected) && expected > 0
    ? Math.min(Math.ceil(expected) + extra, MAX_RESERVED_EVENTS)
    : INITIAL_ROWS;
}

/** The most ticks a 32-bit time holds: 429 s after the first event (a longer stream widens its column). */
const MAX_TICKS = 0xffffffff;

/**
 * A growable pair of columns: arrival time (ms) and streamed ids, one row per token event.
 *
 * Times are kept as 32-bit ticks of 0.1 µs after the first event (4 bytes a row instead of 8: a
 * column lives as long as its request, and at 1,000 streams each KB a stream holds is ~3 MB of peak
 * RSS, issue 21), read back as ms on the one clock; a time more than 429 s after the first (or
 * before it: an injected clock) widens the column to doubles once. Reserved for the events the
 * request asked for (its max_tokens, up to {@link MAX_RESERVED_EVENTS}), so a request of 256 tokens
 * allocates one 1 KB column instead of three (128, grown to 256, then a trimmed copy): every one is
 * promoted by the collector and freed only by a full collection. The ids column is made only when
 * events differ in how many ids they carry: a stream whose every event carries the same count
 * (none, or one id a token, as engines that stream ids send them) keeps that count and no column; a
 * column is one byte a row until an event carries more than 255 (then four), and
 * {@link idsPerEvent} widens it once, at the end.
 */
export class EventLog {
  /** Ticks after {@link t0} ({@link TICKS_PER_MS}), or ms on the clock once a time did not fit. */
  private times: Uint32Array | Float64Array;
  /** The first event's time (ms): where the ticks count from. */
  private t0 = 0;
  /** Ids per row, once rows differ; null while every row carries {@link same}. */
  private ids: Uint8Array | Uint32Array | null = null;
  /** The ids every row so far carries (while {@link ids} is null). */
  private same = 0;
  /** Rows written. */
  length = 0;

  /** @param expected events the request may bring (its max_tokens), if known */
  constructor(expected?: number | null) {
    this.times = new Uint32Array(reservedRows(expected, 1));
  }

  /** Bytes the columns hold now (their reservations, not only the rows written). */
  get bytesHeld(): number {
    return this.times.byteLength + (this.ids?.byteLength ?? 0);
  }

  /** Appends one token event. */
  push(tMs: number, nIds: number): void {
    if (this.length === this.times.length) this.grow();
    let times = this.times;
    if (times instanceof Uint32Array) {
      if (this.length === 0) this.t0 = tMs;
      const ticks = Math.round((tMs - this.t0) * TICKS_PER_MS);
      if (ticks >= 0 && ticks <= MAX_TICKS) times[this.length] = ticks;
      else (times = this.widened())[this.length] = tMs;
    } else times[this.length] = tMs;
    let ids = this.ids;
    if (ids === null) {
      if (this.length === 0) this.same = nIds;
      else if (nIds !== this.same) ids = this.column(Math.max(nIds, this.same));
    } else if (nIds > 255 && ids instanceof Uint8Array) {
      this.ids = ids = Uint32Array.from(ids);
    }
    if (ids !== null) ids[this.length] = nIds;
    this.length++;
  }

  /** The column the rows so far stand for (each {@link same}), wide enough for `most`. */
  private column(most: number): Uint8Array | Uint32Array {
    const ids = most > 255 ? new Uint32Array(this.times.length) : new Uint8Array(this.times.length);
    if (this.same !== 0) ids.fill(this.same, 0, this.length);
    return (this.ids = ids);
  }

  /** The column as ms on the clock (rows written so far; the rest zero). */
  private widened(): Float64Array {
    return (this.times = this.inMs(this.times.length));
  }

  /** The rows written, as ms on the clock, in a new column of `size` rows (the ticks column). */
  private inMs(size: number): Float64Array {
    const ticks = this.times, out = new Float64Array(size);
    for (let i = 0; i < this.length; i++) out[i] = this.t0 + ticks[i] / TICKS_PER_MS;
    return out;
  }

  /** The arrival times (ms on the clock), trimmed to length (the caller owns it; the log writes no more). */
  timesMs(): Float64Array {
    const t = this.times;
    return t instanceof Float64Array ? trimmed(t, this.length) : this.inMs(this.length);
  }

  /** Ids per event, trimmed to length (zeros where an event carried none; the caller owns it). */
  idsPerEvent(): Uint32Array {
    if (this.ids === null) {
      const out = new Uint32Array(this.length);
      return this.same === 0 ? out : out.fill(this.same);
    }
    return this.ids instanceof Uint32Array ? trimmed(this.ids, this.length) : Uint32Array.from(this.ids.subarray(0, this.length));
  }

  private grow(): void {
    const times = this.times instanceof Uint32Array ? new Uint32Array(this.times.length * 2) : new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
    if (this.ids !== null) {
      const ids = this.ids instanceof Uint8Array ? new Uint8Array(times.length) : new Uint32Array(times.length);
      ids.set(this.ids);
      this.ids = ids;
    }
  }
}

/** The first `n` values: a view when they fill at least half the column, else a copy (a view would keep the rest). */
export function trimmed<T extends Float64Array | Uint32Array>(col: T, n: number): T {
  if (n === col.length) return col;
  return (n * 2 >= col.length ? col.subarray(0, n) : col.slice(0, n)) as T;
}
