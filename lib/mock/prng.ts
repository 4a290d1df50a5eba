/**
 * Seeded randomness for the mock: a string hash, an integer mixer and a small PRNG.
 * Everything the mock varies (output words, jitter, draft acceptance, `~P` faults) goes through
 * here, so one `--seed` reproduces a run exactly. Never Math.random.
 * @module
 */

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Murmur3's 32-bit finaliser: spreads every input bit over the whole word. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Mixes any number of integers (each may exceed 32 bits, e.g. a large `--seed`) into one
 * unsigned 32-bit value. Order matters: `mix(a, b) !== mix(b, a)` in general.
 */
export function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    const lo = p >>> 0;
    const hi = Math.floor(Math.abs(p) / 0x1_0000_0000) >>> 0;
    h = fmix32(h ^ lo);
    h = fmix32((h + Math.imul(hi, 0x27d4eb2f) + 0x165667b1) >>> 0);
  }
  return h;
}

/** A uniform number in [0, 1) derived from the given integers, without keeping state. */
export function uniformOf(...parts: number[]): number {
  return mix(...parts) / 0x1_0000_0000;
}

/** A seeded pseudo-random stream (mulberry32). */
export class Rng {
  #state: number;

  /** @param seed any integers; the same ones always give the same stream */
  constructor(...seed: number[]) {
    this.#state = mix(...seed);
  }

  /** The next uniform number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  }

  /** A uniform number in [-amplitude, +amplitude]. */
  symmetric(amplitude: number): number {
    return amplitude === 0 ? 0 : (this.next() * 2 - 1) * amplitude;
  }
}
