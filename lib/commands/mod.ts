/**
 * The CLI's command table: each command module exports an optique parser (a `command(...)` whose
 * value carries a literal `cmd`) and a `run(ctx, flags)` returning an exit code.
 * @module
 */
import { or } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { command } from "@optique/core/primitives";
import type { InferValue } from "@optique/core/parser";
import type { CommandContext } from "./context.ts";
import { benchServeCommand, runBenchServe } from "./bench_serve.ts";
import { benchRoundsCommand, runBenchRounds } from "./bench_rounds.ts";
import { benchPointsCommand, runBenchPoints } from "./bench_points.ts";
import { benchVllmCommand, runBenchVllm } from "./bench_vllm.ts";
import { loadTrialCommand, runLoadTrial } from "./load_trial.ts";
import { mockCommand, runMock } from "./mock.ts";
import { promptsCommand, runPrompts } from "./prompts.ts";
import { probeCommand, runProbe } from "./probe.ts";
import { runSelftest, selftestCommand } from "./selftest.ts";
import { runSummarize, summarizeCommand } from "./summarize.ts";
import { exportCommand, runExport } from "./export.ts";
import { compareCommand, runCompare } from "./compare.ts";
import { reportCommand, runReport } from "./report.ts";
import { mergeCommand, runMerge } from "./merge.ts";

/** `ik bench …`: the benchmark commands. */
export const benchCommand = command("bench", or(benchServeCommand, benchRoundsCommand, benchPointsCommand, benchVllmCommand), {
  brief: message`Benchmarks: serve (one server: latency with CIs, or load capacity), rounds (several engines in balanced rounds), points (ordered points against a running fleet), vllm (vllm bench serve's flags and result file).`,
  description: message`ik bench serve measures one OpenAI-compatible server and writes an evidence record; ik bench rounds launches, measures and stops several engines from a manifest in a balanced order and compares them.`,
});

/** The parser for every ik command. */
export const cliParser = or(selftestCommand, probeCommand, benchCommand, loadTrialCommand, promptsCommand, mockCommand, summarizeCommand, exportCommand, compareCommand, reportCommand, mergeCommand);

/** The parsed value of {@link cliParser}. */
export type CliArgs = InferValue<typeof cliParser>;

/** Runs the parsed command and returns its exit code. */
export function dispatch(ctx: CommandContext, args: CliArgs): Promise<number> {
  switch (args.cmd) {
    case "mock":
      return runMock(ctx, args);
    case "probe":
      return runProbe(ctx, args);
    case "selftest":
      return runSelftest(ctx, args);
    case "bench-serve":
      return runBenchServe(ctx, args);
    case "bench-rounds":
      return runBenchRounds(ctx, args);
    case "bench-points":
      return runBenchPoints(ctx, args);
    case "bench-vllm":
      return runBenchVllm(ctx, args);
    case "load-trial-prepare":
    case "load-trial-run":
      return runLoadTrial(ctx, args);
    case "prompts-validate":
    case "prompts-info":
    case "prompts-synth":
    case "prompts-build":
      return runPrompts(ctx, args);
    case "summarize-vllm":
      return runSummarize(ctx, args);
    case "export":
      return runExport(ctx, args);
    case "compare":
      return runCompare(ctx, args);
    case "report":
      return runReport(ctx, args);
    case "merge":
      return runMerge(ctx, args);
  }
}
