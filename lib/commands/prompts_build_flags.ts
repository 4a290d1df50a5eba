/**
 * The flags and parser of `ik prompts build`, and their parsed type (the dataset names are shared
 * with `bench serve --dataset`). Parser only: the build itself is prompts_build.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import { command, constant, option } from "@optique/core/primitives";
import { choice, integer, string } from "@optique/core/valueparser";
import { DEFAULT_NUM_PROMPTS, SONNET_DEFAULTS } from "../datasets/defaults.ts";
import { DATASET_NAMES } from "../datasets/types.ts";
import { TOKENIZE_ENGINES } from "../tokenize_remote/engines.ts";
import type { SynthFlags } from "./prompts_synth.ts";
import { pathValue } from "../cli/path_value.ts";

/** The dataset names the flag takes (`custom` is vLLM's name for `jsonl`). */
export const DATASET_CHOICES = [...DATASET_NAMES, "custom"] as const;

/** Builds the parser for `ik prompts build` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const buildCommand = () => command("build", object({
  cmd: constant("prompts-build" as const),
  dataset: option("--dataset", choice(DATASET_CHOICES, { metavar: "NAME" }), {
    description: message`sharegpt (ShareGPT_V3 JSON), sonnet (text of poem lines), jsonl (lines with "prompt" and optional "output_tokens", or "messages"; also "custom"), burstgpt (BurstGPT CSV), azure (Azure LLM inference trace CSV), mooncake (Mooncake trace JSONL: timestamp, input_length, output_length, hash_ids; rows sharing a hash id share that 512-token block's text).`,
  }),
  datasetPath: option("--dataset-path", pathValue("FILE"), { description: message`The local dataset file (plain or .gz). Never downloaded.` }),
  numPrompts: withDefault(option("--num-prompts", "--limit", integer({ min: 0, max: 10_000_000, metavar: "N" }), {
    description: message`Prompts to keep: a seeded sample (the first N rows of the seed's shuffled order that pass the filters); 0 = every row that passes.`,
  }), DEFAULT_NUM_PROMPTS),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Seed of the sample (and of sonnet's line draws and the trace prompts' words).` }), 0),
  outputLen: optional(option("--output-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), {
    description: message`max_tokens of every prompt: sharegpt instead of the answer's length (vLLM --sharegpt-output-len), jsonl instead of output_tokens (--custom-output-len), sonnet (default ${text(String(SONNET_DEFAULTS.outputLen))}). Not for traces: their lengths are the point.`,
  })),
  inputLen: optional(option("--input-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), { description: message`sonnet: input tokens per prompt (default ${text(String(SONNET_DEFAULTS.inputLen))}).` })),
  prefixLen: optional(option("--prefix-len", integer({ min: 0, max: 1_000_000, metavar: "N" }), { description: message`sonnet: tokens of the shared prefix lines (default ${text(String(SONNET_DEFAULTS.prefixLen))}).` })),
  bucketBy: optional(option("--bucket-by", string({ metavar: "input:E1,E2" }), {
    description: message`Bucket by counted input tokens instead of one bucket per dataset: input:128,512,2048 makes <name>-le128, -le512, -le2048 and -gt2048.`,
  })),
  tokenizer: optional(option("--tokenizer", pathValue("PATH"), { description: message`Count tokens with this local tokenizer.json (or its folder).` })),
  tokenizeVia: optional(option("--tokenize-via", string({ metavar: "URL" }), {
    description: message`Count tokens with this server's own tokenizer (vLLM, SGLang, llama.cpp): trace prompts get exactly the trace's input length as the server counts it, chat template included.`,
  })),
  tokenizeEngine: withDefault(option("--tokenize-engine", choice(["auto", ...TOKENIZE_ENGINES] as const, { metavar: "ENGINE" }), {
    description: message`Which engine's tokenize endpoints --tokenize-via speaks.`,
  }), "auto" as const),
  api: withDefault(option("--api", choice(["chat", "completions"] as const, { metavar: "API" }), { description: message`The API input_tokens are counted for with --tokenize-via.` }), "chat" as const),
  model: optional(option("--model", string({ metavar: "NAME" }), { description: message`The served model --tokenize-via names.` })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable with the bearer token for --tokenize-via.` })),
  out: option("--out", pathValue("FILE"), { description: message`Where to write the JSONL (.gz to compress); a <name>.manifest.json is written beside it.` }),
  json: option("--json", { description: message`Print what was written as one JSON object.` }),
}), {
  brief: message`Make a prompt set from a local dataset file (ShareGPT, sonnet, JSONL, BurstGPT, Azure or Mooncake trace).`,
  description: message`Reads the file as vLLM's benchmark datasets do (ShareGPT: first human turn, the answer's tokens as max_tokens, prompts under 4 or over 1024 tokens and pairs over 2048 dropped; BurstGPT: GPT-4 rows, failed ones dropped) and writes an ordinary prompt set, one bucket named after the dataset (or --bucket-by bins), whose sha256 identifies it. Its manifest records the dataset, the source file's name and sha256, each filter and how many rows it dropped, and the length method. Trace rows (burstgpt, azure, mooncake) become prompts of the trace's input length with arrival_s kept (bench serve --mode trace replays them). Malformed files exit 65 naming file:line. Example: ik prompts build --dataset sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 500 --out sharegpt.jsonl`,
});

/** The parsed flags of `ik prompts build`. */
export interface BuildFlags extends SynthFlags {
  dataset: typeof DATASET_CHOICES[number];
  datasetPath: string;
  numPrompts: number;
  seed: number;
  outputLen?: number;
  inputLen?: number;
  prefixLen?: number;
  bucketBy?: string;
  out: string;
  json: boolean;
}
