/**
 * Synthetic prompt sets (`ik prompts synth`): buckets of a given input length (tokens of the user
 * message) and output length (max_tokens), counted with the mock's pseudo-tokenizer (a token is a
 * run of non-whitespace, MOCK.md) or with a real tokenizer. Seeded (by the seed, each bucket's
 * name and lengths): the same arguments give the same bytes, so the same sha256.
 * @module
 */
import { SeededRng } from "../stats/mod.ts";
import { ALL_REQUESTS_BUCKET } from "./prompt.ts";
import { MAX_PROMPT_TOKENS } from "./limits.ts";

/** One bucket to make. */
export interface SynthBucket {
  name: string;
  inputTokens: number;
  outputTokens: number;
}

/** Counts tokens of a text. */
export type TokenCounter = (text: string) => number;

/** MOCK.md's pseudo-tokenizer: a token is a maximal run of non-whitespace characters. */
export function pseudoTokens(text: string): number {
  const m = text.match(/\S+/g);
  return m ? m.length : 0;
}

const VOCAB = (
  "time person year way day thing man world life hand part child eye woman place work week case point government " +
  "company number group problem fact river mountain window garden planet orbit silver copper harbor lantern meadow " +
  "signal vector kernel memory queue engine latency request answer stream server batch cache prompt token model " +
  "quiet bright early late simple careful rapid gentle distant ancient modern narrow broad steady sudden"
).split(" ");

/**
 * Parses `NAME:INPUT:OUTPUT` (e.g. `short:128:64`).
 * @throws RangeError with the reason, for the caller to turn into a usage error
 */
export function parseSynthBucket(spec: string): SynthBucket {
  const m = /^([A-Za-z0-9][A-Za-z0-9_-]*):(\d+):(\d+)$/.exec(spec.trim());
  if (!m) throw new RangeError(`'${spec}' is not NAME:INPUT_TOKENS:OUTPUT_TOKENS (e.g. short:128:64)`);
  const b = { name: m[1], inputTokens: Number(m[2]), outputTokens: Number(m[3]) };
  if (b.name === ALL_REQUESTS_BUCKET) throw new RangeError(`'${spec}': the bucket name '${ALL_REQUESTS_BUCKET}' is every request together in ik's tables; give it another name`);
  if (b.inputTokens < 1 || b.inputTokens > MAX_PROMPT_TOKENS) throw new RangeError(`'${spec}': input tokens must be 1..${MAX_PROMPT_TOKENS}`);
  if (b.outputTokens < 1 || b.outputTokens > MAX_PROMPT_TOKENS) throw new RangeError(`'${spec}': output tokens must be 1..${MAX_PROMPT_TOKENS}`);
  return b;
}

/**
 * A bucket's name as a seed part (FNV-1a, 32 bits over its UTF-16 code units), so buckets of the
 * same lengths get different texts: `a:50:16,b:50:16` are two sets of prompts, not one twice.
 */
export function bucketSeed(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Text of about `target` tokens under `count`: words are added, then trimmed to the closest count not above it. */
function textOf(target: number, rng: SeededRng, count: TokenCounter): { text: string; tokens: number } {
  const words: string[] = [];
  // Pseudo-tokens are words, so a first guess of `target` words is exact for the mock and close for BPE.
  for (let i = 0; i < target; i++) words.push(VOCAB[rng.int(VOCAB.length)]);
  let n = count(words.join(" "));
  while (n < target) {
    words.push(VOCAB[rng.int(VOCAB.length)]);
    n = count(words.join(" "));
  }
  // Trim: binary search on the word count for the longest prefix at or under the target.
  let lo = 1, hi = words.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (count(words.slice(0, mid).join(" ")) <= target) lo = mid;
    else hi = mid - 1;
  }
  const text = words.slice(0, lo).join(" ");
  return { text, tokens: count(text) };
}

/**
 * The JSONL of a synthetic set: `perBucket` prompts per bucket, ids `<bucket>-<i>`, each line with
 * `input_tokens` (as counted) and `max_tokens` = the bucket's output length.
 */
export function synthPromptSet(buckets: readonly SynthBucket[], perBucket: number, seed: number, count: TokenCounter = pseudoTokens, counter = "pseudo"): string {
  const lines: string[] = [];
  for (const b of buckets) {
    const rng = new SeededRng(seed, bucketSeed(b.name), b.inputTokens, b.outputTokens);
    for (let i = 0; i < perBucket; i++) {
      const { text, tokens } = textOf(b.inputTokens, rng, count);
      lines.push(JSON.stringify({
        id: `${b.name}-${i}`,
        bucket: b.name,
        messages: [{ role: "user", content: text }],
        max_tokens: b.outputTokens,
        input_tokens: tokens,
        source: `ik prompts synth (seed ${seed}, tokens by ${counter})`,
      }));
    }
  }
  return lines.join("\n") + "\n";
}
