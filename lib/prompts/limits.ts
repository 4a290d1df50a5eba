/**
 * The largest token count ik takes for one prompt's input or output: a synthetic bucket's lengths
 * (`ik prompts synth --bucket`), a prompt set's `max_tokens`, and a dataset row's input and output
 * lengths. Larger numbers are no real request's (and a prompt built to one would need gigabytes).
 * @module
 */

/** Upper bound of an input or output length in tokens (1,000,000). */
export const MAX_PROMPT_TOKENS = 1_000_000;

/** Whether `v` is a whole number of tokens in `min..MAX_PROMPT_TOKENS` (a safe integer: 1e21 is not). */
export function isTokenCount(v: unknown, min: number): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= MAX_PROMPT_TOKENS;
}
