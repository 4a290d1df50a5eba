/**
 * A growable column of numbers in typed arrays: how a load level keeps every TTFT, TPOT, e2e and
 * ITL for exact nearest-rank percentiles without keeping request objects. Doubles (8 bytes a
 * value) by default; a column made with `"f32"` keeps 32-bit floats (4 bytes): its percentiles are
 * exact over the values rounded to float32, a relative error under 6e-8 (under 0.1 µs for a value
 * under 1.6 s), and are read out as the shortest decimal that is the same float32 (a gap of 50.1
 * reads 50.1, not 50.099998474121094). A level's ITL column is one (see level.ts): one value per
 * token gap, the column that grows with every token, so the one that sets a long level's memory.
 *
 * Up to {@link CHUNK_VALUES} values it is one array that doubles; past that it grows a chunk at a
 * time, so a long level holds its values plus at most one chunk (a doubling array holds up to twice
 * its values, and three times while it copies into the next size: a level's 1.4 million gaps
 * after 200,000 requests of 8 tokens were 16.8 MB of capacity and a 25 MB moment, for 11 MB).
 *
 * A column given a {@link ChunkSpill} parks each full chunk there (a load level's is an unlinked
 * file beside its journal) and refills the same array, so it holds one chunk however long the
 * level runs, and reads the parked chunks back only when its percentiles are asked for. Values held
 * in memory cost more than their bytes: the runtime counts ArrayBuffer memory into the heap its
 * collector lets grow (bench:memory, 200,000 requests at 2,000 req/s: the worker's lowest RSS grew
 * 86.9 → 96.4 MB with the columns in memory, 87.0 → 86.7 MB without them). A chunk the spill
 * cannot take (a full disk) stays in memory, as without one.
 */
import { nearestRankIndex, nearestRankSorted } from "../stats/mod.ts";

/** Values per chunk once a column is past one chunk (256 KB). */
export const CHUNK_VALUES = 1 << 15;

/** The element type of a column: doubles, or 32-bit floats for a column whose values allow it. */
export type ColumnKind = "f64" | "f32";

/** A column's storage: one typed array per chunk. */
type Run = Float64Array | Float32Array;

/** Where a column parks its full chunks, outside the JavaScript heap, and reads them back. */
export interface ChunkSpill {
  /**
   * Parks a full chunk's bytes (copied before it returns: the caller refills the array); returns
   * a handle to read them back by, or null when it could not (the chunk then stays in memory).
   */
  park(bytes: Uint8Array): number | null;
  /** Reads back the bytes parked under `handle` into `into` (exactly its length); throws when it cannot. */
  read(handle: number, into: Uint8Array): void;
}

/** A full chunk: in memory, or parked in the column's spill under a handle. */
type Chunk = Run | { handle: number; length: number };

/** Growable Float64 (or Float32) storage. */
export class Column {
  /** Full chunks, in push order. */
  #full: Chunk[] = [];
  /** Values in the full chunks. */
  #inFull = 0;
  /** The chunk being filled. */
  #cur: Run;
  /** 32-bit floats, read out as their shortest decimals ({@link shortestF32}). */
  readonly #f32: boolean;
  /** Where full chunks are parked, or null (all kept in memory). */
  readonly #spill: ChunkSpill | null;
  /** Values held. */
  length = 0;

  /**
   * @param initial capacity to start with
   * @param kind "f64" (the default) or "f32" (half the memory; values rounded to float32)
   * @param spill where full chunks are parked (default: none, every value stays in memory)
   */
  constructor(initial = 256, kind: ColumnKind = "f64", spill: ChunkSpill | null = null) {
    this.#f32 = kind === "f32";
    this.#spill = spill;
    this.#cur = this.#make(Math.min(CHUNK_VALUES, Math.max(1, initial)));
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

  /** A sorted copy of the values (as doubles). */
  sorted(): Float64Array {
    const s = this.#gather().sort();
    // The mapping keeps the order: each float32 has its own shortest decimal.
    if (this.#f32) for (let i = 0; i < s.length; i++) s[i] = shortestF32(s[i]);
    return s;
  }

  /**
   * Nearest-rank p50/p90/p95/p99 and the count. A 32-bit column (a level's inter-token gaps, the
   * column that grows with every token) finds them with no copy and no sort, its order kept
   * ({@link #radixPercentiles}): a level's 1.4 million gaps after 200,000 requests of 8 tokens need no
   * second 5.6 MB at the level's end. A column of doubles reads them from a sorted copy.
   */
  percentilesInPlace(): Percentiles {
    return this.#f32 ? this.#radixPercentiles() : percentilesOfSorted(this.sorted());
  }

  /**
   * A 32-bit column's nearest-rank p50/p90/p95/p99, exact, by two counting passes over the values'
   * order-preserving 32-bit keys (the high 16 bits, then the low 16 bits within the bins the ranks
   * fall in): no sort and no copy of the values, so the push order stays and a parked chunk is
   * read one at a time into one buffer (a long level's 1.4 million gaps would otherwise be read
   * back whole, 5.6 MB, at its end).
   */
  #radixPercentiles(): Percentiles {
    const n = this.length;
    if (n === 0) return { n: 0, p50: null, p90: null, p95: null, p99: null };
    const ps = [50, 90, 95, 99] as const;
    const ranks = ps.map((p) => nearestRankIndex(n, p));
    const high = new Uint32Array(1 << 16);
    this.#eachKeys((keys) => {
      for (let i = 0; i < keys.length; i++) high[keyOf32(keys[i]) >>> 16]++;
    });
    // The bin each rank falls in, and the rank within it.
    const where = ranks.map((k) => {
      let bin = 0, below = 0;
      while (below + high[bin] <= k) below += high[bin++];
      return { bin, within: k - below };
    });
    // Each bin a rank falls in gets a count of its low 16 bits (slot: which count, -1 for none).
    const slot = new Int8Array(1 << 16).fill(-1), low: Uint32Array[] = [];
    for (const w of where) if (slot[w.bin] < 0) slot[w.bin] = low.push(new Uint32Array(1 << 16)) - 1;
    this.#eachKeys((keys) => {
      for (let i = 0; i < keys.length; i++) {
        const key = keyOf32(keys[i]), at = slot[key >>> 16];
        if (at >= 0) low[at][key & 0xffff]++;
      }
    });
    const out = where.map(({ bin, within }) => {
      const h = low[slot[bin]];
      let lo = 0, below = 0;
      while (below + h[lo] <= within) below += h[lo++];
      return shortestF32(valueOf32(((bin << 16) | lo) >>> 0));
    });
    return { n, p50: out[0], p90: out[1], p95: out[2], p99: out[3] };
  }

  /** Calls `fn` with each chunk's values as their raw 32-bit patterns (a 32-bit column), parked ones read back one at a time. */
  #eachKeys(fn: (bits: Uint32Array) => void): void {
    let scratch: Float32Array | null = null;
    for (const c of this.#full) {
      let run: Run;
      if ("handle" in c) {
        if (scratch === null || scratch.length < c.length) scratch = new Float32Array(c.length);
        run = scratch.subarray(0, c.length);
        this.#spill!.read(c.handle, new Uint8Array(run.buffer, run.byteOffset, run.byteLength));
      } else run = c;
      fn(new Uint32Array(run.buffer, run.byteOffset, run.length));
    }
    const cur = this.#cur.subarray(0, this.length - this.#inFull);
    fn(new Uint32Array(cur.buffer, cur.byteOffset, cur.length));
  }

  /** The values as a plain array (for small columns and tests). */
  toArray(): number[] {
    return Array.from(this.#gather());
  }

  /** The values in push order, in one new array of doubles. */
  #gather(): Float64Array {
    const out = new Float64Array(this.length);
    let at = 0;
    for (const c of this.#full) {
      if ("handle" in c && !this.#f32) this.#spill!.read(c.handle, new Uint8Array(out.buffer, at * 8, c.length * 8));
      else out.set(this.#inMemory(c), at);
      at += c.length;
    }
    out.set(this.#cur.subarray(0, this.length - at), at);
    return out;
  }

  /** A full chunk as an array: itself, or a new array read back from the spill. */
  #inMemory(c: Chunk): Run {
    if (!("handle" in c)) return c;
    const run = this.#make(c.length);
    this.#spill!.read(c.handle, new Uint8Array(run.buffer, run.byteOffset, run.byteLength));
    return run;
  }

  /** A new chunk of `n` values of this column's type. */
  #make(n: number): Run {
    return this.#f32 ? new Float32Array(n) : new Float64Array(n);
  }

  /** Makes room for the next value (the current chunk is full); returns its index in #cur. */
  #room(): number {
    const cur = this.#cur;
    if (cur.length < CHUNK_VALUES) {
      const next = this.#make(Math.min(CHUNK_VALUES, cur.length * 2));
      next.set(cur);
      this.#cur = next;
      return cur.length;
    }
    const handle = this.#spill ? this.#spill.park(new Uint8Array(cur.buffer, cur.byteOffset, cur.byteLength)) : null;
    this.#inFull += cur.length;
    if (handle !== null) {
      // Parked: the same array takes the next chunk's values.
      this.#full.push({ handle, length: cur.length });
      return 0;
    }
    this.#full.push(cur);
    this.#cur = this.#make(CHUNK_VALUES);
    return 0;
  }
}

/** The shortest decimal that reads back as the float32 `v` (numpy prints a float32 so). */
export function shortestF32(v: number): number {
  if (!Number.isFinite(v) || v === 0) return v;
  // Nine significant digits always name a float32, so the loop returns by then.
  for (let digits = 1; digits <= 9; digits++) {
    const x = Number(v.toPrecision(digits));
    if (Math.fround(x) === v) return x;
  }
  return v; // not a float32 at all: left as it is
}

// A float32's bits as an unsigned key that sorts as the numbers do (negatives flipped, the sign
// bit set on the rest; -0 before +0, as a typed array's sort puts them).
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

function keyOf32(bits: number): number {
  return (bits & 0x80000000) !== 0 ? ~bits >>> 0 : (bits | 0x80000000) >>> 0;
}

function valueOf32(key: number): number {
  U32[0] = (key & 0x80000000) !== 0 ? (key ^ 0x80000000) >>> 0 : ~key >>> 0;
  return F32[0];
}

/** Nearest-rank percentile of an ascending typed array, or null when empty. */
export function rankSorted(sorted: ArrayLike<number>, p: number): number | null {
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
export function percentilesOfSorted(s: ArrayLike<number>): Percentiles {
  return { n: s.length, p50: rankSorted(s, 50), p90: rankSorted(s, 90), p95: rankSorted(s, 95), p99: rankSorted(s, 99) };
}
