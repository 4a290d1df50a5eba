/**
 * The CLI's command table: each command module exports an optique parser (a `command(...)` whose
 * value carries a literal `cmd`) and a `run(ctx, flags)` returning an exit code.
 * @module
 */
import { or } from "@optique/core/constructs";
import type { InferValue, Parser } from "@optique/core/parser";
import type { CommandContext } from "./context.ts";
import { mockCommand, runMock } from "./mock.ts";
import { probeCommand, runProbe } from "./probe.ts";
import { runSelftest, selftestCommand } from "./selftest.ts";

/** The parser for every ik command. */
export const cliParser = or(selftestCommand, probeCommand, mockCommand);

/** Each command's own parser, by name (cli.ts uses them to suggest a misspelt option). */
export const COMMAND_PARSERS: Readonly<Record<string, Parser<"sync", unknown, unknown>>> = {
  selftest: selftestCommand,
  probe: probeCommand,
  mock: mockCommand,
};

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
  }
}
