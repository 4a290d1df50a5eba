/**
 * `ik selftest`: starts the embedded mock in its own process on 127.0.0.1:0 for each engine
 * personality, measures it over real loopback HTTP through the same client code the benchmarks
 * use, and checks every number against what the mock was told to do. Exit 0 only if all pass.
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { withDefault } from "@optique/core/modifiers";
import { command, constant, flag } from "@optique/core/primitives";
import { ExitCode } from "../cli/exit_codes.ts";
import { renderChecks, verdictLine } from "../report/checks_table.ts";
import type { Check } from "../selftest/checks.ts";
import { faultChecks } from "../selftest/fault_checks.ts";
import { headroomChecks } from "../selftest/headroom.ts";
import { personalityChecks } from "../selftest/personality_checks.ts";
import { makeSender, PERSONALITIES } from "../selftest/send.ts";
import type { CommandContext } from "./context.ts";

/** Parser for `ik selftest`. */
export const selftestCommand = command(
  "selftest",
  object({
    cmd: constant("selftest" as const),
    quick: withDefault(flag("--quick", { description: message`One personality (vllm), no faults, no headroom: under 10 s.` }), false),
    json: withDefault(flag("--json", { description: message`Print the checks as one JSON object on stdout.` }), false),
  }),
  {
    brief: message`Check ik against its built-in mock.`,
    description: message`Starts the mock (a separate process per personality, on 127.0.0.1 with a free port), measures TTFT, TPOT, token counts, exact length vs natural EOS, every fault kind and the client's headroom through the real client, and prints measured vs expected with PASS/FAIL. Exit 0 only if every check passes.`,
  },
);

/** Runs `ik selftest`. */
export async function runSelftest(ctx: CommandContext, flags: { cmd: "selftest"; quick: boolean; json: boolean }): Promise<number> {
  const t0 = performance.now();
  const deps = { rt: ctx.runtime, send: makeSender(ctx.signal), ikArgv: ctx.runtime.selfArgv() };
  const engines = flags.quick ? PERSONALITIES.slice(0, 1) : PERSONALITIES;
  const progress = (s: string) => {
    if (!ctx.json) ctx.err(`selftest: ${s}\n`);
  };
  const checks: Check[] = [];
  // Personalities run side by side: each has its own mock process, and the client is idle
  // most of the time (it waits on the mock's clock), so they do not disturb each other's timing.
  progress(`personalities: ${engines.join(", ")}`);
  for (const part of await Promise.all(engines.map((e) => personalityChecks(deps, e)))) checks.push(...part);
  if (!flags.quick && !ctx.signal.aborted) {
    progress("faults");
    for (const part of await Promise.all(engines.map((e) => faultChecks(deps, e)))) checks.push(...part);
    progress("client headroom at 1, 64 and 256 streams");
    if (!ctx.signal.aborted) checks.push(...await headroomChecks(deps));
  }
  const seconds = (performance.now() - t0) / 1000;
  const failed = checks.some((c) => c.status === "FAIL") || checks.length === 0;
  if (ctx.json) {
    ctx.out(JSON.stringify({ kind: "selftest", ok: !failed, quick: flags.quick, seconds, checks }) + "\n");
  } else {
    ctx.out(renderChecks(checks, ctx.runtime.isTerminal("stdout") && !ctx.runtime.env("NO_COLOR")) + "\n");
    ctx.out(verdictLine(checks, seconds) + "\n");
  }
  if (ctx.signal.aborted) return ExitCode.INTERRUPTED;
  return failed ? ExitCode.VERDICT_NEGATIVE : ExitCode.OK;
}
