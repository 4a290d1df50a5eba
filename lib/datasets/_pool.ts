/**
 * A seeded sample kept while a file streams past: each item gets a key from the seed and its
 * position, and the pool keeps the `size` smallest keys (a max-heap). Taking items in key order is
 * a seeded shuffle, so "the first N that pass the filters, in key order" is the same set whatever
 * the pool's size, and the same seed always picks the same items.
 * @module
 */
import { SeededRng } from "../stats/mod.ts";

/** The key of item `index` under `seed`: uniform in [0, 1). */
export function sampleKey(seed: number, index: number): number {
  return new SeededRng(seed, index, 0x5eed).next();
}

interface Entry<T> {
  key: number;
  index: number;
  item: T;
}

const before = <T>(a: Entry<T>, b: Entry<T>) => a.key < b.key || (a.key === b.key && a.index < b.index);

/** The `size` items with the smallest keys (size 0 = keep all). */
export class SeededPool<T> {
  readonly #size: number;
  readonly #seed: number;
  readonly #heap: Entry<T>[] = [];
  /** Items offered and not kept (the pool was full and their key was larger). */
  evicted = 0;

  /** @param size the most items kept (0 = all); @param seed the sampling seed */
  constructor(size: number, seed: number) {
    this.#size = size;
    this.#seed = seed;
  }

  /** Offers item `index`; kept when its key is among the smallest. */
  offer(index: number, item: T): void {
    const e = { key: sampleKey(this.#seed, index), index, item };
    const h = this.#heap;
    if (this.#size === 0 || h.length < this.#size) {
      h.push(e);
      if (this.#size !== 0) this.#up(h.length - 1);
      return;
    }
    this.evicted++;
    if (!before(e, h[0])) return;
    h[0] = e;
    this.#down(0);
  }

  /** The kept items in key order (a seeded shuffle), with their positions. */
  sorted(): { index: number; item: T }[] {
    return [...this.#heap].sort((a, b) => (before(a, b) ? -1 : 1)).map(({ index, item }) => ({ index, item }));
  }

  // Max-heap on key: the root is the largest kept key, the first to go.
  #up(i: number): void {
    const h = this.#heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[p], h[i])) return;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  #down(i: number): void {
    const h = this.#heap;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < h.length && before(h[m], h[l])) m = l;
      if (r < h.length && before(h[m], h[r])) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i], h[m]];
      i = m;
    }
  }
}
