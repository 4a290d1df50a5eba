/**
 * The flags and parsers of `ik load-trial prepare|run`, and their parsed type. Parser only: the
 * commands are load_trial.ts.
 * @module
 */
import { object, or } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { aboveZero, MAX_DURATION_S } from "../cli/limits.ts";
import { ENGINE_KIND_CHOICES } from "../engines/profiles.ts";
import { TOKENIZE_ENGINES } from "../tokenize_remote/engines.ts";
import { liveFlags } from "./live_flags.ts";
import { pathValue } from "../cli/path_value.ts";

const prepareCmd = () => command("prepare", object({
  cmd: constant("load-trial-prepare" as const),
  out: option("--out", pathValue("DIR"), { description: message`Trial folder; the workload goes to DIR/workload/workload.json (an existing one is refused).` }),
  prompts: optional(option("--prompts", pathValue("FILE"), { description: message`Prompt set (JSONL or .jsonl.gz, or builtin:default) to take the requests from.` })),
  synth: multiple(option("--synth", string({ metavar: "IN:OUT" }), { description: message`Synthetic requests of IN prompt tokens and OUT output tokens (repeatable; NAME:IN:OUT names the group).` })),
  requests: optional(option("--requests", integer({ min: 1, max: 10_000_000, metavar: "N" }), { description: message`Requests in the workload (default: the set's prompts, or 200 synthetic ones), cycling over the prompts.` })),
  maxTokens: withDefault(option("--max-tokens", integer({ min: 1, max: 1_000_000, metavar: "N" }), { description: message`max_tokens of prompts that do not give their own.` }), 256),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "S" }), { description: message`Seed of the synthetic text (recorded).` }), 0),
  tokenizeVia: optional(option("--tokenize-via", string({ metavar: "URL" }), {
    description: message`--synth: make IN exact with this server's own tokenizer (vLLM or SGLang /tokenize with messages, llama.cpp /apply-template + /tokenize), chat template included.`,
  })),
  tokenizeEngine: withDefault(option("--tokenize-engine", choice(["auto", ...TOKENIZE_ENGINES] as const, { metavar: "ENGINE" }), {
    description: message`Which engine's tokenize endpoints --tokenize-via speaks (auto: detected).`,
  }), "auto" as const),
  tokenizer: optional(option("--tokenizer", pathValue("PATH"), { description: message`--synth: count IN with this local tokenizer.json (the message text only, not the chat template).` })),
  model: optional(option("--model", string({ metavar: "NAME" }), { description: message`The served model --tokenize-via names in its calls (default: the first one /v1/models lists).` })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable with the bearer token for --tokenize-via.` })),
  json: option("--json", { description: message`Print the workload's summary as JSON.` }),
}), { brief: message`Write a load-trial workload (workload/workload.json) from a prompt set or synthetic lengths (exact with --tokenize-via).` });

const runCmd = () => command("run", object({
  cmd: constant("load-trial-run" as const),
  base: option("--base", "--base-url", string({ metavar: "URL" }), { description: message`Server or router root, e.g. http://127.0.0.1:18000 (stored only as an HMAC).` }),
  expectedModel: option("--expected-model", string({ metavar: "M" }), { description: message`The model the server must list in /v1/models (else exit 69).` }),
  workload: option("--workload", pathValue("FILE"), { description: message`workload.json from 'ik load-trial prepare'.` }),
  rate: option("--rate", float({ min: 1e-6, errors: { belowMinimum: aboveZero(1e-6) }, max: 1e6, metavar: "R" }), { description: message`Open-loop Poisson arrival rate, requests per second.` }),
  requests: option("--requests", integer({ min: 1, max: 10_000_000, metavar: "N" }), { description: message`Requests to send (the workload is cycled).` }),
  ttft: option("--ttft", float({ min: 1e-6, errors: { belowMinimum: aboveZero(1e-6) }, max: MAX_DURATION_S, metavar: "S" }), { description: message`TTFT target, seconds (as the plans write it).` }),
  tpot: option("--tpot", float({ min: 1e-6, errors: { belowMinimum: aboveZero(1e-6) }, max: MAX_DURATION_S, metavar: "S" }), { description: message`TPOT target, seconds.` }),
  attainment: option("--attainment", float({ min: 0, max: 1, metavar: "A" }), { description: message`Share of requests that must meet both targets, 0..1.` }),
  out: option("--out", pathValue("DIR"), { description: message`Where summary.json and requests.jsonl go (a folder that already has a summary.json is refused).` }),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable holding the API key (never stored).` })),
  engineKind: withDefault(option("--engine-kind", choice(ENGINE_KIND_CHOICES), { description: message`Engine profile for the request body.` }), "auto"),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "S" }), { description: message`Arrival-schedule seed.` }), 0),
  timeoutS: withDefault(option("--timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Per-request limit, seconds.` }), 600),
  maxScheduleH: withDefault(option("--max-schedule-h", float({ min: 0.001, max: 8760, metavar: "H" }), { description: message`Longest schedule accepted, hours: a rate and a count whose seeded arrivals would take longer are refused before anything is sent.` }), 24),
  json: option("--json", { description: message`Print summary.json on stdout.` }),
  ...liveFlags(),
}), { brief: message`Send N requests of a workload at rate R (open loop) and judge SLO attainment; exit 2 when it or the schedule fails.` });

/** Builds the parser for `ik load-trial …` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const loadTrialCommand = () => command("load-trial", or(prepareCmd(), runCmd()), {
  brief: message`The load-trial client of benchmark points: prepare a workload, run one rate against it.`,
  description: message`ik load-trial prepare writes a workload; ik load-trial run sends it as open-loop Poisson arrivals and writes summary.json (attainment, scheduling validity, percentiles) and requests.jsonl. Exit 0 when attainment >= --attainment and the schedule was valid (all sent, median send lag <= 5 ms, p99 <= 50 ms), 2 otherwise.`,
});

/** The parsed flags of `ik load-trial …`. */
export type LoadTrialFlags = InferValue<ReturnType<typeof loadTrialCommand>>;
