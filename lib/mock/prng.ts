/**
 * Seeded randomness for the mock: a string hash, an integer mixer and a small PRNG.
 * Everything the mock varies (output words, jitter, draft acceptance, `~P` faults) goes through
 * here, so one `--seed` reproduces a run exactly. Never Math.random.
 * @module
 */
import { mixSeed, SeededRng } from "../stats/prng.ts";

/** FNV-1a's 32-bit offset basis: the hash of nothing. */
export const FNV_OFFSET_BASIS = 0x811c9dc5;
/** FNV-1a's 32-bit prime: each unit is xored in, then the hash multiplied by it. */
export const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function hashString(text: string): number {
  let h = FNV_OFFSET_BASIS;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/**
 * Mixes any number of integers (each may exceed 32 bits, e.g. a large `--seed`) into one
 * unsigned 32-bit value. Order matters: `mix(a, b) !== mix(b, a)` in general. The one mixer of
 * lib/stats, so the mock and the benchmarks seed the same way.
 */
export const mix: (...parts: number[]) => number = mixSeed;

/** A uniform number in [0, 1) derived from the given integers, without keeping state. */
export function uniformOf(...parts: number[]): number {
  return mixSeed(...parts) / 0x1_0000_0000;
}

/** A seeded pseudo-random stream (lib/stats' SeededRng), plus a symmetric draw for jitter. */
export class Rng extends SeededRng {
  /** A uniform number in [-amplitude, +amplitude]. */
  symmetric(amplitude: number): number {
    return amplitude === 0 ? 0 : (this.next() * 2 - 1) * amplitude;
  }
}
