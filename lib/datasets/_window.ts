/**
 * A trace's time window kept while its file streams past: the `size` rows that come first in time
 * (ties by position), as AIPerf's fixed schedule takes a window of a trace and never a random
 * subset of it, so a replay of N rows keeps the trace's own arrivals. The file need not be in time
 * order; memory stays within twice `size` rows.
 * @module
 */

/** Selection options a trace reader takes besides DatasetOptions. */
export interface TraceSelection {
  /** Keep the first `numPrompts` rows in time order (a time window) instead of a seeded sample. */
  timeWindow?: boolean;
}

/** The `size` earliest items (size 0 = keep all), with the pool's `offer`/`sorted` shape. */
export class WindowPool<T> {
  #kept: { index: number; item: T; t: number }[] = [];

  /** @param size the most rows kept (0 = all); @param timeOf a row's time */
  constructor(readonly size: number, readonly timeOf: (item: T) => number) {}

  /** Offers row `index`; kept while it is among the earliest. */
  offer(index: number, item: T): void {
    this.#kept.push({ index, item, t: this.timeOf(item) });
    if (this.size > 0 && this.#kept.length >= 2 * this.size) this.#trim();
  }

  /** The kept rows in time order (ties by position). */
  sorted(): { index: number; item: T }[] {
    this.#trim();
    return this.#kept.map(({ index, item }) => ({ index, item }));
  }

  #trim(): void {
    this.#kept.sort((a, b) => a.t - b.t || a.index - b.index);
    if (this.size > 0 && this.#kept.length > this.size) this.#kept.length = this.size;
  }
}
