/**
 * A counter exported as several series (DP engines, ranks, models), summed over what they
 * counted between scrapes, series by series: a series that fell restarted (its increment is its
 * value, from zero), one that appeared counts from zero, one that vanished adds nothing. The sum
 * of the series alone would take one DP engine's restart for a fall of the whole sum.
 * @module
 */

/** Increments of a multi-series counter over successive scrapes. */
export class SeriesCounter {
  #last: Map<string, number> | null = null;
  #delta = 0;
  #scrapes = 0;

  /** One scrape's values, keyed by series (its labels). */
  add(series: ReadonlyMap<string, number>): void {
    const last = this.#last;
    if (last !== null) {
      for (const [k, v] of series) {
        if (!Number.isFinite(v)) continue;
        const before = last.get(k);
        this.#delta += before === undefined || !Number.isFinite(before) ? v : v >= before ? v - before : v;
      }
    }
    this.#last = new Map(series);
    this.#scrapes++;
  }

  /** Scrapes added. */
  get scrapes(): number {
    return this.#scrapes;
  }

  /** What was counted since the first scrape (to 1e-6); null before two scrapes. */
  get delta(): number | null {
    return this.#scrapes >= 2 ? Math.round(this.#delta * 1e6) / 1e6 : null;
  }
}

/**
 * What a counter's column of sums counted (to 1e-6), a drop read as a reset (from zero); NaN
 * entries skipped; null with fewer than two values. For a scrape that gives no series.
 */
export function columnDelta(col: Float64Array): number | null {
  let prev = NaN, delta = 0, values = 0;
  for (const v of col) {
    if (Number.isNaN(v)) continue;
    values++;
    if (!Number.isNaN(prev)) delta += v >= prev ? v - prev : v;
    prev = v;
  }
  return values >= 2 ? Math.round(delta * 1e6) / 1e6 : null;
}
