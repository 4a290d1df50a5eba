/**
 * The CLI's command table: the parser of every command, built from its light `*_flags.ts` module
 * (a `command(...)` whose value carries a literal `cmd`), and `dispatch`, which loads the command
 * that was asked for (`await import`) and runs its `run(ctx, flags)`. cli.ts imports this module
 * after `--version`; `ik bench serve` never evaluates the mock server, the tokenizers, the
 * remote-write encoder or another command's run (tests/cli/startup_graph.test.ts checks it).
 * @module
 */
import { or } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { command } from "@optique/core/primitives";
import type { InferValue } from "@optique/core/parser";
import type { CommandContext } from "./context.ts";
import { benchServeCommand } from "./bench_serve_flags.ts";
import { benchRoundsCommand } from "./bench_rounds_flags.ts";
import { benchPointsCommand } from "./bench_points_flags.ts";
import { benchVllmCommand } from "./bench_vllm_flags.ts";
import { loadTrialCommand } from "./load_trial_flags.ts";
import { mockCommand } from "./mock_flags.ts";
import { promptsCommand } from "./prompts_flags.ts";
import { probeCommand } from "./probe_flags.ts";
import { selftestCommand } from "./selftest_flags.ts";
import { summarizeCommand } from "./summarize_flags.ts";
import { exportCommand } from "./export_flags.ts";
import { compareCommand } from "./compare_flags.ts";
import { reportCommand } from "./report_flags.ts";
import { mergeCommand } from "./merge_flags.ts";

/** `ik bench …`: the benchmark commands (a fresh parser per call). */
export const benchCommand = () => command("bench", or(benchServeCommand(), benchRoundsCommand(), benchPointsCommand(), benchVllmCommand()), {
  brief: message`Benchmarks: serve (one server: latency with CIs, or load capacity), rounds (several engines in balanced rounds), points (ordered points against a running fleet), vllm (vllm bench serve's flags and result file).`,
  description: message`ik bench serve measures one OpenAI-compatible server and writes an evidence record; ik bench rounds launches, measures and stops several engines from a manifest in a balanced order and compares them.`,
});

/**
 * Builds the parser for every ik command. A fresh one per call, kept by nothing once the arguments
 * are parsed: the whole tree (~2.4 MB of live heap: every option's parser and closures) would
 * otherwise live through a measurement, and each MB the heap keeps through a load level is ~3 MB of
 * peak RSS at 1,000 streams (issue 21).
 */
export const cliParser = () =>
  or(selftestCommand(), probeCommand(), benchCommand(), loadTrialCommand(), promptsCommand(), mockCommand(), summarizeCommand(), exportCommand(), compareCommand(), reportCommand(), mergeCommand());

/** The parsed value of {@link cliParser}. */
export type CliArgs = InferValue<ReturnType<typeof cliParser>>;

/**
 * Runs the parsed command and returns its exit code. Each command's module is imported here, when
 * it runs: a single-file build holds them all but evaluates only the one imported.
 */
export async function dispatch(ctx: CommandContext, args: CliArgs): Promise<number> {
  switch (args.cmd) {
    case "mock":
      return await (await import("./mock.ts")).runMock(ctx, args);
    case "probe":
      return await (await import("./probe.ts")).runProbe(ctx, args);
    case "selftest":
      return await (await import("./selftest.ts")).runSelftest(ctx, args);
    case "bench-serve":
      return await (await import("./bench_serve.ts")).runBenchServe(ctx, args);
    case "bench-rounds":
      return await (await import("./bench_rounds.ts")).runBenchRounds(ctx, args);
    case "bench-points":
      return await (await import("./bench_points.ts")).runBenchPoints(ctx, args);
    case "bench-vllm":
      return await (await import("./bench_vllm.ts")).runBenchVllm(ctx, args);
    case "load-trial-prepare":
    case "load-trial-run":
      return await (await import("./load_trial.ts")).runLoadTrial(ctx, args);
    case "prompts-validate":
    case "prompts-info":
    case "prompts-synth":
    case "prompts-build":
      return await (await import("./prompts.ts")).runPrompts(ctx, args);
    case "summarize-vllm":
      return await (await import("./summarize.ts")).runSummarize(ctx, args);
    case "export":
      return await (await import("./export.ts")).runExport(ctx, args);
    case "compare":
      return await (await import("./compare.ts")).runCompare(ctx, args);
    case "report":
      return await (await import("./report.ts")).runReport(ctx, args);
    case "merge":
      return await (await import("./merge.ts")).runMerge(ctx, args);
  }
}
