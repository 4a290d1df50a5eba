/**
 * `ik selftest`: starts the embedded mock in its own process on 127.0.0.1:0 for each engine
 * personality, measures it over real loopback HTTP through the same client code the benchmarks
 * use, and checks every number against what the mock was told to do and what its own clock says
 * it did. Exit 0 only if every check passes; 1 if one failed; 69 when none failed but the host was
 * too busy to judge a timing check (BUSY: inconclusive, rerun on a quiet machine); 130 when
 * interrupted.
 */
import { tmpdir } from "node:os";
import { checkWritable, isOutputError } from "../evidence/mod.ts";
import { IkError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { nextStepLine, overallVerdict, renderSelftest, verdictLine } from "../report/terminal/checks_table.ts";
import type { Check } from "../selftest/checks.ts";
import { faultChecks } from "../selftest/fault_checks.ts";
import { headroomChecks } from "../selftest/headroom.ts";
import { mismatchChecks } from "../selftest/mismatch_checks.ts";
import { specChecks, tokensPerEventChecks } from "../selftest/packed_checks.ts";
import { personalityChecks } from "../selftest/personality_checks.ts";
import { singleModeChecks } from "../selftest/single_mode_checks.ts";
import { loadChecks } from "../selftest/load_checks.ts";
import { makeSender, PERSONALITIES, type Personality, type SelftestDeps } from "../selftest/send.ts";
import type { CommandContext } from "./context.ts";
import type { SelftestFlags } from "./selftest_flags.ts";

/** The runs for one personality, one after the other (each on its own mock). */
async function personalityChain(deps: SelftestDeps, engine: Personality, quick: boolean): Promise<Check[]> {
  const steps: ((d: SelftestDeps, e: Personality) => Promise<Check[]>)[] = [
    personalityChecks,
    tokensPerEventChecks,
  ];
  if (engine === "vllm" || (!quick && engine === "sglang")) steps.push(specChecks);
  // A lying usage: where ids stream (vllm, also in --quick), and where none do (the full run).
  if (engine === "vllm" || !quick) steps.push(mismatchChecks);
  const out: Check[] = [];
  for (const step of steps) {
    if (deps.signal?.aborted) break;
    out.push(...await step(deps, engine));
  }
  return out;
}

/** Runs `ik selftest`. */
export async function runSelftest(
  ctx: CommandContext,
  flags: SelftestFlags,
): Promise<number> {
  const t0 = performance.now();
  // The mocks' folders and logs go to the temp folder: one that cannot be written is exit 74, found
  // now, not a FAIL of ik's measurements later.
  await checkWritable([tmpdir()]).catch((e) => {
    throw isOutputError(e) ? new IkError(e.code, e.where, `${e.message} (the temp folder: the selftest's mocks keep their logs there)`, "set TMPDIR to a writable folder with a few MB free") : e;
  });
  const deps: SelftestDeps = {
    rt: ctx.runtime,
    send: makeSender(ctx.signal),
    ikArgv: ctx.runtime.selfArgv(),
    signal: ctx.signal,
  };
  const engines = flags.quick ? PERSONALITIES.slice(0, 1) : PERSONALITIES;
  const progress = (s: string) => {
    if (!ctx.json) ctx.err(`selftest: ${s}\n`);
  };
  const checks: Check[] = [];
  // Personalities run side by side: each has its own mock process, and the client is idle
  // most of the time (it waits on the mock's clock), so they do not disturb each other's timing.
  progress(`personalities: ${engines.join(", ")} (packed events, speculative decoding, usage mismatch)`);
  for (const part of await Promise.all(engines.map((e) => personalityChain(deps, e, flags.quick)))) {
    checks.push(...part);
  }
  if (!flags.quick && !ctx.signal.aborted) {
    progress("bench serve single mode, and load mode against the batching simulator");
    for (const part of await Promise.all([singleModeChecks(deps), loadChecks(deps)])) checks.push(...part);
  }
  if (!flags.quick && !ctx.signal.aborted) {
    progress("faults");
    for (const part of await Promise.all(engines.map((e) => faultChecks(deps, e)))) checks.push(...part);
    progress("client headroom at 1, 64 and 256 streams");
    if (!ctx.signal.aborted) checks.push(...await headroomChecks(deps));
  }
  const seconds = (performance.now() - t0) / 1000;
  if (ctx.signal.aborted) {
    // What ran before the interrupt is no verdict: say so, and nothing that looks like one.
    ctx.err(`selftest: interrupted after ${seconds.toFixed(1)} s; no verdict\n`);
    if (ctx.json) {
      ctx.out(
        JSON.stringify({
          kind: "selftest",
          ok: false,
          verdict: "INTERRUPTED",
          interrupted: true,
          quick: flags.quick,
          seconds,
          checks,
        }) + "\n",
      );
    }
    return ExitCode.INTERRUPTED;
  }
  const verdict = overallVerdict(checks);
  if (ctx.json) {
    ctx.out(
      JSON.stringify({
        kind: "selftest",
        ok: verdict === "PASS",
        verdict,
        interrupted: false,
        quick: flags.quick,
        seconds,
        checks,
      }) + "\n",
    );
  } else {
    const color = ctx.runtime.isTerminal("stdout") && !ctx.runtime.env("NO_COLOR");
    ctx.out(renderSelftest(checks, color, flags.verbose) + "\n");
    ctx.out(verdictLine(checks, seconds) + "\n");
    const next = nextStepLine(checks);
    if (next) ctx.out(next + "\n");
  }
  return verdict === "PASS"
    ? ExitCode.OK
    : verdict === "FAIL"
    ? ExitCode.VERDICT_NEGATIVE
    : ExitCode.UNAVAILABLE;
}
