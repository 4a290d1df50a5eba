/**
 * The engines whose tokenize endpoints ik speaks (`--tokenize-engine`), apart from the client that
 * speaks them so the flags that list them load no HTTP code.
 * @module
 */

/** The engines whose tokenize endpoints ik speaks. */
export const TOKENIZE_ENGINES = ["vllm", "sglang", "llamacpp"] as const;
/** One of {@link TOKENIZE_ENGINES}. */
export type TokenizeEngine = typeof TOKENIZE_ENGINES[number];
