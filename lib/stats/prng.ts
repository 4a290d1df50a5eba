/**
 * Seeded randomness for everything that resamples or schedules (bootstrap, arrivals): one small,
 * fast, reproducible generator. The same seed gives the same stream on every runtime. Never
 * Math.random.
 * @module
 */

/** Murmur3's 32-bit finaliser. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Mixes integers (each may exceed 32 bits) into one unsigned 32-bit seed; order matters. */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    const lo = p >>> 0;
    const hi = Math.floor(Math.abs(p) / 0x1_0000_0000) >>> 0;
    h = fmix32(h ^ lo);
    h = fmix32((h + Math.imul(hi, 0x27d4eb2f) + 0x165667b1) >>> 0);
  }
  return h;
}

/**
 * A seeded pseudo-random stream (mulberry32 over a mixed seed).
 * @example const r = new SeededRng(42, 3); r.next(); r.int(10);
 */
export class SeededRng {
  #state: number;

  /** @param seed any integers (run seed, level index, …); the same ones give the same stream */
  constructor(...seed: number[]) {
    this.#state = mixSeed(...seed);
  }

  /** A uniform number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  }

  /** A uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A standard normal deviate (Box–Muller; one of the pair is dropped for simplicity). */
  normal(): number {
    let u = this.next();
    while (u === 0) u = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}
