/**
 * Datasets read from local files only (never downloaded): ShareGPT JSON, sonnet text, JSONL
 * prompts (vLLM's custom `prompt`/`output_tokens`, or OpenAI `messages`), BurstGPT and Azure
 * trace CSVs, each turned into an ordinary prompt set (one bucket named after the dataset, its
 * sha256 its identity) with vLLM's filters and seeded sampling. Lengths are counted by the counter
 * the caller hands in (a server's /tokenize, a local tokenizer, or words).
 *
 * @example
 * ```ts
 * import { buildDataset, wordCounter } from "./mod.ts";
 * const b = await buildDataset({ name: "sonnet", path: "sonnet.txt", counter: wordCounter(), numPrompts: 10, seed: 0 });
 * console.log(b.n, b.sha256, b.dataset.filters);
 * ```
 * @module
 */
export { buildDataset, type DatasetBuild, buildDatasetPromptSet, datasetAlias, methodLimitation } from "./build.ts";
export { DEFAULT_NUM_PROMPTS, SONNET_DEFAULTS } from "./defaults.ts";
export { requestCounter, tokenizerCounter, wordCounter } from "./counters.ts";
export { type BucketBy, bucketFor, parseBucketBy } from "./bucket_by.ts";
export { DATASET_NAMES, type DatasetCounter, type DatasetName, type DatasetOptions, type FilterCount } from "./types.ts";
export { SHAREGPT_LIMITS } from "./sharegpt.ts";
export { SONNET_BASE_PROMPT } from "./sonnet.ts";
export { CUSTOM_DEFAULT_OUTPUT_LEN } from "./custom_jsonl.ts";
export { azureTimestampS, BURSTGPT_MODEL } from "./traces.ts";
export { JsonArrayReader } from "./_json_array.ts";
export { type SourceInfo } from "./_source.ts";
