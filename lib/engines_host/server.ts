/**
 * One engine's life in a rounds cell (seed 001's `servers` module): launch in its own process
 * group with a clean environment and a log file, wait for readiness (telling a slow start from an
 * early exit), read the served model, send salted warm-up requests, scrape the Prometheus text,
 * and stop the whole group (TERM, then KILL) with proof that no member is left.
 * The runtime is injected; nothing here knows Bun or Deno.
 * @module
 */
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { type Endpoint, rootUrl } from "../client/endpoint.ts";
import { listModels } from "../client/mod.ts";
import { readCappedText } from "../client/read_capped.ts";
import { isDrainedPath } from "../scrape/mod.ts";
import { Runner } from "../bench/runner.ts";
import type { EngineKind } from "../engines/mod.ts";
import type { Prompt } from "../prompts/mod.ts";
import type { ExitStatus, ProcessGroup, Runtime } from "../runtime/mod.ts";
import { descendantsOf, portHolderText, procInfo, processTable } from "./proc_table.ts";
import { adoptedChildren, pidKey } from "./stop.ts";
import { scrubText } from "../evidence/scrub.ts";

/** What the warm-up is, for plan.json. */
export const WARMUP_KIND = "salted chat requests (prefix tag ik-rounds-warmup-r<k>-<i>) over the set's first 8 prompts, streamed";

import type { LaunchedEngine } from "./launched_engine.ts";

export type { LaunchedEngine } from "./launched_engine.ts";

/** How often the descendants of an engine are looked up when ik cannot be a subreaper. */
export const TRACK_POLL_MS = 250;

/** Why a launch could not start; the cell becomes `launch_failed`. */
export class LaunchError extends Error {}

function executable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The program argv[0] names, resolved like execvp does over the child's PATH; null when none. */
export function resolveProgram(program: string, pathVar: string | undefined, cwd: string): string | null {
  if (program.includes("/")) {
    const p = isAbsolute(program) ? program : resolve(cwd, program);
    return executable(p) ? p : null;
  }
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(isAbsolute(dir) ? dir : resolve(cwd, dir), program);
    if (executable(p)) return p;
  }
  return null;
}

/**
 * Starts `argv` in a new process group with exactly `env`, stdout and stderr appended to `logPath`.
 * @throws LaunchError when the working directory or the program does not exist, or spawning fails
 */
export function launchEngine(rt: Runtime, argv: readonly string[], opts: { env: Record<string, string>; logPath: string; cwd?: string | null }): LaunchedEngine {
  const cwd = opts.cwd ? resolve(rt.cwd(), opts.cwd) : rt.cwd();
  try {
    if (!statSync(cwd).isDirectory()) throw new Error();
  } catch {
    throw new LaunchError(`cwd ${cwd} is not a directory`);
  }
  if (resolveProgram(argv[0], opts.env.PATH, cwd) === null) {
    throw new LaunchError(`cannot start '${argv[0]}': no such executable${argv[0].includes("/") ? "" : " on the engine's PATH"}`);
  }
  // Before the spawn, so that even a descendant that detaches at once reparents to ik.
  const subreaper = rt.childSubreaper();
  const adoptedBefore = new Set(adoptedChildren(rt).map((p) => pidKey(p.pid, p.start)));
  let group: ProcessGroup;
  try {
    group = rt.spawn([...argv], { env: opts.env, replaceEnv: true, cwd, logFile: opts.logPath, logTransform: scrubText });
  } catch (e) {
    throw new LaunchError(`cannot start '${argv[0]}': ${(e as Error).message}`);
  }
  if (group.pid <= 0) throw new LaunchError(`cannot start '${argv[0]}'`);
  const tracked = new Map<number, number>();
  const engine: LaunchedEngine = {
    group, exit: null, subreaper, adoptedBefore, startTicks: procInfo(group.pid)?.start ?? -1, tracked, untrack: () => {},
  };
  group.exited.then((st) => {
    engine.exit = st;
  });
  if (!subreaper.active) {
    // No subreaper (no FFI): remember every descendant while the engine runs, by ppid chain,
    // process group or session, so the stop can end one that detached. One that forks, detaches
    // and exits between two polls escapes; the stop says which mode it had.
    const look = () => {
      const table = processTable();
      const mine = new Set(descendantsOf([group.pid, ...tracked.keys()], table));
      for (const p of table) {
        if (p.pid === group.pid || p.state === "Z") continue;
        if (mine.has(p.pid) || p.pgid === group.pid || p.sid === group.pid) tracked.set(p.pid, p.start);
      }
    };
    look();
    const timer = setInterval(look, TRACK_POLL_MS);
    (timer as unknown as { unref?: () => void }).unref?.();
    engine.untrack = () => clearInterval(timer);
  }
  return engine;
}

/** How the readiness wait ended. */
export interface Readiness {
  /** `ready`, `timeout` (still starting) or `exited` (the process ended first). */
  status: "ready" | "timeout" | "exited";
  /** Seconds from launch to the end of the wait. */
  seconds: number;
  /** Readiness polls made. */
  polls: number;
  /** The last answer or error seen ("HTTP 503", "connection refused", "exit code 1"). */
  last: string | null;
  /** The exit status when the process ended. */
  exit?: ExitStatus;
  /** When it ended: who still listens on the ready-check port (a descendant it left behind), else null. */
  port_holder?: string | null;
}

/** `exit code 0; port 8000 is held by pid 1234 (...)`: an exited engine, and what is left on its port. */
function exitedReadiness(url: string, st: ExitStatus, base: Omit<Readiness, "status" | "last" | "exit">): Readiness {
  let port = NaN;
  try {
    const u = new URL(url);
    port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  } catch { /* no port to look at */ }
  const holder = Number.isInteger(port) ? portHolderText(port) : null;
  const last = holder ? `${describeExit(st)}; ${holder}, left behind by the engine; ik stops it with the engine` : describeExit(st);
  return { ...base, status: "exited", last, exit: st, port_holder: holder };
}

function describeExit(st: ExitStatus): string {
  return st.signal ? `killed by ${st.signal}` : `exit code ${st.code}`;
}

/** A fetch failure in a few words; the runtimes word "connection refused" differently. */
function fetchErrorText(e: unknown): string {
  const parts: string[] = [];
  for (let x: unknown = e, i = 0; x && i < 4; x = (x as { cause?: unknown }).cause, i++) {
    const o = x as { code?: unknown; message?: unknown; name?: unknown };
    parts.push(String(o.code ?? ""), String(o.message ?? ""), String(o.name ?? ""));
  }
  const all = parts.join(" ");
  if (/refused/i.test(all)) return "connection refused";
  if (/reset/i.test(all)) return "connection reset";
  const msg = parts.find((p) => p && p !== "undefined" && p !== "TypeError" && p !== "Error") ?? "fetch failed";
  return `error: ${msg.slice(0, 80)}`;
}

/**
 * Polls `url` every `pollMs` until it answers 2xx (ready), the process exits (exited) or
 * `timeoutMs` passes (timeout).
 */
export async function waitReady(engine: LaunchedEngine, url: string, opts: { timeoutMs: number; pollMs: number; signal?: AbortSignal }): Promise<Readiness> {
  const t0 = performance.now();
  let polls = 0;
  let last: string | null = null;
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  while (true) {
    const seconds = () => Math.round(performance.now() - t0) / 1000;
    const ex = engine.exit;
    if (ex) return exitedReadiness(url, ex, { seconds: seconds(), polls });
    if (opts.signal?.aborted) return { status: "timeout", seconds: seconds(), polls, last: "interrupted" };
    polls++;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), Math.max(200, Math.min(5000, opts.pollMs * 4)));
    try {
      const res = await fetch(url, { signal: ac.signal, redirect: "manual" });
      await res.body?.cancel().catch(() => {});
      if (res.status >= 200 && res.status < 300) return { status: "ready", seconds: seconds(), polls, last: `HTTP ${res.status}` };
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = ac.signal.aborted ? "no answer within the poll timeout" : fetchErrorText(e);
    } finally {
      clearTimeout(timer);
    }
    if (performance.now() - t0 >= opts.timeoutMs) {
      const ex2 = engine.exit;
      if (ex2) return exitedReadiness(url, ex2, { seconds: seconds(), polls });
      return { status: "timeout", seconds: seconds(), polls, last };
    }
    const left = opts.timeoutMs - (performance.now() - t0);
    await Promise.race([sleep(Math.max(1, Math.min(opts.pollMs, left))), engine.group.exited]);
  }
}

/** The first model /v1/models lists, or null. */
export async function servedModel(ep: Endpoint, opts: { signal?: AbortSignal } = {}): Promise<string | null> {
  try {
    const ans = await listModels(ep, { signal: opts.signal, timeoutMs: 5000 });
    return ans.models?.[0]?.id ?? null;
  } catch {
    return null;
  }
}

/** What the warm-up did. */
export interface WarmupResult {
  /** Requests sent. */
  n: number;
  /** Requests that succeeded. */
  ok: number;
  /** max_tokens of each. */
  max_tokens: number;
  /** Seconds it took. */
  seconds: number;
  /** The first errors (at most 3). */
  errors: string[];
}

/**
 * Sends `n` salted warm-up requests of `maxTokens` tokens, one at a time, cycling over `prompts`
 * (the set's first 8). Errors are counted, never thrown.
 */
export async function warmupEngine(o: {
  ep: Endpoint;
  engineKind: EngineKind;
  model: string;
  prompts: readonly Prompt[];
  n: number;
  maxTokens: number;
  saltPrefix: string;
  chatTemplateKwargs?: Record<string, unknown> | null;
  extraBody?: Record<string, unknown> | null;
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<WarmupResult> {
  const t0 = performance.now();
  const runner = new Runner({
    ep: o.ep,
    api: "chat",
    engineKind: o.engineKind,
    model: o.model,
    maxTokens: o.maxTokens,
    tokenIds: "off",
    exactLength: false,
    extraBody: o.extraBody ?? {},
    chatTemplateKwargs: o.chatTemplateKwargs ?? {},
    timeoutMs: o.timeoutMs ?? 600_000,
    idleTimeoutMs: 60_000,
    signal: o.signal,
  });
  const head = o.prompts.slice(0, 8);
  let ok = 0;
  const errors: string[] = [];
  for (let i = 0; i < o.n && head.length > 0 && !o.signal?.aborted; i++) {
    const { result } = await runner.send(head[i % head.length], `${o.saltPrefix}-${i}`);
    if (result.ok) ok++;
    else if (errors.length < 3) errors.push(`${result.errorKind}: ${String(result.error ?? "").slice(0, 200)}`);
  }
  return { n: o.n, ok, max_tokens: o.maxTokens, seconds: Math.round(performance.now() - t0) / 1000, errors };
}

/** One raw scrape of the Prometheus text. */
export interface MetricsText {
  /** The body when it is Prometheus text, else null. */
  text: string | null;
  /** The path asked. */
  path: string;
  /** HTTP status, 0 when none. */
  status: number;
  /** Why there is no text ("not available: HTTP 501", "refused: trtllm /metrics is drained on read"). */
  note: string | null;
}

/**
 * GETs `path` on `ep` (3 s limit, 8 MiB cap) and returns the text when it is Prometheus text.
 * For trtllm it never GETs `/metrics` (a JSON queue drained on each read). Never throws.
 */
export async function scrapeText(ep: Endpoint, path: string, kind: string, opts: { timeoutMs?: number } = {}): Promise<MetricsText> {
  if (kind === "trtllm" && isDrainedPath(path)) {
    return { text: null, path, status: 0, note: "not available: ik never GETs TensorRT-LLM's /metrics (a JSON queue drained on each read); set metrics_path /prometheus/metrics" };
  }
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 3000);
  try {
    const url = rootUrl(ep, "/" + path.replace(/^\/+/, ""));
    const res = await fetch(url, { signal: ac.signal, redirect: "manual", headers: { accept: "text/plain" } });
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel().catch(() => {});
      return { text: null, path, status: res.status, note: `not available: HTTP ${res.status} on ${path}` };
    }
    const body = await readCappedText(res, 8 * 1024 * 1024);
    const head = body.text.trimStart()[0];
    if (head === "{" || head === "[") return { text: null, path, status: res.status, note: `not available: ${path} answered JSON, not Prometheus text` };
    if (!body.text.trim()) return { text: null, path, status: res.status, note: `not available: ${path} answered an empty body` };
    return { text: body.text, path, status: res.status, note: body.truncated ? "truncated at 8 MiB" : null };
  } catch {
    return { text: null, path, status: 0, note: ac.signal.aborted ? `not available: no answer on ${path} within 3 s` : `not available: ${path} could not be fetched` };
  } finally {
    clearTimeout(timer);
  }
}

export { stopGroup, type StopResult } from "./stop.ts";
