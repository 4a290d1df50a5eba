/**
 * The flags and parser of `ik bench rounds`, and their parsed type. Parser only: the run is
 * bench_rounds.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { MAX_DURATION_S } from "../cli/limits.ts";
import { pathValue } from "../cli/path_value.ts";

const flags = () => ({
  manifestArg: optional(argument(pathValue("MANIFEST", "manifest file"), { description: message`Run manifest (JSON): engines with label, name, launch argv, port, env, expect …; model.id; workload.extra_body.` })),
  manifest: optional(option("--manifest", pathValue("FILE"), { description: message`The run manifest (same as the MANIFEST argument).` })),
  prompts: optional(option("--prompts", pathValue("FILE"), { description: message`Prompt set for every cell (JSONL or .jsonl.gz); default builtin:default.` })),
  mode: withDefault(option("--mode", choice(["single", "load"] as const), { description: message`single: latency with CIs; load: capacity (N*) per engine. Give the load grid in --serve-args.` }), "single" as const),
  rounds: optional(option("--rounds", integer({ min: 1, max: 10000, metavar: "R" }), { description: message`Rounds (default: the smallest multiple of the Williams period that is >= 3; with --ci-target the maximum).` })),
  engines: optional(option("--engines", string({ metavar: "A,B" }), { description: message`Only these manifest labels.` })),
  runDir: optional(option("--run-dir", pathValue("DIR"), { description: message`Where logs/, prometheus/, resolved_config/ and rounds/ go (default: the manifest's folder).` })),
  gpuLock: optional(option("--gpu-lock", pathValue("PATH"), { description: message`GPU lock file held for the whole run (default \${XDG_RUNTIME_DIR:-/tmp}/ik-gpu.lock).` })),
  startupTimeoutS: withDefault(option("--startup-timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Longest wait for an engine to become ready, seconds.` }), 1200),
  stopTimeoutS: withDefault(option("--stop-timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Wait after SIGTERM before SIGKILL of the engine's process group, seconds.` }), 30),
  serveTimeoutS: withDefault(option("--serve-timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Limit of one cell's bench serve, seconds.` }), 7200),
  warmup: withDefault(option("--warmup", integer({ min: 0, max: 1000, metavar: "N" }), { description: message`Warm-up requests per cell, before the measurement (from the set's first 8 prompts).` }), 2),
  warmupMaxTokens: withDefault(option("--warmup-max-tokens", integer({ min: 1, max: 1_000_000, metavar: "N" }), { description: message`max_tokens of each warm-up request.` }), 16),
  serveCmd: optional(option("--serve-cmd", string({ metavar: "CMD" }), { description: message`The child bench serve command (also $IK_BENCH_SERVE_CMD): with {base_url} {model} {prompts} {mode} {engine_kind} {label} {round} {run_dir} {ik} it is used as written; without, it replaces the program part.` })),
  serveArgs: optional(option("--serve-args", string({ metavar: "ARGS" }), { description: message`Extra bench serve flags for every cell, e.g. "--max-tokens 64 --rates 1,2,4" (shell quoting). Single mode: with --slo-max-fail N here, a cell with more failed requests is not ok.` })),
  passEnv: multiple(option("--pass-env", string({ metavar: "NAME" }), { description: message`Copy this variable from ik's environment into every engine's (repeatable; engines otherwise get only PATH HOME USER LOGNAME LANG LC_ALL TZ TMPDIR and the manifest env).` })),
  gpuMemToleranceMib: withDefault(option("--gpu-mem-tolerance-mib", integer({ min: 0, max: 1_000_000, metavar: "MIB" }), { description: message`GPU memory over the pre-launch baseline still counted as freed.` }), 512),
  gpuMemWaitS: withDefault(option("--gpu-mem-wait-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Longest wait for GPU memory to come back to baseline, seconds.` }), 60),
  pollS: withDefault(option("--poll-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Readiness and GPU-memory poll interval, seconds.` }), 0.5),
  refE2eMs: optional(option("--ref-e2e-ms", float({ min: 0.001, metavar: "MS" }), { description: message`Load mode: the reference e2e every engine's concurrency grid uses (default: measured by the first load cell).` })),
  extraBody: optional(option("--extra-body", string({ metavar: "JSON" }), { description: message`JSON object merged into every request of every engine (default the manifest's workload.extra_body).` })),
  chatTemplateKwargs: optional(option("--chat-template-kwargs", string({ metavar: "JSON" }), { description: message`chat_template_kwargs for every request (default the manifest's workload.chat_template_kwargs).` })),
  ciTarget: optional(option("--ci-target", float({ metavar: "FRAC" }), { description: message`Adaptive stop: end after a whole Williams period once every ratio's 95% CI half-width is <= FRAC x the ratio.` })),
  minRounds: optional(option("--min-rounds", integer({ min: 1, max: 10000, metavar: "R" }), { description: message`Adaptive stop: never before this many rounds.` })),
  json: option("--json", { description: message`Print summary.json's content as one JSON object on stdout.` }),
});

/** Builds the parser for `ik bench rounds` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const benchRoundsCommand = () => command("rounds", object({ cmd: constant("bench-rounds" as const), ...flags() }), {
  brief: message`Several engines from a manifest in balanced rounds: launch, measure and stop each cell; medians and paired ratios with CIs.`,
  description: message`Each round runs every engine once, in a Williams order (every engine in every position, every ordered pair equally often). A cell: refuse a busy port, launch in a new process group with a clean environment (log in logs/<label>.r<k>.log), wait for readiness, warm up, scrape metrics, run 'ik bench serve' as a child, scrape again, stop the whole group (TERM, then KILL), wait for GPU memory, parse the resolved config from the log. A cell is not ok when the manifest's model.id is not served (model_missing), the engine exits before its stop (engine_exited), its failures pass --slo-max-fail in --serve-args (too_many_failures) or its config violates expect (hard_gate). An engine is named best (*) only where every other engine's ratio CI excludes 1 with 3+ round pairs. Writes <run-dir>/rounds/plan.json, <label>.r<k>.json per cell, summary.json and summary.md; the summary goes to stdout.`,
});

/** The parsed flags of `ik bench rounds`. */
export type BenchRoundsFlags = InferValue<ReturnType<typeof benchRoundsCommand>>;
