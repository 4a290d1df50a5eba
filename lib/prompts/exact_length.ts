/**
 * Text of an exact token length under a counter that may be remote (a server's /tokenize): a
 * search on the number of words from a seeded word stream, then single-token filler words for the
 * last few tokens. Counting is the expensive part, so the search is secant-guided from a per-bucket
 * estimate (tokens per word, fixed overhead) and bounded: at most `maxCalls` counts per text.
 * @module
 */
import type { SeededRng } from "../stats/mod.ts";

/** Word source for synthetic text. Short, common words: one or two tokens each in BPE and SentencePiece vocabularies. */
export const SYNTH_VOCAB: readonly string[] = (
  "time person year way day thing man world life hand part child eye woman place work week case point government " +
  "company number group problem fact river mountain window garden planet orbit silver copper harbor lantern meadow " +
  "signal vector kernel memory queue engine latency request answer stream server batch cache prompt token model " +
  "quiet bright early late simple careful rapid gentle distant ancient modern narrow broad steady sudden"
).split(" ");

/** The filler for the last tokens: a word that is one token after a space in common vocabularies (and in the mock). */
export const FILLER = "a";

/** What a bucket learns from its first texts, so later searches start close. */
export interface LengthEstimate {
  /** Tokens counted for zero words (template, prefix). */
  base: number;
  /** Tokens per added word. */
  perWord: number;
}

/** The outcome of one search. */
export interface FitResult {
  text: string;
  /** Tokens as the counter counted the final text. */
  tokens: number;
  /** Counts spent. */
  calls: number;
  exact: boolean;
}

/**
 * Finds words whose text, passed through `build`, counts exactly `target`.
 * @param build turns the chosen words into the text that is counted (adds a shared prefix, wraps it in a request)
 * @param count the counter (async: a server's /tokenize)
 * @param target tokens wanted
 * @param rng the word stream's seeded source
 * @param est the bucket's estimate, updated in place from what this search saw
 * @param maxCalls the most counts spent (≥ 2)
 */
export async function fitWords(
  build: (words: readonly string[]) => string,
  count: (text: string) => Promise<number>,
  target: number,
  rng: SeededRng,
  est: LengthEstimate,
  maxCalls = 12,
): Promise<FitResult> {
  const words: string[] = [];
  const wordsUpTo = (n: number) => {
    while (words.length < n) words.push(SYNTH_VOCAB[rng.int(SYNTH_VOCAB.length)]);
    return words.slice(0, n);
  };
  let calls = 0;
  const measure = async (ws: readonly string[]) => {
    calls++;
    return await count(build(ws));
  };
  // lo: most words known to count at or under the target; hi: fewest known to count over it.
  let lo = { n: 0, c: est.base };
  let hi: { n: number; c: number } | null = null;
  const perWord = Math.max(0.25, est.perWord);
  let n = Math.max(1, Math.round((target - est.base) / perWord));
  while (calls < maxCalls - 1) {
    const c = await measure(wordsUpTo(n));
    if (c === target) {
      if (n > 0) est.perWord = (c - est.base) / n;
      return { text: build(wordsUpTo(n)), tokens: c, calls, exact: true };
    }
    if (c < target) {
      if (n >= lo.n) lo = { n, c };
    } else if (!hi || n < hi.n) hi = { n, c };
    if (hi && hi.n - lo.n <= 1) break;
    // Secant between the brackets when both are known; else step by the estimate.
    const slope = hi && hi.n > lo.n ? (hi.c - lo.c) / (hi.n - lo.n) : perWordFrom(lo, est);
    let next = lo.n + Math.round((target - lo.c) / Math.max(0.25, slope));
    if (hi) next = Math.min(Math.max(next, lo.n + 1), hi.n - 1);
    else next = Math.max(next, lo.n + 1);
    if (next === n) next = c < target ? n + 1 : n - 1;
    n = next;
  }
  if (lo.n > 0) est.perWord = (lo.c - est.base) / lo.n;
  // The last few tokens: fillers after the longest prefix at or under the target.
  const head = wordsUpTo(lo.n);
  let gap = target - lo.c;
  let best: FitResult = { text: build(head), tokens: lo.c, calls, exact: gap === 0 };
  while (gap > 0 && calls < maxCalls) {
    const ws = [...head, ...Array(gap).fill(FILLER)];
    const c = await measure(ws);
    if (Math.abs(target - c) < Math.abs(target - best.tokens)) best = { text: build(ws), tokens: c, calls, exact: c === target };
    if (c === target) break;
    const next = gap + (target - c);
    if (next <= 0 || next === gap) break;
    gap = next;
  }
  best.calls = calls;
  return best;
}

function perWordFrom(lo: { n: number; c: number }, est: LengthEstimate): number {
  return lo.n > 0 && lo.c > est.base ? (lo.c - est.base) / lo.n : est.perWord;
}
