/**
 * The mock's pseudo-tokenizer and its output generator (MOCK.md "Tokens").
 *
 * A token is a maximal run of non-whitespace characters. Output token k is one word, with a
 * leading space, picked from a fixed list of 64 by a hash of (prompt text, k, seed): the same
 * prompt always gives the same text, and a salted prompt gives a different one.
 * @module
 */
import { FNV_OFFSET_BASIS, FNV_PRIME, hashString, mix } from "./prng.ts";

/** The 64 output words; token id = {@link FIRST_WORD_ID} + index. */
export const WORDS: readonly string[] = [
  "the",
  "model",
  "token",
  "stream",
  "server",
  "batch",
  "cache",
  "prompt",
  "engine",
  "latency",
  "request",
  "answer",
  "river",
  "mountain",
  "signal",
  "vector",
  "kernel",
  "memory",
  "queue",
  "window",
  "garden",
  "planet",
  "orbit",
  "silver",
  "copper",
  "harbor",
  "lantern",
  "meadow",
  "thunder",
  "marble",
  "candle",
  "feather",
  "compass",
  "anchor",
  "bridge",
  "canyon",
  "desert",
  "forest",
  "glacier",
  "island",
  "jungle",
  "lagoon",
  "valley",
  "summit",
  "tunnel",
  "meteor",
  "comet",
  "nebula",
  "quartz",
  "ember",
  "breeze",
  "willow",
  "falcon",
  "otter",
  "badger",
  "heron",
  "maple",
  "cedar",
  "pepper",
  "saffron",
  "violet",
  "amber",
  "cobalt",
  "indigo",
];

/** Id of the first word in {@link WORDS}. */
export const FIRST_WORD_ID = 1000;

/** The end-of-sequence id engines report in `matched_stop` (never streamed: no hidden EOS). */
export const EOS_TOKEN_ID = 2;

/**
 * Whether a UTF-16 code unit is whitespace as a regular expression's `\s` reads it (ECMAScript
 * WhiteSpace and LineTerminator: tab to carriage return, space, U+00A0, U+1680, U+2000–U+200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF). The pseudo-tokens split on exactly this set,
 * scanned by hand because a regular expression allocates a match per token on the mock's hot path.
 */
export function isRegExpSpace(c: number): boolean {
  if (c < 0x80) return c === 32 || (c >= 9 && c <= 13);
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Counts pseudo-tokens: maximal runs of non-whitespace characters (`/\S+/g` matches). */
export function countTokens(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isRegExpSpace(text.charCodeAt(i));
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/** A chat message as it arrives on the wire (content may be text parts). */
export interface ChatMessageLike {
  role?: unknown;
  content?: unknown;
}

/** The text of a message's `content`: a string, or the `text` of each text part joined by spaces. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((
        p,
      ) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string"
        ? (p as { text: string }).text
        : "")
      )
      .filter((t) => t !== "")
      .join(" ");
  }
  return "";
}

/** Chat prompt tokens: Σ over messages (tokens(content) + 4) + 3. */
export function chatPromptTokens(messages: readonly ChatMessageLike[]): number {
  let n = 3;
  for (const m of messages) n += countTokens(contentText(m.content)) + 4;
  return n;
}

/** A message's role as one pseudo-token (whitespace in it becomes `_`; no role at all is `_`). */
function roleToken(role: unknown): string {
  return typeof role === "string" && role !== "" ? role.replace(/\s/g, "_") : "_";
}

/**
 * The chat prompt as the pseudo-tokens {@link chatPromptTokens} counts, in a ChatML-like
 * template: per message `<|im_start|> ROLE <|im_sep|> …content… <|im_end|>` (4 + its tokens),
 * then `<|im_start|> assistant <|im_sep|>` (3) to prompt the answer. Requests that begin with the
 * same messages begin with the same tokens, and an earlier assistant answer in the history
 * begins the way the generation prompt does (the prefix cache's view of a prompt).
 */
export function chatPromptPieces(messages: readonly ChatMessageLike[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    out.push("<|im_start|>", roleToken(m.role), "<|im_sep|>");
    for (const w of contentText(m.content).match(/\S+/g) ?? []) out.push(w);
    out.push("<|im_end|>");
  }
  out.push("<|im_start|>", "assistant", "<|im_sep|>");
  return out;
}

/** The completions prompt as the pseudo-tokens {@link completionPromptTokens} counts. */
export function completionPromptPieces(prompt: string): string[] {
  return prompt.match(/\S+/g) ?? [];
}

/** Completions prompt tokens: tokens(prompt). */
export function completionPromptTokens(prompt: string): number {
  return countTokens(prompt);
}

/** The prompt text that seeds generation: chat message contents joined by newlines. */
export function chatPromptText(messages: readonly ChatMessageLike[]): string {
  return messages.map((m) => contentText(m.content)).join("\n");
}

/** One generated token. */
export interface OutputToken {
  /** The token id ({@link FIRST_WORD_ID} + word index). */
  id: number;
  /** The token text: one word with a leading space. */
  text: string;
}

/** Generates output tokens for one prompt; cheap to create, pure. */
export class OutputGenerator {
  readonly #promptHash: number;
  readonly #seed: number;

  /** @param promptText the prompt the output depends on; @param seed `--seed` */
  constructor(promptText: string, seed: number) {
    this.#promptHash = hashString(promptText);
    this.#seed = seed;
  }

  /** Output token number `k` (0-based). */
  token(k: number): OutputToken {
    const index = mix(this.#promptHash, k, this.#seed) % WORDS.length;
    return { id: FIRST_WORD_ID + index, text: " " + WORDS[index] };
  }

  /** Tokens `from` (inclusive) to `to` (exclusive). */
  range(from: number, to: number): OutputToken[] {
    const out: OutputToken[] = [];
    for (let k = from; k < to; k++) out.push(this.token(k));
    return out;
  }
}

/** Stand-in ids for prompt tokens (vLLM's `prompt_token_ids`), exactly `count` of them. */
export function promptTokenIds(promptText: string, count: number): number[] {
  const ids: number[] = [];
  // Words keep a stable id, 5000 + the word's {@link hashString} mod 30000, hashed as the text is
  // scanned (no string for each word); the chat template's extra tokens get small fixed ids.
  const wordId = (h: number) => 5000 + ((h >>> 0) % 30000);
  let h = 0;
  let inWord = false;
  for (let i = 0; i < promptText.length && ids.length < count; i++) {
    const c = promptText.charCodeAt(i);
    if (isRegExpSpace(c)) {
      if (inWord) ids.push(wordId(h));
      inWord = false;
      continue;
    }
    if (!inWord) h = FNV_OFFSET_BASIS;
    inWord = true;
    h = Math.imul(h ^ c, FNV_PRIME);
  }
  if (inWord && ids.length < count) ids.push(wordId(h));
  for (let i = ids.length; i < count; i++) ids.push(100 + (i % 7));
  return ids;
}

/** A made-up but stable log-probability for a token id (logprobs fields need some number). */
export function tokenLogprob(id: number): number {
  return -(((id * 7919) % 997) / 1000) - 0.001;
}

/** The token itself followed by `n - 1` other words: the `top_logprobs` candidates. */
export function candidates(t: OutputToken, n: number): OutputToken[] {
  const out: OutputToken[] = [];
  for (let i = 0; i < n; i++) {
    const index = (t.id - FIRST_WORD_ID + i) % WORDS.length;
    out.push(i === 0 ? t : { id: FIRST_WORD_ID + index, text: " " + WORDS[index] });
  }
  return out;
}
