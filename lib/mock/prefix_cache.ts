/**
 * The mock's prefix cache (MOCK.md "Prefix cache"): an LRU of 16-token blocks, each keyed by a
 * hash of the whole prompt prefix up to and including it, so a block is only ever shared by
 * prompts that agree on every token before it. A prompt's cached tokens are its longest prefix
 * of whole blocks already held; its blocks are then held (refreshed), at most the capacity.
 *
 * Cost per prompt: one pass over its tokens' characters to hash them, then one Map operation
 * per block. Pure: no clock, no I/O.
 * @module
 */
import { FNV_OFFSET_BASIS, FNV_PRIME } from "./prng.ts";

/** Pseudo-tokens per cache block. */
export const BLOCK_TOKENS = 16;

const TWO_POW_32 = 0x1_0000_0000;

/**
 * The keys of a prompt's whole blocks, in order: key k hashes tokens 0 … 16·(k+1) − 1, every
 * token before the block included, so equal keys mean equal prefixes (up to a 53-bit hash). A
 * partial last block has no key: it is never cached.
 * @param tokens the prompt's pseudo-tokens (runs of non-whitespace), overhead tokens included
 */
export function blockKeys(tokens: readonly string[]): number[] {
  const keys: number[] = [];
  const whole = tokens.length - (tokens.length % BLOCK_TOKENS);
  // Two independent 32-bit FNV-1a streams over the running prefix; a space (never inside a
  // pseudo-token) ends each token, so token boundaries are part of what is hashed.
  let a = FNV_OFFSET_BASIS;
  let b = 0x050c5d1f;
  for (let i = 0; i < whole; i++) {
    const t = tokens[i];
    for (let j = 0; j < t.length; j++) {
      const c = t.charCodeAt(j);
      a = Math.imul(a ^ c, FNV_PRIME);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    a = Math.imul(a ^ 0x20, FNV_PRIME);
    b = Math.imul(b ^ 0x20, 0x5bd1e995);
    b ^= b >>> 15;
    if ((i + 1) % BLOCK_TOKENS === 0) keys.push((b >>> 11) * TWO_POW_32 + (a >>> 0));
  }
  return keys;
}

/**
 * An LRU of blocks holding at most `floor(capacityTokens / 16)` of them. A prompt's blocks are
 * refreshed last block first, so its first block is the most recent: a block is never evicted
 * before a block that extends it, and what is held is always a set of whole prefixes.
 */
export class PrefixCache {
  readonly #capacityBlocks: number;
  /** Held block keys, least recently used first (a Map keeps insertion order). */
  readonly #blocks = new Map<number, true>();

  /** @param capacityTokens `--prefix-cache-tokens`: the most tokens held in all (0: nothing is held) */
  constructor(capacityTokens: number) {
    this.#capacityBlocks = Math.max(0, Math.floor(capacityTokens / BLOCK_TOKENS));
  }

  /** Tokens held now (whole blocks × 16). */
  get heldTokens(): number {
    return this.#blocks.size * BLOCK_TOKENS;
  }

  /**
   * The cached tokens of a prompt with these block keys (see {@link blockKeys}): 16 × the number
   * of leading blocks held. Changes nothing.
   */
  lookup(keys: readonly number[]): number {
    let n = 0;
    while (n < keys.length && this.#blocks.has(keys[n])) n++;
    return n * BLOCK_TOKENS;
  }

  /** Holds a prompt's blocks as the most recently used, then evicts the least recently used past the capacity. */
  insert(keys: readonly number[]): void {
    if (this.#capacityBlocks === 0) return;
    for (let i = keys.length - 1; i >= 0; i--) {
      this.#blocks.delete(keys[i]);
      this.#blocks.set(keys[i], true);
    }
    for (const oldest of this.#blocks.keys()) {
      if (this.#blocks.size <= this.#capacityBlocks) break;
      this.#blocks.delete(oldest);
    }
  }

  /** One request: its cached tokens ({@link lookup}), then its blocks held ({@link insert}). */
  use(keys: readonly number[]): number {
    const cached = this.lookup(keys);
    this.insert(keys);
    return cached;
  }
}
