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

/**
 * A local tokenizer's counts: a request is its message text (no chat template, no special tokens:
 * what `input_tokens` says under the `tokenizer` method); a bare text, where `countPrompt` is given,
 * with the special tokens the tokenizer adds (`len(tokenizer(text).input_ids)`, vLLM's count for
 * ShareGPT's filters and answer lengths and sonnet's line average), else as a request.
 */
export function tokenizerCounter(count: (text: string) => number, countPrompt: (text: string) => number = count): DatasetCounter {
  return { method: "tokenizer", request: (t) => Promise.resolve(count(t)), text: (t) => Promise.resolve(countPrompt(t)) };
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
