/**
 * `ik bench rounds MANIFEST`: every engine of a manifest, R rounds in a Williams order, one server
 * at a time: launch, readiness, warm-up, the child `ik bench serve`, stop of the whole process
 * group, GPU memory back to baseline, resolved config; then the medians over rounds with CIs and
 * the paired ratios to the reference engine, which is named best only where every ratio CI excludes
 * 1 (seed 001, issue 18). Exit 0 when every cell was ok, 1 when any was not (a model.id the engine
 * does not serve, an engine that exited before its stop, failures over --slo-max-fail, a [HARD
 * GATE] violation among them), 64/65/69 for usage, manifest and lock problems, 74 when the run dir,
 * the store or the lock cannot be written (checked before an engine starts; a cell whose bench
 * serve exits 74 stops the run), 130 when interrupted.
 * @module
 */
import { resolve } from "node:path";
import { formatMessage } from "@optique/core/message";
import { parse } from "@optique/core/parser";
import { hasFlag, shellSplit } from "../cli/argv_words.ts";
import { benchServeCommand } from "./bench_serve_flags.ts";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { defaultGpuLockPath } from "../engines_host/gpu_lock.ts";
import { loadPromptSet, type PromptSet } from "../prompts/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { cellBrief, runRounds } from "../rounds/run.ts";
import { RESERVED_SERVE_FLAGS, SERVE_CMD_ENV } from "../rounds/serve_argv.ts";
import { formatValue } from "../rounds/format.ts";
import type { RoundsSummary } from "../rounds/summary.ts";
import { runtimeExec } from "./_exec.ts";
import type { CommandContext } from "./context.ts";
import { cellProgressLine } from "../report/terminal/cell_progress.ts";
import type { BenchRoundsFlags } from "./bench_rounds_flags.ts";

function summaryText(summary: RoundsSummary, cells: { status: string | null }[], outDir: string): string {
  const lines: string[] = [];
  const main = summary.rows.filter((r) => r.bucket === "all");
  const show = main.length ? main : summary.rows;
  const w = (s: string, n: number) => s.length >= n ? s : s + " ".repeat(n - s.length);
  const we = Math.max(8, ...show.map((r) => escapeTerminalLine(r.engine).length + 2)), wm = Math.max(8, ...show.map((r) => r.metric.length));
  lines.push(`${w("engine", we)} ${w("metric", wm)} ${w("median", 10)} ${w("95% CI", 22)} ${w("ratio", 8)} ${w("ratio 95% CI", 16)} reading`);
  for (const r of show) {
    const mark = r.engine === r.best ? " *" : r.engine === r.reference ? " =" : r.excluded_from_best ? " !" : "";
    const ci = r.ci95[0] === null ? "-" : `${formatValue(r.ci95[0])} - ${formatValue(r.ci95[1])}`;
    const rci = r.ratio_ci95[0] === null ? "-" : `${formatValue(r.ratio_ci95[0])} - ${formatValue(r.ratio_ci95[1])}`;
    const median = `${r.lower_bound ? "≥ " : ""}${formatValue(r.median)}`;
    const reading = [r.verdict, r.n_star_note].filter(Boolean).join("; ");
    lines.push(`${w(escapeTerminalLine(r.engine) + mark, we)} ${w(r.metric, wm)} ${w(median, 10)} ${w(ci, 22)} ${w(formatValue(r.ratio_to_best), 8)} ${w(rci, 16)} ${escapeTerminalLine(reading)}`);
  }
  const bad = cells.filter((c) => c.status !== "ok").length;
  lines.push("", `* best engine (every other ratio CI excludes 1); = reference of the ratios, no clear best; ! never ranked (failed requests or [HARD GATE]); ≥ a lower bound. ${cells.length} cells, ${bad} not ok.`);
  lines.push(`Full report: ${escapeTerminalLine(outDir)}/summary.md (all buckets, resolved configs, failed cells).`);
  return lines.join("\n") + "\n";
}

/** Runs `ik bench rounds`. */
export async function runBenchRounds(ctx: CommandContext, f: BenchRoundsFlags): Promise<number> {
  const rt = ctx.runtime;
  if (f.manifestArg !== undefined && f.manifest !== undefined && f.manifestArg !== f.manifest) {
    throw usageError("--manifest", `names ${f.manifest} but the MANIFEST argument is ${f.manifestArg}`, "give one");
  }
  const manifestPath = f.manifest ?? f.manifestArg;
  if (manifestPath === undefined) throw usageError("bench rounds", "needs a manifest", "ik bench rounds manifest.json (see --help)");
  let prompts: PromptSet;
  let promptsArg: string;
  if (f.prompts === undefined || f.prompts === BUILTIN_NAME) {
    prompts = loadBuiltinPromptSet();
    promptsArg = BUILTIN_NAME;
  } else {
    promptsArg = resolve(rt.cwd(), f.prompts);
    prompts = await loadPromptSet(promptsArg);
  }
  const serveCmd = f.serveCmd ?? (rt.env(SERVE_CMD_ENV) || null);
  // Every cell passes --serve-args to ik bench serve: flags it does not know or values it cannot
  // read are refused now, before any engine is launched (each cell exited 64 after its engine started).
  const words = serveCmd === null && f.serveArgs ? shellSplit(f.serveArgs, "--serve-args") : [];
  // A flag bench rounds sets itself is refused by runRounds with its own words.
  if (words.length && !RESERVED_SERVE_FLAGS.some((flag) => hasFlag(words, flag))) {
    const r = parse(benchServeCommand(), ["serve", "--base-url", "http://127.0.0.1:1", "--model", "m", "--mode", f.mode, ...words]);
    if (!r.success) {
      const why = formatMessage(r.error, { colors: false, quotes: true }).replace(/\s+/g, " ").trim();
      throw usageError("--serve-args", `ik bench serve refuses them: ${why}`, "fix --serve-args; every cell passes them to ik bench serve");
    }
  }
  const cellLine = cellProgressLine((t) => ctx.err(t), rt.isTerminal("stderr"));
  const res = await runRounds(rt, runtimeExec(rt), {
    manifestPath, prompts, promptsArg, mode: f.mode, rounds: f.rounds ?? null, engines: f.engines ?? null, runDir: f.runDir ?? null,
    gpuLockPath: f.gpuLock ?? defaultGpuLockPath((n) => rt.env(n)), startupTimeoutS: f.startupTimeoutS, stopTimeoutS: f.stopTimeoutS,
    serveTimeoutS: f.serveTimeoutS, warmup: f.warmup, warmupMaxTokens: f.warmupMaxTokens, serveCmd, serveArgs: f.serveArgs ?? null,
    passEnv: [...f.passEnv], gpuMemToleranceMib: f.gpuMemToleranceMib, gpuMemWaitS: f.gpuMemWaitS, pollS: f.pollS, refE2eMs: f.refE2eMs ?? null,
    extraBody: f.extraBody, chatTemplateKwargs: f.chatTemplateKwargs, ciTarget: f.ciTarget ?? null, minRounds: f.minRounds ?? null,
    command: `ik bench rounds ${manifestPath}`,
  }, (line) => cellLine.end(`bench rounds: ${escapeTerminalLine(line)}\n`), ctx.signal, (cell, line) => cellLine.show(cell, line));
  cellLine.end("");
  // summary.json's content (its cells too), and where it is.
  if (ctx.json) ctx.out(JSON.stringify({ plan: res.plan, summary: res.summary, resolved_config: res.resolved, cells: res.cells.map(cellBrief), out_dir: res.outDir }) + "\n");
  else ctx.out(summaryText(res.summary, res.cells, res.outDir));
  if (res.interrupted) {
    ctx.err(`ik: bench rounds: interrupted after ${res.cells.length} cell(s); what finished is in ${escapeTerminalLine(res.outDir)}\n`);
    return ExitCode.INTERRUPTED;
  }
  return res.cells.every((c) => c.status === "ok") && res.cells.length > 0 ? ExitCode.OK : ExitCode.VERDICT_NEGATIVE;
}
