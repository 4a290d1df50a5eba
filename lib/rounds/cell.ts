/**
 * One (round, engine) cell of `ik bench rounds` (seed 001's `run_cell`): port check, launch in a
 * clean environment, readiness, served model, warm-up, metrics before, the child `ik bench serve`,
 * metrics after, stop of the whole process group, GPU memory back to baseline, resolved config.
 * A failing engine never throws: it gives the cell a status. The runtime and nvidia-smi runner are
 * injected.
 * @module
 */
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { listModels, parseEndpoint } from "../client/mod.ts";
import type { ExecFn } from "../gpu/mod.ts";
import { type GpuMemoryReading, gpuMemoryUsedMib, waitGpuMemory } from "../engines_host/gpu_memory.ts";
import { cleanEnv } from "../engines_host/clean_env.ts";
import { checkExpect } from "../engines_host/expect.ts";
import { metricsDelta } from "../engines_host/metrics_delta.ts";
import { probePort } from "../engines_host/port_check.ts";
import { parseResolvedConfig } from "../engines_host/resolved_config.ts";
import { launchEngine, LaunchError, type LaunchedEngine, scrapeText, stopGroup, waitReady, warmupEngine } from "../engines_host/server.ts";
import type { EngineKind } from "../engines/mod.ts";
import { scrubbedJson, scrubText } from "../evidence/mod.ts";
import { scrubFileInPlace } from "../evidence/scrub_file.ts";
import type { Prompt } from "../prompts/mod.ts";
import type { Runtime } from "../runtime/mod.ts";
import { type CellMetrics, type CellResolved, cellStatus, parseServeOutput, recordBucketMetrics, referenceE2eMs, roundMetricsFromRows, ROW_METRICS } from "./cell_metrics.ts";
import { checkServedModel, engineExitedDetail, hardGateDetail, tooManyFailures } from "./cell_checks.ts";
import { metricsPathOf } from "./engine_select.ts";
import type { EngineSpec } from "./manifest.ts";
import { serveArgv } from "./serve_argv.ts";
import { runServe, storedServeArgv } from "./serve_child.ts";

/** The load schedule every engine shares (plan.json `load_schedule`). */
export interface LoadSchedule {
  /** The `--serve-args` flag that fixes it, or null. */
  fixed_by: string | null;
  /** The shared reference latency, once known. */
  ref_e2e_ms: number | null;
  /** Where it came from. */
  source: string;
  /** The cell that measured it. */
  pilot?: string;
  /** Set at the end: whether every engine got the same schedule. */
  shared?: boolean;
}

/** Settings shared by every cell of a run (mutable: single-mode chaining, the load reference). */
export interface CellConfig {
  rt: Runtime;
  exec: ExecFn;
  runDir: string;
  storeRoot: string;
  /** Path of the prompt set as the child gets it (or `builtin:default`). */
  promptsArg: string;
  /** The set's first prompts, for the warm-up. */
  warmupPrompts: readonly Prompt[];
  mode: "single" | "load";
  startupTimeoutMs: number;
  stopTimeoutMs: number;
  serveTimeoutMs: number;
  warmup: number;
  warmupMaxTokens: number;
  pollMs: number;
  gpuMemToleranceMib: number;
  gpuMemWaitMs: number;
  serveCmd: string | null;
  serveArgs: string[];
  passEnv: string[];
  modelId: string | null;
  /** `--slo-max-fail` from `--serve-args` (single mode: more failures make the cell not ok), or null. */
  maxFail: number | null;
  extraBody: Record<string, unknown> | null;
  chatTemplateKwargs: Record<string, unknown> | null;
  /** Variables for the child `bench serve` (IK_GPU_LOCK_HELD). */
  childEnv: Record<string, string>;
  /** Single mode: each engine's latest complete record. */
  lastEvidence: Record<string, string>;
  /** Told each (scrubbed) stderr line of the cell's `bench serve` as it is written: its progress, forwarded. */
  onServeLine?: (line: string) => void;
  /** Load mode: the shared schedule. */
  schedule: LoadSchedule | null;
  signal?: AbortSignal;
}

/** One cell's record (`rounds/<label>.r<k>.json`). */
export interface Cell {
  round: number;
  position: number;
  label: string;
  kind: string;
  status: string | null;
  detail?: string | null;
  log: string;
  t_start: number;
  t_end?: number;
  env?: { keys: string[]; notes: string[] };
  port?: { host: string; port: number; connect: string; bind: string };
  pid?: number;
  ready?: Record<string, unknown>;
  served_model?: string | null;
  /** Every model /v1/models listed. */
  served_models?: string[];
  model?: string;
  warmup?: Record<string, unknown>;
  serve?: Record<string, unknown>;
  metrics?: CellMetrics;
  metrics_source?: string;
  metrics_path?: { path: string; source: string };
  prometheus?: Record<string, unknown>;
  load_schedule?: Record<string, unknown>;
  stop?: Record<string, unknown>;
  gpu_memory?: Record<string, unknown>;
  resolved_config?: CellResolved;
  log_tail?: string;
  interrupted?: boolean;
  /** Things a reader of this cell should know (e.g. a metric this round could not measure). */
  notes?: string[];
}

function tail(path: string, n: number): string {
  try {
    const data = readFileSync(path);
    return new TextDecoder().decode(data.subarray(Math.max(0, data.length - n)));
  } catch {
    return "";
  }
}

function readJson(path: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    return v && typeof v === "object" ? v : null;
  } catch {
    return null;
  }
}

/** The request rows of a record (its `requests` artifact), or null. */
function requestRows(record: Record<string, unknown> | null, storeRoot: string): Record<string, unknown>[] | null {
  if (!record || typeof record.evidence_id !== "string") return null;
  const art = (Array.isArray(record.artifacts) ? record.artifacts : []).find((a: { role?: string }) => a && a.role === "requests") as { path?: string } | undefined;
  if (!art?.path) return null;
  try {
    return readFileSync(join(storeRoot, record.evidence_id, art.path), "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  } catch {
    return null;
  }
}

/** Once interrupted, the longest wait for GPU memory to come back after the stop (ms). */
const INTERRUPTED_GPU_WAIT_MS = 1000;

/**
 * Launches, checks, measures and stops `spec` for round `k` (from 1) at `position` in the round.
 * Never throws for an engine's failure; a usage error in `--serve-cmd` does throw.
 */
export async function runCell(spec: EngineSpec, k: number, position: number, cfg: CellConfig): Promise<Cell> {
  const rt = cfg.rt;
  const label = spec.label;
  const logRel = `logs/${label}.r${k}.log`;
  const logPath = join(cfg.runDir, logRel);
  const cell: Cell = { round: k, position, label, kind: spec.kind, status: null, log: logRel, t_start: Date.now() / 1000 };
  await rt.files.mkdir(join(cfg.runDir, "logs"));
  rmSync(logPath, { force: true }); // a rerun of the same round must not append to an old log
  const env = cleanEnv({ parent: (n) => rt.env(n), manifestEnv: spec.env, passEnv: cfg.passEnv, where: `engine '${label}' env` });
  cell.env = { keys: env.keys, notes: env.notes };
  const hostUrl = spec.host.includes(":") ? `[${spec.host}]` : spec.host;
  const base = `http://${hostUrl}:${spec.port}`;
  const ep = parseEndpoint(base);
  const probe = await probePort(spec.host, spec.port);
  cell.port = { host: spec.host, port: spec.port, connect: probe.connect, bind: probe.bind };
  if (probe.inUse) {
    cell.status = "port_busy";
    cell.detail = `something already listens on ${spec.host}:${spec.port} (connect: ${probe.connect}, bind: ${probe.bind}); refusing to benchmark it in place of the engine${probe.holder ? `; ${probe.holder}` : ""}`;
    cell.t_end = Date.now() / 1000;
    return cell;
  }
  const gpuBefore: GpuMemoryReading = await gpuMemoryUsedMib(cfg.exec);
  let engine: LaunchedEngine | null = null;
  try {
    try {
      engine = launchEngine(rt, spec.launch, { env: env.env, logPath, cwd: spec.cwd });
      cell.pid = engine.group.pid;
    } catch (e) {
      cell.status = "launch_failed";
      cell.detail = (e instanceof LaunchError ? e.message : String(e)).slice(0, 300);
      return cell;
    }
    const ready = await waitReady(engine, base + spec.ready_check, { timeoutMs: cfg.startupTimeoutMs, pollMs: cfg.pollMs, signal: cfg.signal });
    cell.ready = { ...ready, url_path: spec.ready_check };
    if (cfg.signal?.aborted) {
      cell.status = "interrupted";
      cell.detail = "ik was interrupted; the engine was stopped";
      cell.interrupted = true;
      return cell;
    }
    if (ready.status !== "ready") {
      cell.status = ready.status === "timeout" ? "startup_timeout" : "exited_early";
      cell.detail = ready.status === "timeout"
        ? `not ready at ${spec.ready_check} within ${cfg.startupTimeoutMs / 1000} s (last: ${ready.last ?? "nothing"})`
        : `the engine exited before it was ready (${ready.last})`;
      return cell;
    }
    const listed = await listModels(ep, { signal: cfg.signal, timeoutMs: 5000 }).catch(() => null);
    const served = listed?.ok ? listed.models.map((m) => m.id).filter((id): id is string => typeof id === "string") : [];
    cell.served_model = served[0] ?? null;
    cell.served_models = served;
    const picked = checkServedModel(cfg.modelId, served);
    if (picked.model === null) {
      cell.status = picked.status;
      cell.detail = picked.detail;
      return cell;
    }
    const model = picked.model;
    cell.model = model;
    const kind: EngineKind = spec.kind === "auto" ? "generic" : spec.kind;
    if (cfg.warmup > 0) {
      const w = await warmupEngine({
        ep, engineKind: kind, model, prompts: cfg.warmupPrompts, n: cfg.warmup, maxTokens: cfg.warmupMaxTokens,
        saltPrefix: `ik-rounds-warmup-r${k}`, chatTemplateKwargs: cfg.chatTemplateKwargs, extraBody: cfg.extraBody, signal: cfg.signal,
      });
      cell.warmup = { ...w, errors: w.errors.map(scrubText) };
      if (cfg.signal?.aborted) {
        cell.status = "interrupted";
        cell.detail = "ik was interrupted; the engine was stopped";
        cell.interrupted = true;
        return cell;
      }
      if (w.ok === 0) {
        cell.status = "warmup_failed";
        cell.detail = `0 of ${w.n} warm-up requests succeeded${w.errors[0] ? `: ${scrubText(w.errors[0])}` : ""}`;
        return cell;
      }
    }
    const mpath = metricsPathOf(spec);
    cell.metrics_path = mpath;
    const before = await scrapeText(ep, mpath.path, spec.kind);
    const ctx = {
      base_url: base, model, prompts: cfg.promptsArg, mode: cfg.mode, engine_kind: spec.kind, label, round: k, run_dir: cfg.runDir,
      engine_version: spec.version, extend: cfg.mode === "single" ? cfg.lastEvidence[label] ?? null : null,
      ref_e2e_ms: cfg.mode === "load" ? cfg.schedule?.ref_e2e_ms ?? null : null, extra_body: cfg.extraBody, chat_template_kwargs: cfg.chatTemplateKwargs,
    };
    if (cfg.mode === "load" && cfg.schedule) {
      const shared = cfg.schedule.fixed_by !== null || ctx.ref_e2e_ms !== null;
      cell.load_schedule = { ref_e2e_ms: ctx.ref_e2e_ms, source: shared ? cfg.schedule.source : "this engine's own reference requests" };
    }
    const argv = serveArgv(cfg.serveCmd, rt.selfArgv(), ctx, cfg.serveArgs);
    // An engine (a launcher shell) that exits after readiness but before the measurement is told apart.
    const exitBeforeServe = engine.exit;
    const stderrRel = `logs/${label}.r${k}.serve.stderr`;
    rmSync(join(cfg.runDir, stderrRel), { force: true });
    const res = await runServe(cfg, argv, join(cfg.runDir, stderrRel));
    await scrubFileInPlace(join(cfg.runDir, stderrRel));
    // Interrupted: the cell is not used, so no time goes to a scrape the engine may not answer.
    const after = cfg.signal?.aborted ? { text: null, path: mpath.path, status: 0, note: "not scraped: ik was interrupted" } : await scrapeText(ep, mpath.path, spec.kind);
    const record = parseServeOutput(res.stdout);
    cell.serve = {
      argv: await storedServeArgv(cfg, argv, base, ep), returncode: res.code, seconds: res.seconds, timed_out: res.timedOut,
      evidence_id: typeof record?.evidence_id === "string" ? record.evidence_id : null,
      complete: record ? record.complete !== false : null, stderr: stderrRel,
      stderr_tail: res.code !== 0 ? scrubText(tail(join(cfg.runDir, stderrRel), 1500)) : null,
    };
    if (before.text !== null && after.text !== null) {
      await rt.files.mkdir(join(cfg.runDir, "prometheus"));
      await rt.files.writeText(join(cfg.runDir, "prometheus", `${label}.r${k}.before.txt`), scrubText(before.text));
      await rt.files.writeText(join(cfg.runDir, "prometheus", `${label}.r${k}.after.txt`), scrubText(after.text));
    }
    const delta = metricsDelta(before.text, after.text);
    cell.prometheus = { ...delta, path: mpath.path, before_note: before.note, after_note: after.note };
    if (cfg.signal?.aborted) {
      cell.status = "interrupted";
      cell.detail = "ik was interrupted; the engine was stopped";
      cell.interrupted = true;
      return cell;
    }
    let metrics: CellMetrics;
    if (record && record.complete === false) {
      metrics = {};
      cell.metrics_source = "incomplete record: not used";
    } else if (cfg.mode === "single") {
      const rows = requestRows(record, cfg.storeRoot);
      if (rows) {
        const [serveRound, m] = roundMetricsFromRows(rows);
        metrics = m;
        cell.metrics_source = `requests artifact, round ${serveRound} (median over its requests)`;
      } else if (record && (record.data as Record<string, unknown> | undefined)?.extends) {
        metrics = {};
        cell.metrics_source = "extended record without per-request rows: not used";
      } else {
        metrics = recordBucketMetrics(record);
        cell.metrics_source = "record metrics";
      }
    } else {
      metrics = recordBucketMetrics(record);
      cell.metrics_source = "capacity record metrics (N* and the values at N*)";
    }
    cell.metrics = metrics;
    const missing = cfg.mode === "single" && metrics.all ? ROW_METRICS.map(([k]) => k).filter((k) => !metrics.all[k]) : [];
    if (missing.length) {
      cell.notes = [`no ${missing.join(", ")} this round: no ok request had two token events apart in time (one token, or every token in one network read); the summary has one round fewer for ${missing.length > 1 ? "them" : "it"}`];
    }
    const complete = record !== null && record.complete !== false;
    const [status, detail] = res.timedOut ? ["serve_failed", `bench serve ran past --serve-timeout-s ${cfg.serveTimeoutMs / 1000}`] as const : cellStatus(res.code, complete ? record : null, metrics);
    cell.status = status;
    if (detail) cell.detail = detail;
    const exited = engine?.exit ?? null;
    if (exited && ["ok", "serve_failed", "serve_no_metrics"].includes(status)) {
      cell.status = "engine_exited";
      const when = exitBeforeServe ? "after it was ready, before the measurement began (while warming up or scraping /metrics)" : "during the measurement, before ik stopped it";
      cell.detail = engineExitedDetail(exited, when, metrics);
    } else if (status === "ok" && cfg.mode === "single") {
      const tooMany = tooManyFailures(metrics, cfg.maxFail);
      if (tooMany) {
        cell.status = "too_many_failures";
        cell.detail = tooMany;
      }
    }
    // The next round extends this record (seed), unless this round is not comparable: a dead
    // engine's or a too-failing round must not end up in the engine's final record.
    const chain = complete && res.code === 0 && typeof record?.evidence_id === "string" && cfg.mode === "single";
    if (chain && cell.status !== "engine_exited" && cell.status !== "too_many_failures") cfg.lastEvidence[label] = record!.evidence_id as string;
    if (cfg.mode === "load" && cell.status === "ok" && cfg.schedule) {
      const used = referenceE2eMs(record, (id) => readJson(join(cfg.storeRoot, id, "evidence.json")));
      cell.load_schedule = { ...cell.load_schedule, ref_e2e_ms_used: used };
      if (cfg.schedule.fixed_by === null && cfg.schedule.ref_e2e_ms === null && used !== null) {
        cfg.schedule.ref_e2e_ms = used;
        cfg.schedule.source = `reference requests of ${label} r${k} (the first load cell), passed as --ref-e2e-ms to every later cell`;
        cfg.schedule.pilot = `${label} r${k}`;
      }
    }
    return cell;
  } finally {
    if (engine !== null) {
      if (engine.exit && cell.status === "ok") {
        cell.status = "engine_exited";
        cell.detail = engineExitedDetail(engine.exit, "after the measurement, before ik stopped it", cell.metrics);
      }
      const stop = await stopGroup(rt, engine, cfg.stopTimeoutMs, { signal: cfg.signal });
      cell.stop = { ...stop };
      if (!stop.group_gone && (cell.status === "ok" || cell.status === null)) {
        cell.status = "stop_failed";
        cell.detail = `process group ${engine.group.pid} still has live members after SIGKILL: ${stop.survivors.join(", ")}`;
      }
      const gpu = await waitGpuMemory(gpuBefore, { exec: cfg.exec, toleranceMib: cfg.gpuMemToleranceMib, timeoutMs: cfg.signal?.aborted ? Math.min(cfg.gpuMemWaitMs, INTERRUPTED_GPU_WAIT_MS) : cfg.gpuMemWaitMs, pollMs: cfg.pollMs });
      cell.gpu_memory = { ...gpu };
      // The engine is gone: its log loses this run's secrets (a secret-named env value it printed).
      await scrubFileInPlace(logPath).catch(() => false);
      const log = existsSync(logPath) && statSync(logPath).size < 64 * 1024 * 1024 ? readFileSync(logPath, "utf8") : "";
      const parsed = parseResolvedConfig(log, spec.kind !== "auto" ? spec.kind : spec.name ?? spec.kind);
      const check = checkExpect(spec.expect, parsed);
      const file = `resolved_config/${label}.r${k}.json`;
      await rt.files.mkdir(join(cfg.runDir, "resolved_config"));
      await rt.files.writeText(join(cfg.runDir, file), scrubbedJson({ ...parsed, status: check.status, parsed_status: parsed.status, expect: spec.expect, expect_check: check }, 2) + "\n");
      cell.resolved_config = {
        status: check.status, version: parsed.version, warnings: parsed.warnings.length,
        unknown_settings: check.unverified.map((u) => `${u} (expected, not in the log${check.hints[u] ? `; ${check.hints[u]}` : ""})`),
        violations: check.violations.map((v) => v.message), unverified: check.unverified, self_reported: parsed.self_reported, file,
      };
      if (check.violations.length && cell.status === "ok") {
        cell.status = "hard_gate";
        cell.detail = hardGateDetail(cell.resolved_config.violations);
      }
      if (cell.status === "startup_timeout" || cell.status === "exited_early") cell.log_tail = scrubText(tail(logPath, 1500));
    }
    cell.t_end = Date.now() / 1000;
  }
}
