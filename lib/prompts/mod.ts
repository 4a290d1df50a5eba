/**
 * Prompt sets: load a JSONL or .jsonl.gz file, validate every line (errors name file:line),
 * select buckets, and identify the set by the sha256 of its uncompressed bytes.
 *
 * @example
 * ```ts
 * import { loadPromptSet } from "./mod.ts";
 * const set = await loadPromptSet("tests/testdata/prompts/mini.jsonl");
 * for (const p of set.prompts) console.log(p.id, p.bucket, p.maxTokens);
 * ```
 * @module
 */
export {
  asCompletionPrompt,
  BUCKETS,
  parsePrompt,
  type Prompt,
  type PromptMessage,
  sortBuckets,
} from "./prompt.ts";
export {
  type LoadOptions,
  loadPromptSet,
  manifestPath,
  maybeGunzip,
  parsePromptSetText,
  type PromptSet,
  setBuckets,
  setStem,
} from "./prompt_set.ts";
export { fitWords, type FitResult, type LengthEstimate } from "./exact_length.ts";
export { type ExactSynthOptions, type ExactSynthResult, type LengthCounter, type LengthSpread, synthExact } from "./synth_exact.ts";
