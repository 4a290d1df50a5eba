/**
 * A whole `ik bench rounds` run (seed 001's `run_rounds`): the manifest, the design, plan.json,
 * every cell under the GPU lock in Williams order (each cell's JSON written as it ends), the
 * adaptive stop at whole periods, then summary.json and summary.md under `<run-dir>/rounds/`.
 * @module
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { IkError, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import type { ExecFn } from "../gpu/mod.ts";
import { acquireGpuLock } from "../engines_host/gpu_lock.ts";
import { WARMUP_KIND } from "../engines_host/server.ts";
import { applyPin, intakePin } from "../bench/intake_pin.ts";
import { outputError } from "../evidence/output_error.ts";
import { checkWritable, registerArgvSecrets, registerJsonSecrets, registerSecretEnv, scrubArgv, scrubbedJson, scrubText, storeRoot, writeWhole } from "../evidence/mod.ts";
import type { PromptSet } from "../prompts/mod.ts";
import type { Runtime } from "../runtime/mod.ts";
import { type AdaptivePlan, adaptiveCheck, adaptiveStep, planRounds } from "./adaptive.ts";
import { type Cell, type CellConfig, type LoadSchedule, runCell } from "./cell.ts";
import { resolvedSummary } from "./cell_metrics.ts";
import { selectEngines } from "./engine_select.ts";
import { parseManifest } from "./manifest.ts";
import { movePreviousRun, type PreviousRunMove } from "./previous_run.ts";
import { shellJoin } from "./format.ts";
import { roundsMarkdown } from "./markdown.ts";
import { hasFlag, shellSplit } from "../cli/argv_words.ts";
import { checkLiveLabels, checkRoundsExtraBody, RESERVED_SERVE_FLAGS, resolveJsonSetting, scheduleFixedBy } from "./serve_argv.ts";
import { maxFailFrom } from "./cell_checks.ts";
import { type RoundsSummary, summarize } from "./summary.ts";
import { type RoundDesign, roundOrders } from "./williams.ts";

/** The inputs of a run (the command's flags, parsed). */
export interface RoundsOptions {
  manifestPath: string;
  /** The loaded prompt set and the argument the child gets for it (a path or `builtin:default`). */
  prompts: PromptSet;
  promptsArg: string;
  mode: "single" | "load";
  rounds: number | null;
  engines: string | null;
  runDir: string | null;
  gpuLockPath: string;
  startupTimeoutS: number;
  stopTimeoutS: number;
  serveTimeoutS: number;
  warmup: number;
  warmupMaxTokens: number;
  serveCmd: string | null;
  serveArgs: string | null;
  passEnv: string[];
  gpuMemToleranceMib: number;
  gpuMemWaitS: number;
  pollS: number;
  refE2eMs: number | null;
  extraBody: string | undefined;
  chatTemplateKwargs: string | undefined;
  ciTarget: number | null;
  minRounds: number | null;
  /** The command line, for the lock's owner entry. */
  command: string;
}

/** What a run leaves. */
export interface RoundsResult {
  plan: Record<string, unknown>;
  cells: Cell[];
  summary: RoundsSummary;
  resolved: ReturnType<typeof resolvedSummary>;
  markdown: string;
  outDir: string;
  interrupted: boolean;
}

/** Runs every (round, engine) cell; progress lines go to `progress`. */
export async function runRounds(
  rt: Runtime, exec: ExecFn, o: RoundsOptions, progress: (line: string) => void, signal?: AbortSignal,
  /** A cell's own progress line (its `bench serve` stderr), with the cell it came from. */
  cellProgress?: (cell: string, line: string) => void,
): Promise<RoundsResult> {
  const manifestPath = resolve(rt.cwd(), o.manifestPath);
  let text: string;
  try {
    text = readFileSync(manifestPath, "utf8");
  } catch (e) {
    throw usageError("--manifest", `cannot read ${o.manifestPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, "check the path");
  }
  const manifest = parseManifest(text, o.manifestPath);
  // A secret-named env value or a launch flag's secret (`vllm serve --api-key X`) that an engine
  // prints must not reach its log, a cell or the summary.
  for (const e of manifest.engines) {
    registerSecretEnv(e.env);
    registerArgvSecrets(e.launch, (n) => e.env[n] ?? rt.env(n));
  }
  // workload.extra_body / chat_template_kwargs secrets, echoed back by a server, likewise.
  for (const v of [manifest.extra_body, manifest.chat_template_kwargs]) if (v) registerJsonSecrets(JSON.stringify(v));
  const specs = selectEngines(manifest.engines, o.engines);
  if (!specs.length) throw usageError("--engines", "selects no engine");
  const { rounds, adaptive } = planRounds({ nEngines: specs.length, rounds: o.rounds, ciTarget: o.ciTarget, minRounds: o.minRounds, mode: o.mode });
  if (o.refE2eMs !== null && !(o.refE2eMs > 0)) throw usageError("--ref-e2e-ms", `${o.refE2eMs} is not > 0`);
  if (o.refE2eMs !== null && o.mode !== "load") throw usageError("--ref-e2e-ms", "is for --mode load");
  const serveArgs = o.serveArgs ? shellSplit(o.serveArgs, "--serve-args") : [];
  if (o.serveCmd === null) {
    const clash = RESERVED_SERVE_FLAGS.find((f) => hasFlag(serveArgs, f));
    if (clash) throw usageError("--serve-args", `sets ${clash}, which bench rounds sets for every cell`, clash === "--rounds" ? "use bench rounds --rounds (each cell is one round of each engine)" : "drop it from --serve-args");
  }
  // Each child would refuse a secret-looking label with live metrics, but only after its engine started.
  checkLiveLabels(o.serveCmd, serveArgs, specs.map((s) => ({ label: s.label, where: `engines[${manifest.engines.indexOf(s)}]` })));
  const fixedBy = o.mode === "load" ? scheduleFixedBy(serveArgs) : null;
  if (fixedBy && o.refE2eMs !== null) throw usageError("--ref-e2e-ms", `conflicts with ${fixedBy} in --serve-args, which already fixes the schedule`, "give one");
  let schedule: LoadSchedule | null = null;
  if (o.mode === "load") {
    schedule = fixedBy
      ? { fixed_by: fixedBy, ref_e2e_ms: null, source: `${fixedBy} in --serve-args (the same for every engine)` }
      : o.refE2eMs !== null
      ? { fixed_by: null, ref_e2e_ms: o.refE2eMs, source: "--ref-e2e-ms of bench rounds, passed to every cell" }
      : { fixed_by: null, ref_e2e_ms: null, source: "not yet measured (the first load cell's reference requests set it)" };
  }
  const body = resolveJsonSetting({ flag: "--extra-body", flagValue: o.extraBody, manifestValue: manifest.extra_body, manifestKey: "extra_body", serveArgs });
  // The child checks --extra-body too, but only after its engine has launched: check it once here.
  checkRoundsExtraBody(body, o.manifestPath);
  const maxFail = maxFailFrom(serveArgs);
  let ctk = resolveJsonSetting({ flag: "--chat-template-kwargs", flagValue: o.chatTemplateKwargs, manifestValue: manifest.chat_template_kwargs, manifestKey: "chat_template_kwargs", serveArgs });
  const runDir = o.runDir ? resolve(rt.cwd(), o.runDir) : manifest.run_dir ? resolve(rt.cwd(), manifest.run_dir) : dirname(manifestPath);
  for (const d of [runDir, dirname(manifestPath)]) {
    const pin = await intakePin(d);
    if (!pin) continue;
    const merged = applyPin(ctk.value ?? {}, pin, d);
    if (JSON.stringify(merged) !== JSON.stringify(ctk.value ?? {})) ctk = { value: merged, source: ctk.value ? `${ctk.source} + intake pin` : "intake pin (intake.normalized.json)" };
    break;
  }
  const labels = specs.map((s) => s.label);
  let design: RoundDesign = roundOrders(labels, rounds);
  const outDir = join(runDir, "rounds");
  const plan: Record<string, unknown> = {
    mode: o.mode, rounds, engines: specs.map((s) => ({ label: s.label, name: s.name, kind: s.kind, kind_source: s.kind_source, version: s.version, port: s.port, host: s.host, ready_check: s.ready_check, metrics_path: s.metrics_path, role: s.role, expect: s.expect, env_keys: Object.keys(s.env).sort() })),
    design, prompts: { name: o.prompts.name, sha256: o.prompts.sha256, n: o.prompts.prompts.length, buckets: bucketCounts(o.prompts) },
    settings: {
      startup_timeout_s: o.startupTimeoutS, stop_timeout_s: o.stopTimeoutS, serve_timeout_s: o.serveTimeoutS, warmup: o.warmup, warmup_max_tokens: o.warmupMaxTokens,
      gpu_mem_tolerance_mib: o.gpuMemToleranceMib, gpu_mem_wait_s: o.gpuMemWaitS, poll_s: o.pollS, serve_args: o.serveArgs === null ? null : shellJoin(scrubArgv(serveArgs)), serve_cmd_custom: o.serveCmd !== null,
      pass_env: o.passEnv, warmup_kind: WARMUP_KIND,
    },
    manifest_sha256: createHash("sha256").update(text).digest("hex"),
    manifest_warnings: manifest.warnings,
    chat_template_kwargs: { value: ctk.value, source: ctk.source },
  };
  if (schedule) plan.load_schedule = schedule;
  if (body.value) plan.extra_body = { value: body.value, source: body.source };
  if (adaptive) plan.adaptive = adaptive;
  // Every output folder (the run dir, the store the cells' records go to, the lock's folder) is
  // checked writable before an engine is launched or a request sent (exit 74 otherwise).
  await checkWritable([runDir, storeRoot((n) => rt.env(n), rt.cwd()), { dir: dirname(resolve(rt.cwd(), o.gpuLockPath)), as: `--gpu-lock ${o.gpuLockPath}` }]);
  const lock = await acquireGpuLock(o.gpuLockPath, { pid: rt.pid(), command: o.command, env: (n) => rt.env(n), pidAlive: rt.pidAlive });
  const cells: Cell[] = [];
  let interrupted = false;
  // A cell whose bench serve could not write its output (exit 74): the next ones would fail the same way.
  let writeFailure: string | null = null;
  // Written whole or not at all: a full disk leaves no torn plan, cell or summary (exit 74).
  const writePlan = () => writeWhole(join(outDir, "plan.json"), scrubbedJson(plan, 2) + "\n", 0o644);
  try {
    // A rerun into the same run dir: the earlier run's outputs are kept, moved aside, never mixed in.
    let moved: PreviousRunMove | null;
    try {
      moved = movePreviousRun(runDir);
    } catch (e) {
      throw outputError(e, join(runDir, "previous"), "the earlier run's outputs in the run dir could not be moved aside");
    }
    if (moved) {
      plan.previous_run = { moved_to: moved.to, files: moved.files };
      progress(`the run dir held an earlier run: its ${moved.files} file(s) were moved to ${join(runDir, moved.to)}`);
    }
    await rt.files.mkdir(outDir);
    await rt.files.mkdir(join(runDir, "logs"));
    plan.gpu_lock = { path: lock.path, held: lock.held, note: lock.note };
    plan.started = new Date().toISOString();
    await writePlan();
    const cfg: CellConfig = {
      rt, exec, runDir, storeRoot: resolve(rt.cwd(), storeRoot((n) => rt.env(n), rt.cwd())), promptsArg: o.promptsArg, warmupPrompts: o.prompts.prompts.slice(0, 8), mode: o.mode,
      startupTimeoutMs: o.startupTimeoutS * 1000, stopTimeoutMs: o.stopTimeoutS * 1000, serveTimeoutMs: o.serveTimeoutS * 1000,
      warmup: o.warmup, warmupMaxTokens: o.warmupMaxTokens, pollMs: o.pollS * 1000, gpuMemToleranceMib: o.gpuMemToleranceMib,
      gpuMemWaitMs: o.gpuMemWaitS * 1000, serveCmd: o.serveCmd, serveArgs, passEnv: o.passEnv, modelId: manifest.model_id, maxFail,
      extraBody: body.value, chatTemplateKwargs: ctk.value, childEnv: lock.childEnv, lastEvidence: {}, schedule, signal,
    };
    const byLabel = new Map(specs.map((s) => [s.label, s]));
    outer:
    for (let k = 1; k <= design.orders.length; k++) {
      const order = design.orders[k - 1];
      for (let pos = 0; pos < order.length; pos++) {
        if (signal?.aborted) {
          interrupted = true;
          break outer;
        }
        const label = order[pos];
        progress(`round ${k}/${rounds} · ${label} (position ${pos + 1}/${order.length}): launching`);
        const cellName = `${label} r${k}`;
        const cell = await runCell(byLabel.get(label)!, k, pos, cellProgress ? { ...cfg, onServeLine: (l) => cellProgress(cellName, l) } : cfg);
        cells.push(cell);
        await writeWhole(join(outDir, `${label}.r${k}.json`), scrubbedJson(cell, 2) + "\n", 0o644);
        progress(`round ${k}/${rounds} · ${label}: ${cell.status}${cell.detail ? ` (${cell.detail})` : ""}`);
        if (cell.interrupted || signal?.aborted) {
          interrupted = true;
          break outer;
        }
        const serve = cell.serve as { returncode?: number | null; stderr_tail?: string | null } | undefined;
        if (serve?.returncode === ExitCode.IO_ERROR) {
          const line = (serve.stderr_tail ?? "").split("\n").reverse().find((l) => l.startsWith("ik: "));
          writeFailure = `cell ${label} r${k}: bench serve could not write its output (${line ? line.slice(4).split("; ")[0] : "exit 74"})`;
          plan.stopped_on_write_failure = { after_cells: cells.length, note: writeFailure };
          break outer;
        }
      }
      if (!adaptive) continue;
      const step = adaptiveStep(k, adaptive, rounds);
      if (!step.check) continue;
      const check = adaptiveCheck(cells, labels, k, adaptive.ci_target);
      adaptive.checks.push(check);
      adaptive.met = check.met;
      if (check.met && step.stopIfMet) {
        plan.stopped_early = { round: k, rule: adaptive.rule, widths: check.widths };
        plan.rounds = k;
        plan.design = design = roundOrders(labels, k);
        progress(`adaptive stop after round ${k}: every engine's CI is within the target`);
        break;
      }
    }
    if (adaptive) finishAdaptive(adaptive, plan);
    if (interrupted) plan.interrupted = { after_cells: cells.length, note: "interrupted: the cells that finished are kept; the engine of the running cell was stopped" };
    // A run stopped short: what ran (whole rounds, and whether their order is balanced), beside what was planned.
    if (interrupted || writeFailure !== null) plan.ran = ranSoFar(cells, labels);
    plan.ended = new Date().toISOString();
  } finally {
    await lock.release();
  }
  if (schedule) {
    const refs = new Set(cells.filter((c) => c.status === "ok" && c.load_schedule).map((c) => c.load_schedule!.ref_e2e_ms_used ?? null));
    schedule.shared = schedule.fixed_by !== null || o.refE2eMs !== null || (refs.size === 1 && !refs.has(null));
    if (schedule.fixed_by === null && schedule.ref_e2e_ms === null) {
      schedule.source = "no reference latency reported by bench serve: each engine's concurrency levels were turned into rates with its own reference requests";
    }
    plan.load_schedule = schedule;
  }
  plan.serve_evidence_final = o.mode === "single" ? cellsLastEvidence(cells) : null;
  const summary = summarize(cells, labels, { mode: o.mode });
  const resolved = resolvedSummary(cells, labels);
  const markdown = roundsMarkdown(summary, plan as never, cells, resolved);
  const writeSummary = async () => {
    await writePlan();
    await writeWhole(join(outDir, "summary.json"), scrubbedJson({ plan, summary, resolved_config: resolved, cells: cells.map(cellBrief) }, 2) + "\n", 0o644);
    await writeWhole(join(outDir, "summary.md"), scrubText(markdown), 0o644);
  };
  if (writeFailure !== null) {
    // The summary of the cells that ran is kept if the disk still takes it; the exit is 74 either way.
    const kept = await writeSummary().then(() => `what finished is summarised in ${outDir}`, () => `the cells that finished are in ${outDir}`);
    throw new IkError(ExitCode.IO_ERROR, "bench rounds", `${writeFailure}; stopped after ${cells.length} cell(s); ${kept}`, "free space or choose another output folder ($IK_RUNS_DIR, --run-dir), then rerun");
  }
  await writeSummary();
  return { plan, cells, summary, resolved, markdown, outDir, interrupted };
}

function bucketCounts(set: PromptSet): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of set.prompts) out[p.bucket ?? "all"] = (out[p.bucket ?? "all"] ?? 0) + 1;
  return out;
}

function finishAdaptive(adaptive: AdaptivePlan, plan: Record<string, unknown>): void {
  adaptive.stopped_early = "stopped_early" in plan;
  adaptive.met ??= false;
}

/** Single mode: each engine's last record id (it holds all that engine's rounds). */
function cellsLastEvidence(cells: readonly Cell[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of cells) {
    const id = c.serve?.evidence_id;
    if (c.status === "ok" && typeof id === "string") out[c.label] = id;
  }
  return out;
}

/** A cell as summary.json lists it. */
export function cellBrief(c: Cell): Record<string, unknown> {
  return { round: c.round, position: c.position, label: c.label, status: c.status, detail: c.detail ?? null, file: `rounds/${c.label}.r${c.round}.json` };
}

/**
 * What a run stopped short (interrupted, or a failed write) ran: its cells, its whole rounds (cells
 * run round by round, an interrupted cell not counted) and whether those rounds' order is balanced.
 */
export function ranSoFar(cells: readonly { interrupted?: boolean }[], labels: readonly string[]): { cells: number; whole_rounds: number; balanced: boolean } {
  const whole = Math.floor(cells.filter((c) => !c.interrupted).length / labels.length);
  return { cells: cells.length, whole_rounds: whole, balanced: whole > 0 && roundOrders(labels, whole).balanced };
}
