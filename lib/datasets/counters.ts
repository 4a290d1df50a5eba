/**
 * Ready-made counters for callers that have no server to ask: words (the mock's pseudo-tokens,
 * approximate on a real model) or a local tokenizer's count. `ik prompts build` makes the
 * server-backed one (--tokenize-via) in lib/commands/prompts_build.ts.
 * @module
 */
import { pseudoTokens } from "../prompts/synth.ts";
import type { DatasetCounter } from "./types.ts";

/** Tokens as words: a token is a run of non-whitespace (as `ik mock` counts). */
export function wordCounter(): DatasetCounter {
  const count = (t: string) => Promise.resolve(pseudoTokens(t));
  return { method: "words", request: count, text: count };
}

/** A local tokenizer's count of the message text (no chat template), for both request and text. */
export function tokenizerCounter(count: (text: string) => number): DatasetCounter {
  const c = (t: string) => Promise.resolve(count(t));
  return { method: "tokenizer", request: c, text: c };
}
