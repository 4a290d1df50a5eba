/**
 * A growable column of numbers in a typed array (8 bytes a value): how a load level keeps every
 * TTFT, TPOT, e2e and ITL for exact nearest-rank percentiles without keeping request objects.
 */
import { nearestRankSorted } from "../stats/mod.ts";

/** Growable Float64 storage. */
export class Column {
  #data: Float64Array;
  /** Values held. */
  length = 0;

  /** @param initial capacity to start with */
  constructor(initial = 256) {
    this.#data = new Float64Array(Math.max(1, initial));
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.length === this.#data.length) this.#grow(this.length + 1);
    this.#data[this.length++] = v;
  }

  /** Appends many values. */
  pushAll(vs: ArrayLike<number>): void {
    if (this.length + vs.length > this.#data.length) this.#grow(this.length + vs.length);
    for (let i = 0; i < vs.length; i++) this.#data[this.length++] = vs[i];
  }

  /** A sorted copy of the values. */
  sorted(): Float64Array {
    return this.#data.slice(0, this.length).sort();
  }

  /**
   * The values sorted where they are (no copy), as a view valid until the next push: for a column
   * whose order means nothing, as a level's inter-token gaps (1.4 million of them, 11 MB, after
   * 200,000 requests of 8 tokens: a sorted copy would double that at the level's end).
   */
  sortedInPlace(): Float64Array {
    return this.#data.subarray(0, this.length).sort();
  }

  /** The values as a plain array (for small columns and tests). */
  toArray(): number[] {
    return Array.from(this.#data.subarray(0, this.length));
  }

  #grow(need: number): void {
    let cap = this.#data.length * 2;
    while (cap < need) cap *= 2;
    const next = new Float64Array(cap);
    next.set(this.#data.subarray(0, this.length));
    this.#data = next;
  }
}

/** Nearest-rank percentile of an ascending typed array, or null when empty. */
export function rankSorted(sorted: Float64Array, p: number): number | null {
  return nearestRankSorted(sorted, p);
}

/** Nearest-rank p50/p90/p95/p99 and the count. */
export interface Percentiles {
  n: number;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
}

/** p50/p90/p95/p99 and the count of a column. */
export function percentiles(c: Column): Percentiles {
  return percentilesOfSorted(c.sorted());
}

/** p50/p90/p95/p99 and the count of values already sorted ascending. */
export function percentilesOfSorted(s: Float64Array): Percentiles {
  return { n: s.length, p50: rankSorted(s, 50), p90: rankSorted(s, 90), p95: rankSorted(s, 95), p99: rankSorted(s, 99) };
}
