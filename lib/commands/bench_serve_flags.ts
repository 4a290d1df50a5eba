/**
 * The flags and parser of `ik bench serve` (every mode's), and their parsed type: what the command,
 * its setup and `ik bench vllm` (which builds a serve run from vLLM's flags) share.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, negatableFlag, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { aboveZero, MAX_DURATION_S } from "../cli/limits.ts";
import { APIS } from "../client/types.ts";
import { ENGINE_KIND_CHOICES, TOKEN_ID_MODES } from "../engines/profiles.ts";
import { liveFlags } from "./live_flags.ts";
import { DATASET_CHOICES } from "./prompts_build_flags.ts";
import { pathValue } from "../cli/path_value.ts";

const flags = () => ({
  baseUrl: option("--base-url", string({ metavar: "URL" }), {
    description: message`Server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine). Never stored: records keep an HMAC of it under a per-machine key.`,
  }),
  model: option("--model", string({ metavar: "MODEL" }), { description: message`Model name the server expects (as /v1/models lists it).` }),
  prompts: optional(option("--prompts", pathValue("FILE"), {
    description: message`Prompt set, JSONL or .jsonl.gz (see 'ik prompts --help'); default the built-in set builtin:default.`,
  })),
  dataset: optional(option("--dataset", choice(DATASET_CHOICES, { metavar: "NAME" }), {
    description: message`Build the prompt set in memory from a local dataset file (as 'ik prompts build' does; see its help): sharegpt, sonnet, jsonl (custom), burstgpt, azure, mooncake. With --dataset-path; instead of --prompts. --limit-per-bucket N is the sample size (default 1000), --seed seeds it; lengths by --tokenizer, else words.`,
  })),
  datasetPath: optional(option("--dataset-path", pathValue("FILE"), { description: message`The local dataset file for --dataset (plain or .gz).` })),
  mode: withDefault(option("--mode", choice(["single", "load", "trace", "conversations"] as const, { metavar: "MODE" }), {
    description: message`single = one request at a time, rounds over the prompt set, CIs over rounds; load = open-loop arrivals at a grid of levels, SLO capacity N*; trace = replay a trace's own arrival times (a set with arrival_s, or --dataset mooncake|azure|burstgpt); conversations = multi-turn chats with the server's own answers in the history (--conversations).`,
  }), "single" as const),
  conversations: optional(option("--conversations", pathValue("FILE|synth:N:T:IN:OUT"), {
    description: message`Conversations: a JSONL of {"id", "turns": [...]} (or "messages", whose user messages are the turns), a ShareGPT_V3 .json (each entry's human turns; two or more), or synth:N:T:IN:OUT (N conversations of T turns, IN new words a turn, OUT max_tokens).`,
  })),
  sessions: optional(option("--sessions", integer({ min: 1, max: 100_000, metavar: "N" }), { description: message`Conversations: how many run at once (default 1).` })),
  maxConversations: optional(option("--max-conversations", integer({ min: 0, max: 10_000_000, metavar: "N" }), {
    description: message`Conversations from a file: the first N (a ShareGPT .json: a seeded sample of N multi-turn entries, default 1000; 0 = all).`,
  })),
  thinkTimeMs: optional(option("--think-time-ms", string({ metavar: "MEAN[:SD]" }), {
    description: message`Conversations: pause between an answer's end and the next turn, ms (normal, seeded, clipped at 0; default 0).`,
  })),
  timeScale: optional(option("--time-scale", float({ min: 0.001, max: 1000, metavar: "F" }), {
    description: message`Trace: multiply the trace's arrival gaps by F (0.5 replays it twice as fast; default 1).`,
  })),
  maxDurationS: optional(option("--max-duration-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`Trace: replay only the requests due in the first S seconds of the (scaled) trace.`,
  })),
  concurrency: multiple(option("--concurrency", string({ metavar: "N,M" }), {
    description: message`Load: concurrency levels. A level N is open-loop Poisson arrivals at N / e2e_ref (not vLLM's or AIPerf's "N always in flight": that is --closed-loop).`,
  })),
  rates: multiple(option("--rates", string({ metavar: "R,S" }), { description: message`Load: arrival rates in requests/s (instead of --concurrency). auto (here or for --concurrency): search for N* instead of a grid, doubling while the SLO holds, then bisecting to --precision.` })),
  precision: optional(option("--precision", float({ min: 0.001, max: 0.5, metavar: "F" }), {
    description: message`Load with auto: stop once the highest level that held and the lowest that failed are within F of each other, relative to the one that held (default 0.05).`,
  })),
  maxLevels: optional(option("--max-levels", integer({ min: 1, max: 50, metavar: "N" }), { description: message`Load with auto: at most N measured levels (default 10).` })),
  autoStart: optional(option("--auto-start", float({ min: 1e-6, errors: { belowMinimum: aboveZero(1e-6) }, max: 1e7, metavar: "X" }), {
    description: message`Load with auto: the first level (default: concurrency 1; rate 1000 / e2e_ref req/s, one stream's worth, from reference requests or --ref-e2e-ms).`,
  })),
  durationS: optional(option("--duration-s", float({ min: 0.1, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`Load: arrival window per level, seconds (default 30). The seeded schedule holds a random number of arrivals (rate x S on average); a level whose schedule strays more than 10 % from its rate is noted. Not with --requests.`,
  })),
  requests: optional(option("--requests", integer({ min: 1, max: 10_000_000, metavar: "N" }), {
    description: message`Load (open loop): exactly N arrivals per level, drawn from the same seeded process (vLLM's --num-prompts); a level lasts as long as they take. Instead of --duration-s and --max-requests-per-level.`,
  })),
  maxRequestsPerLevel: withDefault(option("--max-requests-per-level", integer({ min: 0, metavar: "N" }), { description: message`Load: cap on requests per level (0 = no cap).` }), 0),
  refRequests: withDefault(option("--ref-requests", integer({ min: 0, max: 1000, metavar: "N" }), {
    description: message`Load with --concurrency: unloaded reference requests; their median e2e is e2e_ref.`,
  }), 5),
  refE2eMs: optional(option("--ref-e2e-ms", float({ min: 0.001, max: MAX_DURATION_S * 1000, metavar: "MS" }), {
    description: message`Load: the unloaded e2e latency that turns concurrency into a rate (the same value gives every engine the same schedule).`,
  })),
  burstiness: withDefault(option("--burstiness", float({ min: 0.01, max: 100, metavar: "K" }), {
    description: message`Load: gamma shape of the inter-arrival gaps (1 = Poisson, below 1 burstier).`,
  }), 1),
  sloTtftP95Ms: optional(option("--slo-ttft-p95-ms", float({ min: 0, metavar: "MS" }), { description: message`SLO: p95 time to first token, ms.` })),
  sloTpotP95Ms: optional(option("--slo-tpot-p95-ms", float({ min: 0, metavar: "MS" }), { description: message`SLO: p95 time per output token, ms.` })),
  sloE2eP95Ms: optional(option("--slo-e2e-p95-ms", float({ min: 0, metavar: "MS" }), { description: message`SLO: p95 end-to-end latency, ms (as vLLM's goodput knows it).` })),
  sloMaxFail: withDefault(option("--slo-max-fail", integer({ min: 0, metavar: "N" }), { description: message`SLO: failed requests allowed per level.` }), 0),
  sweepAll: option("--sweep-all", { description: message`Load: keep going after the first level that misses the SLO.` }),
  closedLoop: option("--closed-loop", { description: message`Load: N back-to-back workers (N always in flight). A STRESS TEST: never used for N*.` }),
  failOnSlo: option("--fail-on-slo", { description: message`Load: exit 2 when no level met the SLO (N* or rate* is null).` }),
  gpuPriceUsdH: optional(option("--gpu-price-usd-h", float({ min: 1e-9, errors: { belowMinimum: aboveZero(1e-9) }, metavar: "USD" }), { description: message`GPU price per GPU-hour, for $/1M output tokens at N*.` })),
  api: withDefault(option("--api", choice(APIS, { metavar: "API" }), { description: message`OpenAI endpoint to call.` }), "chat" as const),
  engineKind: withDefault(option("--engine-kind", choice(ENGINE_KIND_CHOICES, { metavar: "KIND" }), {
    description: message`Server type (body fields for exact length and token ids); auto = detect from what the server says about itself.`,
  }), "auto" as const),
  maxTokens: optional(option("--max-tokens", integer({ min: 2, metavar: "N" }), {
    description: message`Tokens per request, at least 2 (default: each prompt's max_tokens, else 256).`,
  })),
  rounds: withDefault(option("--rounds", integer({ min: 1, max: 10000, metavar: "N" }), { description: message`Timed passes over the prompt set.` }), 5),
  firstRound: optional(option("--first-round", integer({ min: 0, max: 1_000_000, metavar: "K" }), {
    description: message`Single mode: number the first new round K (0-based; default: right after the extended record's last). ik bench rounds passes its own round, so two engines' records pair by the round they ran in even when a cell failed.`,
  })),
  warmup: withDefault(option("--warmup", integer({ min: 0, max: 10000, metavar: "N" }), {
    description: message`Untimed requests first, each with a unique prompt tag.`,
  }), 2),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Load mode: seeds the arrival schedule, the prompt order and picks, and the cache salts. Recorded in every record; single mode's bootstrap intervals use a fixed seed (0), so a rerun reproduces them.` }), 0),
  label: optional(option("--label", string({ metavar: "NAME" }), {
    description: message`Name of this engine configuration in outputs/ (default: the engine kind).`,
  })),
  gpuLock: optional(option("--gpu-lock", pathValue("PATH"), {
    description: message`Hold this GPU lock file for the whole run (CONTRACTS: bench serve takes it only when given; a lock a live process holds is exit 69, a dead owner's is taken over with a note).`,
  })),
  runDir: optional(option("--run-dir", string({ metavar: "DIR" }), {
    description: message`Also write outputs/<label>/..., inputs/ and metrics/<label>.json there (index.json merged across runs).`,
  })),
  buckets: multiple(option("--buckets", string({ metavar: "A,B" }), { description: message`Only these buckets (comma list or repeated).` })),
  limitPerBucket: withDefault(option("--limit-per-bucket", integer({ min: 0, metavar: "N" }), {
    description: message`Only the first N prompts of each bucket (0 = all).`,
  }), 0),
  tokenIds: withDefault(option("--token-ids", choice(TOKEN_ID_MODES, { metavar: "MODE" }), {
    description: message`auto = ask for streamed ids where free; logprobs = also through logprobs (can slow decode); off = never.`,
  }), "auto" as const),
  exactLength: withDefault(negatableFlag({ positive: "--exact-length", negative: "--no-exact-length" }, {
    description: message`Ask the engine to generate exactly max_tokens (ignore_eos / min_tokens).`,
  }), true),
  cacheSalt: withDefault(negatableFlag({ positive: "--cache-salt", negative: "--no-cache-salt" }, {
    description: message`Single mode: rounds after the first prefix each prompt with a unique tag (cold-prefill TTFT); --no-cache-salt resends identical prompts (warm cache). Conversations mode: each run tags its conversations (a rerun's turn 1 is cold); --no-cache-salt sends them untagged.`,
  }), true),
  temperature: withDefault(option("--temperature", string({ metavar: "T|server" }), {
    description: message`Sampling temperature in every body (default 0: greedy, as reproducible as the engine allows); server sends none, so the server's default applies (as vllm bench serve).`,
  }), "0"),
  extraBody: optional(option("--extra-body", string({ metavar: "JSON" }), {
    description: message`JSON object merged into every request body; secret-looking keys are stored redacted.`,
  })),
  chatTemplateKwargs: optional(option("--chat-template-kwargs", string({ metavar: "JSON" }), {
    description: message`JSON object sent as chat_template_kwargs on chat requests (merged per key; a prompt's own field wins).`,
  })),
  tokenizer: optional(option("--tokenizer", pathValue("PATH"), {
    description: message`Local tokenizer.json (or its folder) to re-count tokens when a server sends neither ids nor usage.`,
  })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), {
    description: message`Environment variable holding the API key (never stored or printed).`,
  })),
  engineVersion: optional(option("--engine-version", string({ metavar: "V" }), { description: message`Engine version, recorded in the identity.` })),
  timeoutS: withDefault(option("--timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`Per-request limit, seconds (at most ${text(String(MAX_DURATION_S))}).`,
  }), 600),
  idleTimeoutS: withDefault(option("--idle-timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`Limit on a silence with no byte received, seconds.`,
  }), 60),
  resamples: withDefault(option("--resamples", integer({ min: 100, max: 100000, metavar: "N" }), { description: message`Bootstrap resamples for CIs.` }), 2000),
  extend: optional(option("--extend", string({ metavar: "ID" }), {
    description: message`Evidence id of an earlier run of the same configuration: its rounds are kept and new rounds appended.`,
  })),
  allowIncomplete: withDefault(negatableFlag({ positive: "--allow-incomplete", negative: "--no-allow-incomplete" }, {
    description: message`Let --extend build on an interrupted (incomplete) record.`,
  }), false),
  gpuName: optional(option("--gpu-name", string({ metavar: "NAME" }), { description: message`GPU model, when the server is not on this machine (else read with nvidia-smi).` })),
  gpuMetricsUrl: optional(option("--gpu-metrics-url", string({ metavar: "URL" }), {
    description: message`A dcgm-exporter /metrics URL to sample the GPUs from during each level (power, energy per output token, utilisation, memory); without it a local server's GPUs are sampled with nvidia-smi.`,
  })),
  gpuCount: optional(option("--gpu-count", integer({ min: 1, max: 4096, metavar: "N" }), { description: message`GPUs behind the server (default 1; required with --shard).` })),
  shard: optional(option("--shard", string({ metavar: "K/S|auto" }), {
    description: message`Load: run slice K of S of one shared schedule (send the requests with seq mod S = K) and write a slice record for 'ik merge'; auto reads srun's SLURM_PROCID/SLURM_STEP_NUM_TASKS or an Indexed Job's JOB_COMPLETION_INDEX (with --shards).`,
  })),
  shards: optional(option("--shards", integer({ min: 1, max: 100000, metavar: "S" }), {
    description: message`With --shard auto on Kubernetes: the number of shards (the Job's completions).`,
  })),
  startAt: optional(option("--start-at", string({ metavar: "EPOCH_MS" }), {
    description: message`With --shard: wall-clock start of the first level, milliseconds since the Unix epoch, the same for every shard.`,
  })),
  levelGapS: optional(option("--level-gap-s", float({ min: 0, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`With --shard: pause between levels of the timetable, seconds (default 10; at least e2e_ref).`,
  })),
  group: optional(option("--group", string({ metavar: "ID" }), {
    description: message`With --shard: the group id every slice of this run carries (default: --start-at plus the Slurm job step, or the Job's uid in $IK_JOB_UID).`,
  })),
  json: option("--json", { description: message`Print the record as one JSON object on stdout.` }),
  ...liveFlags(),
});

/** Builds the parser for `ik bench serve` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const benchServeCommand = () => command("serve", object({ cmd: constant("bench-serve" as const), ...flags() }), {
  brief: message`Benchmark one server: single-user latency with CIs over rounds, or open-loop load with SLO capacity N* and cost.`,
  description: message`Single mode (--mode single): warm-up, then --rounds passes over the prompt set one request at a time; per bucket the median and p95 of TTFT, TPOT, decode tok/s and e2e with 95% CIs (t-scaled cluster bootstrap over rounds). Load mode (--mode load --rates or --concurrency): one level per grid value, open-loop arrivals on absolute deadlines, per level p50/p90/p95/p99 of TTFT, TPOT, ITL and e2e (also failure-adjusted), goodput, tok/s per GPU, send lag and the server's own gauges; N* is the highest level where the SLO holds there and at every lower one. Writes evidence records under $IK_RUNS_DIR (else ./runs); with --json, single mode prints the serve_benchmark record, load mode the derived capacity record. Trace mode (--mode trace) replays a trace's own arrival times (a set made by ik prompts build --dataset mooncake|azure|burstgpt, or --dataset with --dataset-path), --time-scale and --max-duration-s shaping it, with per-second windows of the trace's rate against what was sent; --json prints its serve_benchmark record.`,
});

/** The parsed flags of `ik bench serve`. */
export type BenchServeFlags = InferValue<ReturnType<typeof benchServeCommand>>;
