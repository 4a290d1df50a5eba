/**
 * `ik bench points` (seed 004): ordered benchmark points against a running router or fleet.
 * Preflight (readiness, the model, the drain source), then per point: /ready and /v1/models,
 * wait for zero admission and resident work, the external client (argv, never a shell) with its
 * timeout, and the drain after it. A refused readiness, a model mismatch, a non-zero client exit
 * or a drain timeout stops the sequence; a non-zero exit still gets its drain attempt. The runner
 * never stops the router or the engines. Output: a fresh private folder with manifest.json and,
 * per point, result.json, client.stdout and client.stderr.
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { IkError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { type Endpoint } from "../client/mod.ts";
import { registerArgvSecrets, scrubArgv, scrubbedJson, scrubText, writeWhole } from "../evidence/mod.ts";
import { scrubFileInPlace } from "../evidence/scrub_file.ts";
import type { LiveRun } from "../live_metrics/live_run.ts";
import type { Runtime } from "../runtime/mod.ts";
import { VERSION } from "../version.ts";
import { checkModel, checkReady, type DrainSnapshot, type DrainSource, readDrain, waitDrained } from "./drain.ts";
import { type Plan, substituteArgv } from "./plan.ts";

/** What a points run needs. */
export interface PointsConfig {
  rt: Runtime;
  ep: Endpoint;
  /** The base URL as given (only its HMAC is stored). */
  baseUrl: string;
  baseUrlTag: string;
  model: string;
  apiKey?: string;
  plan: Plan;
  planText: string;
  planPath: string;
  outDir: string;
  readyPath: string;
  drain: DrainSource;
  /** The command line, redacted, for manifest.json. */
  invocation: string[];
  pollMs: number;
  signal?: AbortSignal;
  progress: (line: string) => void;
  /** ik's live metrics (a level per point: its target rate while its client runs; the fleet's drain gauges), when asked for. */
  live?: LiveRun | null;
}

/** How a run ended. */
export interface PointsOutcome {
  /** `completed` (every point ran), `preflight_failed`, `stopped` or `interrupted`. */
  status: "completed" | "preflight_failed" | "stopped" | "interrupted";
  /** Why it stopped, when it did. */
  reason: string | null;
  /** Per point: id and status. */
  points: { id: string; status: string; reason?: string | null }[];
}

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

/**
 * The digest of the running ik: the sha256 of the compiled binary, or, from source, of its
 * sources (every .ts under lib/ plus cli.ts, mod.ts and package.json, each hashed, listed sorted).
 */
export function runnerDigest(rt: Runtime): { sha256: string; of: "binary" | "sources"; path: string; files?: number } {
  const self = rt.selfArgv();
  if (self.length === 1) return { sha256: sha256(readFileSync(self[0])), of: "binary", path: self[0] };
  const script = self.find((a) => a.endsWith("cli.ts")) ?? self[self.length - 1];
  const root = dirname(script);
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith(".ts")) files.push(p);
    }
  };
  if (existsSync(join(root, "lib"))) walk(join(root, "lib"));
  for (const f of ["cli.ts", "mod.ts", "package.json"]) if (existsSync(join(root, f))) files.push(join(root, f));
  const lines = files.map((f) => `${sha256(readFileSync(f))}  ${relative(root, f)}`).sort().join("\n");
  return { sha256: sha256(lines), of: "sources", path: root, files: files.length };
}

/** Writes a JSON file whole or not at all (a full disk leaves no torn manifest.json; exit 74). */
async function writeJson(_rt: Runtime, path: string, v: unknown): Promise<void> {
  await writeWhole(path, scrubbedJson(v, 2) + "\n", 0o600);
}

/** How long the client's stdout may stay open after the client exited (a process it left behind holds it). */
const STDOUT_GRACE_MS = 2000;

/** What one client run gave. */
interface ClientRun {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  /** Whether ik was interrupted before the client ended (it was asked to stop). */
  interrupted: boolean;
  /** Why the client could not be started (exit 127 then), or null. */
  spawn_error: string | null;
  /** A note when processes the client left behind still held its stdout (they were stopped), or null. */
  left_behind: string | null;
  started_at: string;
  ended_at: string;
  seconds: number;
  during: { samples: number; max_admission: number; max_resident: number; last: DrainSnapshot | null };
}

/** Runs the client with its timeout: stdout and stderr to files, killed as a group at the timeout; polls the drain source meanwhile. */
async function runClient(cfg: PointsConfig, argv: string[], pdir: string, timeoutMs: number): Promise<ClientRun> {
  const t0 = performance.now();
  const started = new Date().toISOString();
  const during = { samples: 0, max_admission: 0, max_resident: 0, last: null as DrainSnapshot | null };
  let g: ReturnType<Runtime["spawn"]>;
  try {
    g = cfg.rt.spawn(argv, { pipeStdout: true, logFile: join(pdir, "client.stderr"), logTransform: scrubText });
  } catch (e) {
    // A program that cannot be executed (no #! line, not a program): a failed client, as a shell
    // says it (exit 127), with the point's files and its drain like any other.
    const why = scrubText(`ik: could not start the client ${JSON.stringify(argv[0])}: ${(e as Error).message}`);
    await writeWhole(join(pdir, "client.stderr"), why + "\n", 0o600);
    await writeWhole(join(pdir, "client.stdout"), "", 0o600);
    const now = new Date().toISOString();
    return { exit_code: 127, signal: null, timed_out: false, interrupted: false, spawn_error: why, left_behind: null, started_at: started, ended_at: now, seconds: 0, during };
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    g.killGroup("SIGTERM");
    setTimeout(() => g.killGroup("SIGKILL"), 5000);
  }, timeoutMs);
  // An interrupt asks the client to stop (SIGINT), then insists within the CLI's grace, so the
  // client ends and the point's files are written before ik exits.
  const escalate: ReturnType<typeof setTimeout>[] = [];
  const onAbort = () => {
    g.killGroup("SIGINT");
    escalate.push(setTimeout(() => g.killGroup("SIGTERM"), 3000), setTimeout(() => g.killGroup("SIGKILL"), 6000));
  };
  cfg.signal?.addEventListener("abort", onAbort, { once: true });
  let running = true;
  const sampler = (async () => {
    while (running) {
      const s = await readDrain(cfg.ep, cfg.drain, { apiKey: cfg.apiKey, timeoutMs: 2000 });
      if (s.ok) {
        cfg.live?.series.server({ running: s.resident, waiting: s.admission });
        during.samples++;
        during.max_admission = Math.max(during.max_admission, s.admission ?? 0);
        during.max_resident = Math.max(during.max_resident, s.resident ?? 0);
        during.last = s;
      }
      await Promise.race([new Promise((r) => setTimeout(r, cfg.pollMs)), g.exited]);
    }
  })();
  // stdout is read as it comes, so that what the client wrote is kept even when a process it
  // left behind holds the pipe open after the client itself exited.
  const chunks: Uint8Array[] = [];
  const reader = g.stdout?.getReader() ?? null;
  const reading = (async () => {
    if (!reader) return;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        chunks.push(value);
      }
    } catch {
      // A client that could not start closes its pipe with an error (Bun: AbortError): no more output.
    }
  })();
  try {
    const st = await g.exited;
    const ended = new Date().toISOString();
    const seconds = Math.round(performance.now() - t0) / 1000;
    const interrupted = cfg.signal?.aborted ?? false;
    running = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const held = await Promise.race([reading.then(() => false), new Promise<boolean>((r) => (grace = setTimeout(() => r(true), STDOUT_GRACE_MS)))]);
    clearTimeout(grace);
    let leftBehind: string | null = null;
    if (held) {
      // The client is gone; what it started is not the fleet: stopped, so it sends nothing into
      // the drain or the next point.
      leftBehind = `the client exited but a process it started still held its stdout ${STDOUT_GRACE_MS / 1000} s later; its process group was stopped`;
      g.killGroup("SIGTERM");
      setTimeout(() => g.killGroup("SIGKILL"), 3000).unref?.();
      await reader?.cancel().catch(() => {});
    }
    await sampler;
    const stdout = Buffer.concat(chunks).toString("utf8");
    await writeWhole(join(pdir, "client.stdout"), scrubText(stdout), 0o600);
    // The runtime captured the client's stderr straight to the file: scrub it now the client is gone.
    await scrubFileInPlace(join(pdir, "client.stderr")).catch(() => false);
    return { exit_code: st.code, signal: st.signal, timed_out: timedOut, interrupted, spawn_error: null, left_behind: leftBehind, started_at: started, ended_at: ended, seconds, during };
  } finally {
    running = false;
    clearTimeout(timer);
    cfg.signal?.removeEventListener("abort", onAbort);
    for (const t of escalate) clearTimeout(t);
  }
}

/** The client's own verdict (status and why), or null when it ran fine. */
function clientVerdict(c: ClientRun, timeoutS: number): { status: string; why: string } | null {
  if (c.timed_out) return { status: "client_timeout", why: `the client ran past client_timeout_s ${timeoutS} and was killed` };
  if (c.exit_code === 0) return null;
  const why = c.exit_code === 2
    ? "attainment or scheduling failed; inspect summary.json"
    : c.spawn_error !== null
    ? c.spawn_error.replace(/^ik: /, "")
    : c.exit_code === 127 || c.exit_code === null
    ? `the client could not run or was killed (${c.signal ?? `exit ${c.exit_code}`})`
    : `the client exited ${c.exit_code}`;
  return { status: c.exit_code === 2 ? "attainment_failed" : "client_failed", why };
}

/** Runs the plan; writes manifest.json and each point's files. */
export async function runPoints(cfg: PointsConfig): Promise<PointsOutcome> {
  const rt = cfg.rt;
  // A client's own secrets (`--password X`, `--hf-token=X`) are stored and printed as `***`, and
  // removed from what the client prints back.
  for (const p of cfg.plan.points) registerArgvSecrets(p.client_argv, (n) => rt.env(n));
  // Not supported everywhere: files are written 0600 and folders chmod 0700 regardless.
  rt.setUmask(0o077);
  await rt.files.mkdir(cfg.outDir);
  await rt.files.chmod(cfg.outDir, 0o700);
  const manifest: Record<string, unknown> = {
    schema: 1, kind: "bench_points", tool: { name: "ik", version: VERSION }, started_at: new Date().toISOString(),
    plan: cfg.plan, plan_sha256: sha256(cfg.planText), plan_file: cfg.planPath, runner_digest: runnerDigest(rt), model: cfg.model,
    base_url: cfg.baseUrlTag, ready_path: cfg.readyPath, drain_source: cfg.drain, invocation: cfg.invocation,
  };
  const writeManifest = () => writeJson(rt, join(cfg.outDir, "manifest.json"), manifest);
  await writeManifest();
  const points: PointsOutcome["points"] = [];
  const finish = async (o: PointsOutcome) => {
    manifest.ended_at = new Date().toISOString();
    manifest.outcome = o;
    await writeManifest();
    return o;
  };
  // Preflight: readiness, the model, and a drain source that answers.
  const ready = await checkReady(cfg.ep, cfg.readyPath, cfg.apiKey);
  const model = await checkModel(cfg.ep, cfg.model, cfg.apiKey);
  const drain = await readDrain(cfg.ep, cfg.drain, { apiKey: cfg.apiKey });
  manifest.preflight = { ready, model, drain };
  const pre = !ready.ready ? `readiness ${cfg.readyPath}: ${ready.note}` : !model.ok ? `model: ${model.note}` : !drain.ok ? `drain source ${cfg.drain.kind} ${cfg.drain.path}: ${drain.note}` : null;
  if (pre) {
    // No progress line: the command's one error line says it (it was printed twice).
    return finish({ status: "preflight_failed", reason: pre, points: cfg.plan.points.map((p) => ({ id: p.id, status: "not_run" })) });
  }
  cfg.progress(`preflight ok: ready, '${cfg.model}' served, ${cfg.drain.kind} answers (admission ${drain.admission}, resident ${drain.resident})`);
  let current: string | null = null;
  try {
    return await runEach(cfg, points, finish, (id) => {
      current = id;
    });
  } catch (e) {
    // A failed write (exit 74) stops the plan at this point: the manifest says so if it still can
    // (a full disk usually refuses that too, and the last whole manifest stays).
    if (e instanceof IkError && e.code === ExitCode.IO_ERROR) {
      const at = cfg.plan.points.findIndex((q) => q.id === current);
      manifest.ended_at = new Date().toISOString();
      manifest.outcome = {
        status: "write_failed", reason: e.message,
        points: [...points, ...cfg.plan.points.slice(Math.max(at, points.length)).map((q) => ({ id: q.id, status: q.id === current ? "write_failed" : "not_run" }))],
      };
      await writeManifest().catch(() => {});
    }
    throw e;
  }
}

/** Runs the points in order; `at` is told each point's id as it starts. */
async function runEach(cfg: PointsConfig, points: PointsOutcome["points"], finish: (o: PointsOutcome) => Promise<PointsOutcome>, at: (id: string) => void): Promise<PointsOutcome> {
  const rt = cfg.rt;
  for (const [i, p] of cfg.plan.points.entries()) {
    at(p.id);
    const rest = () => cfg.plan.points.slice(i + 1).map((q) => ({ id: q.id, status: "not_run" }));
    if (cfg.signal?.aborted) return finish({ status: "interrupted", reason: "interrupted", points: [...points, { id: p.id, status: "not_run" }, ...rest()] });
    const pdir = join(cfg.outDir, p.id);
    await rt.files.mkdir(pdir);
    await rt.files.chmod(pdir, 0o700);
    const result: Record<string, unknown> = { id: p.id, workload: p.workload, started_at: new Date().toISOString(), status: null, stop_reason: null };
    const save = () => writeJson(rt, join(pdir, "result.json"), result);
    const stop = async (status: string, reason: string) => {
      result.status = status;
      result.stop_reason = reason;
      result.ended_at = new Date().toISOString();
      await save();
      cfg.progress(`point ${p.id}: ${status}: ${reason}`);
      points.push({ id: p.id, status, reason });
      return finish({ status: status === "interrupted" ? "interrupted" : "stopped", reason: `point ${p.id}: ${reason}`, points: [...points, ...rest()] });
    };
    cfg.progress(`point ${i + 1}/${cfg.plan.points.length} ${p.id}: checking readiness`);
    const r = await checkReady(cfg.ep, cfg.readyPath, cfg.apiKey);
    const m = await checkModel(cfg.ep, cfg.model, cfg.apiKey);
    result.readiness = r;
    result.model = m;
    if (!r.ready) return stop("readiness_refused", `${cfg.readyPath} ${r.note}`);
    if (!m.ok) return stop("model_mismatch", m.note ?? "model not served");
    const d0 = await waitDrained(cfg.ep, cfg.drain, { timeoutMs: p.drain_timeout_s * 1000, pollMs: cfg.pollMs, apiKey: cfg.apiKey, signal: cfg.signal });
    result.drain_initial = d0;
    if (cfg.signal?.aborted) return stop("interrupted", "interrupted while waiting for the fleet to drain before the point");
    if (!d0.drained) return stop("drain_timeout", `the fleet did not drain before the point within ${p.drain_timeout_s} s (admission ${d0.last?.admission ?? "?"}, resident ${d0.last?.resident ?? "?"}${d0.last?.note ? `; ${d0.last.note}` : ""})`);
    const argv = substituteArgv(p.client_argv, { base: cfg.baseUrl, model: cfg.model, point_id: p.id, point_dir: pdir }, rt.selfArgv());
    result.client_argv = scrubArgv(argv.map((a) => a.split(cfg.baseUrl).join("{base}")));
    cfg.progress(`point ${p.id}: client running (timeout ${p.client_timeout_s} s)`);
    cfg.live?.series.levelStart(p.id, p.workload.rate_rps, p.workload.requests);
    const c = await runClient(cfg, argv, pdir, p.client_timeout_s * 1000);
    cfg.live?.series.levelEnd(p.id);
    result.client = { exit_code: c.exit_code, signal: c.signal, timed_out: c.timed_out, started_at: c.started_at, ended_at: c.ended_at, seconds: c.seconds, stdout: "client.stdout", stderr: "client.stderr" };
    if (c.spawn_error !== null) (result.client as Record<string, unknown>).spawn_error = c.spawn_error;
    if (c.left_behind !== null) (result.client as Record<string, unknown>).left_behind = c.left_behind;
    result.state_during = { samples: c.during.samples, max_admission: c.during.max_admission, max_resident: c.during.max_resident };
    // A non-zero exit still gets its drain attempt.
    const d1 = await waitDrained(cfg.ep, cfg.drain, { timeoutMs: p.drain_timeout_s * 1000, pollMs: cfg.pollMs, apiKey: cfg.apiKey, signal: cfg.signal });
    result.drain_final = d1;
    result.last_state = d1.last ?? c.during.last;
    const verdict = clientVerdict(c, p.client_timeout_s);
    if (verdict && verdict.status !== "client_timeout") result.client = { ...(result.client as object), meaning: verdict.why };
    if (c.interrupted) return stop("interrupted", "interrupted while the client ran");
    if (cfg.signal?.aborted) {
      // The client had ended on its own: its verdict stands in the record beside the interrupt.
      result.client_status = verdict?.status ?? "ok";
      return stop("interrupted", `interrupted during the final drain, after the client ended (${verdict ? `${verdict.status}: ${verdict.why}` : "ok"})`);
    }
    if (verdict) return stop(verdict.status, verdict.why);
    if (!d1.drained) return stop("drain_timeout", `the fleet did not drain after the client within ${p.drain_timeout_s} s`);
    result.status = "ok";
    result.ended_at = new Date().toISOString();
    await save();
    points.push({ id: p.id, status: "ok" });
    cfg.progress(`point ${p.id}: ok (client ${c.seconds} s, drained in ${d1.seconds} s)`);
  }
  return finish({ status: "completed", reason: null, points });
}
