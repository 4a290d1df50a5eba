/**
 * The flags of `ik bench vllm`: `vllm bench serve`'s own names, defaults and meaning (read from
 * vLLM's `vllm/benchmarks/serve.py` `add_cli_args` and `vllm/benchmarks/datasets.py`
 * `add_dataset_parser`), the not-honoured ones of {@link NOT_HONOURED} (parsed so they are named
 * in one line), and a few of ik's own (`--api-key-env`, `--lengths`, `--json`).
 * @module
 */
import { merge, object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { Parser } from "@optique/core/parser";
import { argument, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { MAX_DURATION_S } from "../cli/limits.ts";
import { camelOf, NOT_HONOURED } from "./not_honoured.ts";
import { pathValue } from "../cli/path_value.ts";

const d = (s: string) => ({ description: message`${text(s)}` });

/** The flags ik honours, with vLLM's defaults. */
export const honouredFlags = () => ({
  cmd: constant("bench-vllm" as const),
  backend: withDefault(option("--backend", string({ metavar: "NAME" }), d("vLLM's backend: openai or vllm (the completions API) or openai-chat (chat); others are refused.")), "openai"),
  baseUrl: optional(option("--base-url", string({ metavar: "URL" }), d("Server root (instead of --host/--port). Stored only as an HMAC tag."))),
  host: withDefault(option("--host", string({ metavar: "HOST" }), d("Server host when --base-url is not given.")), "127.0.0.1"),
  port: withDefault(option("--port", integer({ min: 1, max: 65535, metavar: "PORT" }), d("Server port when --base-url is not given.")), 8000),
  endpoint: optional(option("--endpoint", pathValue("PATH"), d("/v1/completions (default for openai, vllm) or /v1/chat/completions (openai-chat)."))),
  model: optional(option("--model", string({ metavar: "MODEL" }), d("Model id (default: the first model the server lists); the file's model_id."))),
  servedModelName: optional(option("--served-model-name", string({ metavar: "NAME" }), d("The name sent in requests, when it differs from --model."))),
  tokenizer: optional(option("--tokenizer", string({ metavar: "NAME" }), d("Written as tokenizer_id (default --model); ik loads no local tokenizer: counts come from the server."))),
  datasetName: withDefault(option("--dataset-name", string({ metavar: "NAME" }), d("random (built in memory, exact lengths via the server's /tokenize); sharegpt, sonnet or custom (JSONL of prompt / output_tokens) from --dataset-path, with vLLM's filters and a seeded sample.")), "random"),
  datasetPath: optional(option("--dataset-path", pathValue("FILE"), d("The dataset file, plain or .gz (not with random)."))),
  sharegptOutputLen: optional(option("--sharegpt-output-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("sharegpt: max_tokens for every request instead of the recorded answer's length."))),
  customOutputLen: optional(option("--custom-output-len", integer({ min: -1, max: 1_000_000, metavar: "N" }), d("custom: max_tokens for every request (default 256, as vLLM); -1: each line's output_tokens."))),
  sonnetInputLen: optional(option("--sonnet-input-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("sonnet: input tokens per request (default 550)."))),
  sonnetOutputLen: optional(option("--sonnet-output-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("sonnet: max_tokens per request (default 150)."))),
  sonnetPrefixLen: optional(option("--sonnet-prefix-len", integer({ min: 0, max: 1_000_000, metavar: "N" }), d("sonnet: tokens of the shared prefix (default 200)."))),
  numPrompts: withDefault(option("--num-prompts", integer({ min: 1, max: 10_000_000, metavar: "N" }), d("Requests to send: exactly N arrivals.")), 1000),
  inputLen: optional(option("--input-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("General input length: sets --random-input-len and --sonnet-input-len (as vLLM)."))),
  outputLen: optional(option("--output-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("General output length: sets --random-, --sharegpt-, --custom- and --sonnet-output-len (as vLLM)."))),
  randomInputLen: withDefault(option("--random-input-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("random: input tokens per request (the whole request as the server counts it, template included).")), 1024),
  randomOutputLen: withDefault(option("--random-output-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("random: output tokens per request (max_tokens, generated exactly: ignore_eos).")), 128),
  randomRangeRatio: withDefault(option("--random-range-ratio", float({ min: 0, max: 0.999999, metavar: "R" }), d("random: lengths drawn uniformly from [L(1-R), L(1+R)], in [0, 1).")), 0),
  randomPrefixLen: withDefault(option("--random-prefix-len", integer({ min: 0, max: 1_000_000, metavar: "P" }), d("random: P shared prefix tokens before each prompt's own tokens.")), 0),
  requestRate: withDefault(option("--request-rate", string({ metavar: "R|inf" }), d("Arrivals per second (Poisson, or gamma with --burstiness); inf sends every request at time 0.")), "inf"),
  burstiness: withDefault(option("--burstiness", float({ min: 0.01, max: 100, metavar: "K" }), d("Gamma shape of the inter-arrival gaps (1 = Poisson); no effect with rate inf.")), 1),
  maxConcurrency: optional(option("--max-concurrency", integer({ min: 1, max: 1_000_000, metavar: "N" }), d("Cap on requests in flight over the open-loop arrivals (as vLLM's semaphore: not ik's --closed-loop); a held request's send lag includes the wait."))),
  goodput: multiple(option("--goodput", string({ metavar: "KEY:MS" }), d("Goodput SLOs ttft:MS tpot:MS e2el:MS (a request is good when it meets every one)."))),
  percentileMetrics: optional(option("--percentile-metrics", string({ metavar: "M,N" }), d("Metrics with percentile blocks: ttft, tpot, itl, e2el, client_queue_time, e2el_including_client_queue (default ttft,tpot,itl)."))),
  metricPercentiles: withDefault(option("--metric-percentiles", string({ metavar: "P,Q" }), d("Percentiles of each block (default 99).")), "99"),
  ignoreEos: option("--ignore-eos", d("Generate exactly max_tokens (ik's exact-length profile); always on for random, as vLLM does.")),
  temperature: optional(option("--temperature", float({ min: 0, max: 100, metavar: "T" }), d("Sampling temperature, sent in every body; without it none is sent (the server's default), as vLLM."))),
  topP: optional(option("--top-p", float({ min: 0, max: 1, metavar: "P" }), d("top_p, sent in every body."))),
  topK: optional(option("--top-k", integer({ min: -1, metavar: "K" }), d("top_k, sent in every body."))),
  minP: optional(option("--min-p", float({ min: 0, max: 1, metavar: "P" }), d("min_p, sent in every body."))),
  frequencyPenalty: optional(option("--frequency-penalty", float({ metavar: "F" }), d("frequency_penalty, sent in every body."))),
  presencePenalty: optional(option("--presence-penalty", float({ metavar: "F" }), d("presence_penalty, sent in every body."))),
  repetitionPenalty: optional(option("--repetition-penalty", float({ metavar: "F" }), d("repetition_penalty, sent in every body."))),
  extraBody: optional(option("--extra-body", string({ metavar: "JSON" }), d("JSON object merged into every body (wins over the sampling flags, as vLLM)."))),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), d("Seeds the prompts and the arrival schedule.")), 0),
  numWarmups: withDefault(option("--num-warmups", integer({ min: 0, max: 10000, metavar: "N" }), d("Untimed requests first.")), 0),
  saveResult: option("--save-result", d("Write vLLM's result JSON (ik's evidence record is always written).")),
  saveDetailed: option("--save-detailed", d("Keep the per-request arrays in it (input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors).")),
  appendResult: option("--append-result", d("Append the JSON to the file (a newline between results), as vLLM.")),
  resultDir: optional(option("--result-dir", pathValue("DIR"), d("Where the result JSON goes (default the current directory)."))),
  resultFilename: optional(option("--result-filename", string({ metavar: "NAME" }), d("Its name (default {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json)."))),
  metadata: multiple(option("--metadata", string({ metavar: "KEY=VALUE" }), d("KEY=VALUE pairs written as string keys of the result JSON."))),
  label: optional(option("--label", string({ metavar: "NAME" }), d("The result's label and file name prefix (default --backend)."))),
  words: multiple(argument(string({ metavar: "WORD" }), d("Further values of --goodput (KEY:MS) and --metadata (KEY=VALUE), as vLLM's space-separated lists."))),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), d("ik: environment variable holding the API key (never stored or printed)."))),
  lengths: withDefault(option("--lengths", choice(["server", "words"] as const, { metavar: "HOW" }), d("ik: random prompt lengths counted by the server's /tokenize (server, exact) or as words (approximate).")), "server" as const),
  timeoutS: withDefault(option("--timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), d("ik: per-request limit, seconds (vLLM's session limit is 6 h).")), 21600),
  json: option("--json", d("ik: print ik's capacity record as one JSON object instead of the summary block.")),
});

/** Parsers for the not-honoured flags (each optional), keyed by camelCase name. */
function notHonouredParsers(): Record<string, Parser<"sync", unknown, unknown>> {
  const out: Record<string, Parser<"sync", unknown, unknown>> = {};
  for (const [name, n] of Object.entries(NOT_HONOURED)) {
    const flag = name as `--${string}`;
    const help = d(`Not honoured (${n.action === "warn" ? "accepted with a warning" : "refused"}): ${n.why}.`);
    out[camelOf(name)] = (n.takes === "flag" ? option(flag, help) : n.takes === "list" ? multiple(option(flag, string({ metavar: "V" }), help)) : optional(option(flag, string({ metavar: "V" }), help))) as unknown as Parser<"sync", unknown, unknown>;
  }
  return out;
}

/** Builds the whole flag parser of `ik bench vllm` (fresh per call). */
export const benchVllmFlags = () => merge(object(honouredFlags()), object(notHonouredParsers()));
