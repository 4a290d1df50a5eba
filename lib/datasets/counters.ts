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

/**
 * A counter of whole requests (a server's /tokenize: what usage.prompt_tokens will say, template
 * included) as the datasets want it: requests as counted, and bare text (ShareGPT's length
 * filters and answer lengths, sonnet's line average) as that minus what an empty request counts.
 */
export function requestCounter(method: string, request: (text: string) => Promise<number>): DatasetCounter {
  let floor: Promise<number> | null = null;
  return {
    method,
    request,
    async text(t) {
      floor ??= request("");
      const [n, f] = await Promise.all([request(t), floor]);
      return Math.max(0, n - f);
    },
  };
}
