/**
 * A growable column of numbers in typed arrays (8 bytes a value): how a load level keeps every
 * TTFT, TPOT, e2e and ITL for exact nearest-rank percentiles without keeping request objects.
 *
 * Up to {@link CHUNK_VALUES} values it is one array that doubles; past that it grows a chunk at a
 * time, so a long level holds its values plus at most one chunk (a doubling array holds up to twice
 * its values, and three times while it copies into the next size: a level's 1.4 million gaps
 * after 200,000 requests of 8 tokens were 16.8 MB of capacity and a 25 MB moment, for 11 MB).
 */
import { nearestRankIndex, nearestRankSorted } from "../stats/mod.ts";

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
   * Nearest-rank p50/p90/p95/p99 and the count, found with no copy of the values: each chunk is
   * sorted where it is (the push order is lost: for a column whose order means nothing, as a
   * level's inter-token gaps) and each rank is found across the sorted chunks by a search over
   * the values. A level's 1.4 million gaps after 200,000 requests of 8 tokens need no second 11 MB
   * at the level's end.
   */
  percentilesInPlace(): Percentiles {
    const n = this.length;
    if (this.#full.length === 0) return percentilesOfSorted(this.#cur.subarray(0, n).sort());
    const runs = [...this.#full, this.#cur.subarray(0, n - this.#inFull)];
    for (const r of runs) r.sort();
    const at = (p: number) => kthOfSortedRuns(runs, nearestRankIndex(n, p));
    return { n, p50: at(50), p90: at(90), p95: at(95), p99: at(99) };
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

/** How many values of an ascending run are <= x. */
function countAtMost(run: Float64Array, x: number): number {
  let lo = 0, hi = run.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (run[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// A double's bits as an unsigned key that sorts as the numbers do (negatives flipped, the sign
// bit set on the rest), so that a binary search over keys walks the numbers in order.
const F64 = new Float64Array(1);
const U64 = new BigUint64Array(F64.buffer);
const SIGN = 1n << 63n;
const ALL = (1n << 64n) - 1n;

function keyOf(x: number): bigint {
  F64[0] = x;
  const b = U64[0];
  return (b & SIGN) !== 0n ? ~b & ALL : b | SIGN;
}

function valueOf(key: bigint): number {
  U64[0] = (key & SIGN) !== 0n ? key ^ SIGN : ~key & ALL;
  return F64[0];
}

/**
 * The k-th smallest value (0-based) of the union of ascending runs: the least v with at least k + 1
 * values <= v, found by a binary search over the doubles between the least and the greatest value
 * (at most 64 steps, each a binary search in every run); that least v is always one of the values.
 */
function kthOfSortedRuns(runs: Float64Array[], k: number): number {
  let lo = Infinity, hi = -Infinity;
  for (const r of runs) {
    if (r.length === 0) continue;
    if (r[0] < lo) lo = r[0];
    if (r[r.length - 1] > hi) hi = r[r.length - 1];
  }
  let a = keyOf(lo), b = keyOf(hi);
  while (a < b) {
    const mid = (a + b) >> 1n;
    let c = 0;
    const v = valueOf(mid);
    for (const r of runs) c += countAtMost(r, v);
    if (c >= k + 1) b = mid;
    else a = mid + 1n;
  }
  // + 0: a zero found through -0's key is the +0 the values hold.
  return valueOf(a) + 0;
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
