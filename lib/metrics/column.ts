/**
 * A growable column of numbers in typed arrays (8 bytes a value): how a load level keeps every
 * TTFT, TPOT, e2e and ITL for exact nearest-rank percentiles without keeping request objects.
 *
 * Up to {@link CHUNK_VALUES} values it is one array that doubles; past that it grows a chunk at a
 * time, so a long level holds its values plus at most one chunk (a doubling array holds up to twice
 * its values, and three times while it copies into the next size: a level's 1.4 million gaps
 * after 200,000 requests of 8 tokens were 16.8 MB of capacity and a 25 MB moment, for 11 MB).
 */
import { nearestRankSorted } from "../stats/mod.ts";

/** Values per chunk once a column is past one chunk (256 KB). */
export const CHUNK_VALUES = 1 << 15;

/** Growable Float64 storage. */
export class Column {
  /** Full chunks, in push order. */
  #full: Float64Array[] = [];
  /** Values in the full chunks. */
  #inFull = 0;
  /** The chunk being filled. */
  #cur: Float64Array;
  /** Values held. */
  length = 0;

  /** @param initial capacity to start with */
  constructor(initial = 256) {
    this.#cur = new Float64Array(Math.min(CHUNK_VALUES, Math.max(1, initial)));
  }

  /** Appends one value. */
  push(v: number): void {
    let i = this.length - this.#inFull;
    if (i === this.#cur.length) i = this.#room();
    this.#cur[i] = v;
    this.length++;
  }

  /** Appends many values. */
  pushAll(vs: ArrayLike<number>): void {
    for (let j = 0; j < vs.length;) {
      let i = this.length - this.#inFull;
      if (i === this.#cur.length) i = this.#room();
      const n = Math.min(vs.length - j, this.#cur.length - i);
      for (let k = 0; k < n; k++) this.#cur[i + k] = vs[j + k];
      j += n;
      this.length += n;
    }
  }

  /** A sorted copy of the values. */
  sorted(): Float64Array {
    return this.#gather().sort();
  }

  /**
   * The values sorted where they are (no copy while they fit one chunk; past that they are gathered
   * into one array first, and the chunks let go), as a view valid until the next push: for a column
   * whose order means nothing, as a level's inter-token gaps.
   */
  sortedInPlace(): Float64Array {
    if (this.#full.length !== 0) {
      this.#cur = this.#gather();
      this.#full = [];
      this.#inFull = 0;
    }
    return this.#cur.subarray(0, this.length).sort();
  }

  /** The values as a plain array (for small columns and tests). */
  toArray(): number[] {
    return Array.from(this.#gather());
  }

  /** The values in push order, in one new array. */
  #gather(): Float64Array {
    const out = new Float64Array(this.length);
    let at = 0;
    for (const c of this.#full) {
      out.set(c, at);
      at += c.length;
    }
    out.set(this.#cur.subarray(0, this.length - at), at);
    return out;
  }

  /** Makes room for the next value (the current chunk is full); returns its index in #cur. */
  #room(): number {
    const cur = this.#cur;
    if (cur.length < CHUNK_VALUES) {
      const next = new Float64Array(Math.min(CHUNK_VALUES, cur.length * 2));
      next.set(cur);
      this.#cur = next;
      return cur.length;
    }
    this.#full.push(cur);
    this.#inFull += cur.length;
    this.#cur = new Float64Array(CHUNK_VALUES);
    return 0;
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
