/**
 * How much of a prompt set's text its prompts share at their start. A server with prefix caching
 * (vLLM's automatic prefix caching, SGLang's radix cache, llama.cpp's slot cache) serves a prompt's
 * leading tokens from its cache when an earlier request began the same way, whatever tag ik puts on
 * repeats of one prompt: a "cold prefix cache" run of prompts that share a long beginning still
 * measures cache hits for that part. Pure; compares the messages as the server reads them (each
 * message's role and text, in order).
 * @module
 */
import type { Prompt } from "./prompt.ts";

/** vLLM's KV block is 16 tokens, about 64 characters of English: shorter shared starts are not cached. */
export const SHARED_PREFIX_MIN_CHARS = 64;

/** Characters of each prompt compared: enough to tell a shared start, cheap for sets of 10^5 long prompts. */
export const SHARED_PREFIX_SCAN_CHARS = 1024;

/** What the set shares. */
export interface SharedPrefix {
  /** Prompts whose start matches another prompt's for at least the minimum. */
  prompts: number;
  /** Of this many prompts (distinct ids). */
  of: number;
  /** The longest shared start, characters (at most {@link SHARED_PREFIX_SCAN_CHARS}). */
  maxChars: number;
  /** True when the longest reached the scanned length (it may be longer). */
  capped: boolean;
}

function textOf(p: Prompt): string {
  let s = "";
  for (const m of p.messages) {
    s += `${m.role}\u0000${typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? null)}\u0000`;
    if (s.length >= SHARED_PREFIX_SCAN_CHARS) break;
  }
  return s.slice(0, SHARED_PREFIX_SCAN_CHARS);
}

function common(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * The prompts that share at least `minChars` leading characters with another (the longest match
 * of any string is with a neighbour in sorted order), or null when none do.
 * @example sharedPrefix([a, b]) // { prompts: 2, of: 2, maxChars: 940 } when a and b share 940 characters
 */
export function sharedPrefix(prompts: readonly Prompt[], minChars = SHARED_PREFIX_MIN_CHARS): SharedPrefix | null {
  const texts = [...new Map(prompts.map((p) => [p.id, textOf(p)])).values()].sort();
  let count = 0, max = 0;
  for (let i = 0; i < texts.length; i++) {
    const before = i > 0 ? common(texts[i - 1], texts[i]) : 0;
    const after = i + 1 < texts.length ? common(texts[i], texts[i + 1]) : 0;
    const best = Math.max(before, after);
    if (best >= minChars) count++;
    max = Math.max(max, best);
  }
  return count ? { prompts: count, of: texts.length, maxChars: max, capped: max >= SHARED_PREFIX_SCAN_CHARS } : null;
}

/** The record's line for a set whose prompts share their start, or null. */
export function sharedPrefixNote(prompts: readonly Prompt[]): string | null {
  const s = sharedPrefix(prompts);
  if (!s) return null;
  return `prefix cache: ${s.prompts} of the ${s.of} prompts begin like another prompt of the set for at least ${SHARED_PREFIX_MIN_CHARS} characters (up to ${s.capped ? `${s.maxChars} or more` : s.maxChars}): ` +
    "a server with prefix caching can serve that shared start from its cache whatever ik tags, so their TTFT can be below a cold prefill (ik's \"cold\" means that no prompt repeats an earlier send)";
}
