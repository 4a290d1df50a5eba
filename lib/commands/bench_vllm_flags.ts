/**
 * The parser of `ik bench vllm` (vLLM's flags, ../vllm_cli/flags.ts), and its parsed type. Parser
 * only: the run is bench_vllm.ts.
 * @module
 */
import { message } from "@optique/core/message";
import type { InferValue } from "@optique/core/parser";
import { command } from "@optique/core/primitives";
import { benchVllmFlags } from "../vllm_cli/flags.ts";

/** Builds the parser for `ik bench vllm` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const benchVllmCommand = () => command("vllm", benchVllmFlags(), {
  brief: message`vllm bench serve's flags: one rate, --num-prompts requests, vLLM's summary block and result JSON, plus ik's evidence record.`,
  description: message`Takes vllm bench serve's flags with their meaning (read from vLLM's vllm/benchmarks/serve.py): --num-prompts open-loop arrivals at --request-rate (Poisson, gamma with --burstiness; inf sends all at time 0), --max-concurrency caps the requests in flight over them (vLLM's semaphore, not ik's --closed-loop), --dataset-name random builds prompts of exact lengths with the server's /tokenize. Prints vLLM's summary block; --save-result writes vLLM's result JSON (--save-detailed keeps the per-request arrays); ik's evidence record is always written under $IK_RUNS_DIR (else ./runs). Flags ik cannot honour are refused (e.g. --profile, --ramp-up-strategy, --lora-modules, --header) or accepted with a warning when they change nothing client-side (e.g. --tokenizer-mode, --trust-remote-code, --disable-tqdm), each in one line; an unknown flag is a usage error (64).`,
});

/** The parsed flags of `ik bench vllm`. */
export type BenchVllmFlags = InferValue<ReturnType<typeof benchVllmCommand>>;
