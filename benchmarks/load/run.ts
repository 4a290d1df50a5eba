/**
 * `npm run bench:load`: what `ik bench serve --mode load` costs and how precisely it paces, on
 * this host, against `ik mock` in its own process (all on 127.0.0.1). Prints the tables and
 * writes benchmarks/load/RESULTS.md (host CPU, date, load average). Measured and reported, never
 * asserted:
 *
 * 1. memory bound of a 200k-request level (peak RSS vs constant + 8 B/token event + 40 B/request),
 *    and RSS after a level (two levels);
 * 2. 1,000 closed-loop streams against a paced mock: RSS and client CPU;
 * 3. achieved/target rate, send lag p50/p99 and client CPU at 100, 500, 2000 req/s, and the rate
 *    where send lag p99 passes 5 ms;
 * 4. the pacer: CPU and lag at 500 req/s for spin margins 0 … 1.5 ms after a timer, 0 and 0.2 ms after the precise sleep (in process);
 * 5. client-attributable TTFT lag at 100, 500, 2000 req/s (in process, against the mock's log).
 *
 * Env: IK_BIN (default dist/ik, built once with scripts/build.sh when missing), BENCH_LOAD_QUICK=1
 * (small sizes, for trying the script: written to RESULTS-quick.md, never over RESULTS.md), BENCH_LOAD_REPS (repeats of the short measurements, 2).
 * @module
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_SPIN_MARGIN_MS, PRECISE_SPIN_MARGIN_MS } from "../../lib/executors/mod.ts";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";
import type { MockRequestLog } from "../../lib/selftest/request_log.ts";
import { pacerNoop, type PacerResult, pacerReal, type PacerSleep, pacerTimers, type TtftLagResult, ttftLagLevel } from "./inproc.ts";
import { CLK_TCK, type ClientRun, cpuPct, killAll, maxRss, type Mock, runSampled, sampleProc, startMock, windowOf } from "./procs.ts";
import { cpuName } from "../_host_cpu.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");
const QUICK = process.env.BENCH_LOAD_QUICK === "1";
const REPS = Math.max(1, Math.min(3, Number(process.env.BENCH_LOAD_REPS ?? 2) || 2));
const IK = resolve(ROOT, process.env.IK_BIN ?? "dist/ik");

/** The memory run's rate (req/s) and request count. */
const MEM_RATE = 2000;
const MEM_REQUESTS = QUICK ? 20_000 : 200_000;
/** The two-level run: requests per level. */
const TWO_LEVEL_REQUESTS = QUICK ? 6_000 : 40_000;
const RATES = [100, 500, 2000];
const RATE_S = QUICK ? 2 : 4;
const CEILING_STEPS = [1000, 2000, 3000, 4000, 5000, 6000];
const CEILING_S = QUICK ? 2 : 3;
const MARGINS = [0, 0.5, 1.0, 1.5];
/** Margins after the runtime's precise sleep (PRECISE_SPIN_MARGIN_MS = 0.1), where it has one. */
const PRECISE_MARGINS = [0, 0.1, 0.2];
const PACER_S = QUICK ? 1.5 : 3;
const STREAMS = 1000;
const STREAMS_S = QUICK ? 3 : 4;
const WARMUP = 2;

const f = (v: number | null | undefined, d = 2) => (v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(d));
const mb = (kb: number | null | undefined) => (kb === null || kb === undefined ? "n/a" : (kb / 1024).toFixed(1));
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const log = (s: string) => process.stderr.write(`bench:load: ${s}\n`);


// deno-lint-ignore no-explicit-any
type Json = any;

/** One level of a sampled load run, joined with its mock-log window. */
interface LevelOut {
  name: string;
  target: number | null;
  offered: number | null;
  achieved: number | null;
  sent: number;
  summary: Json;
  loopMaxMs: number | null;
  loopOwnMaxMs: number | null;
  clientLimited: string | null;
  server: Json;
  /** The seeded schedule's own rate, (planned − 1) / (last − first offset), req/s. */
  scheduled: number | null;
  window: { t0: number; t1: number } | null;
  cpuPct: number | null;
  maxRssKb: number | null;
}

interface LoadOut {
  run: ClientRun;
  levels: LevelOut[];
  /** Max VmRSS after the last level's window (summary, record writing, hashing). */
  afterRssKb: number | null;
  /** Seconds from the last level's end to the process exit. */
  afterS: number | null;
  /** The mock's CPU (utime + stime) over the whole client run, seconds, and the requests it served in it. */
  mockCpuS: number | null;
  mockRequests: number;
  error: string | null;
}

/** The CPUs the client and the mock share (the affinity mask's; a cgroup CPU quota is not seen). */
const CPUS = availableParallelism();

let runsDir = "";
let keyFile = "";
let tmp = "";

/** Runs `ik bench serve --mode load` against `mock`, sampled, and reads its measured record. */
async function loadRun(mock: Mock, name: string, args: string[], limitS: number, env: Record<string, string> = {}): Promise<LoadOut> {
  const before = (await mock.log(0, 0)).length;
  const mockTicks0 = sampleProc(mock.pid)?.cpuTicks ?? null;
  const run = await runSampled(IK, [
    "bench", "serve", "--base-url", mock.baseUrl, "--model", "mock-model", "--mode", "load", "--warmup", String(WARMUP), "--json", ...args,
  ], { IK_RUNS_DIR: runsDir, IK_KEY_FILE: keyFile, ...env }, tmp, name, limitS);
  const mockTicks1 = sampleProc(mock.pid)?.cpuTicks ?? null;
  const out: LoadOut = { run, levels: [], afterRssKb: null, afterS: null, mockCpuS: mockTicks0 !== null && mockTicks1 !== null ? (mockTicks1 - mockTicks0) / CLK_TCK : null, mockRequests: 0, error: null };
  if (run.rc !== 0) {
    out.error = `${run.timedOut ? "timed out" : `exit ${run.rc}`}: ${run.stderr.trim().split(/[\r\n]/).slice(-2).join(" | ").slice(0, 300)}`;
    return out;
  }
  let measured: Json;
  try {
    const cap = JSON.parse(run.stdout);
    const dir = join(runsDir, cap.data.measurement);
    measured = JSON.parse(readFileSync(join(dir, "evidence.json"), "utf8"));
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(runsDir, cap.evidence_id), { recursive: true, force: true });
  } catch (e) {
    out.error = `could not read the record: ${(e as Error).message}`;
    return out;
  }
  const levels: Json[] = measured.data.levels;
  const total = levels.reduce((a: number, l: Json) => a + l.sent, 0);
  const lines: MockRequestLog[] = (await mock.log(before + WARMUP + total, 5000)).sort((a, b) => a.serial - b.serial);
  const mine = lines.slice(before);
  // The requests this run sent the mock (its --warmup ones and the levels'): the mock's log may be read short.
  out.mockRequests = WARMUP + total;
  let at = mine.length - total; // the levels' lines come after the warm-up's
  const wl = measured.identity?.workload ?? {};
  const durationS = Number(measured.request?.args?.duration_s ?? wl.duration_s);
  const cap = Number(measured.request?.args?.max_requests_per_level ?? 0) || null;
  const seed = Number(measured.request?.args?.seed ?? 0);
  levels.forEach((l: Json, i: number) => (l._index = i));
  for (const l of levels) {
    let scheduled: number | null = null;
    if (l.target_rate_rps && durationS > 0) {
      const o = arrivalOffsetsMs({ ratePerS: l.target_rate_rps, durationS, burstiness: Number(measured.request?.args?.burstiness ?? 1), maxRequests: cap, seed: levelSeed(seed, l._index) });
      if (o.length === l.planned && o.length > 1) scheduled = (1000 * (o.length - 1)) / (o[o.length - 1] - o[0]);
    }
    const win = at >= 0 ? windowOf(mine.slice(at, at + l.sent)) : null;
    at += l.sent;
    out.levels.push({
      name: l.name,
      target: l.target_rate_rps,
      offered: l.offered_rate_rps,
      achieved: l.summary.achieved_rps,
      sent: l.sent,
      summary: l.summary,
      loopMaxMs: l.event_loop_lag_ms?.max_ms ?? l.event_loop_lag_ms?.maxMs ?? null,
      loopOwnMaxMs: l.event_loop_lag_ms?.own_max_ms ?? null,
      clientLimited: l.client_limited,
      server: l.server,
      scheduled,
      window: win,
      cpuPct: win ? cpuPct(run.samples, win.t0, win.t1) : null,
      maxRssKb: win ? maxRss(run.samples, win.t0, win.t1) : null,
    });
  }
  const last = out.levels[out.levels.length - 1]?.window;
  if (last) {
    out.afterRssKb = maxRss(run.samples, last.t1, Infinity);
    out.afterS = (run.endWallMs - last.t1) / 1000;
  }
  return out;
}

/** VmRSS (kB) at fraction `q` of a window (the sample nearest to it). */
function rssAt(run: ClientRun, w: { t0: number; t1: number }, q: number): number | null {
  const t = w.t0 + q * (w.t1 - w.t0);
  let best: number | null = null, d = Infinity;
  for (const s of run.samples) {
    if (Math.abs(s.wallMs - t) < d) {
      d = Math.abs(s.wallMs - t);
      best = s.workerRssKb;
    }
  }
  return best;
}

async function withMock<T>(name: string, args: string[], fn: (m: Mock) => Promise<T>): Promise<T> {
  const m = await startMock(IK, tmp, name, args);
  try {
    return await fn(m);
  } finally {
    await m.stop();
  }
}

const md: string[] = [];
const out = (s = "") => {
  md.push(s);
  process.stdout.write(s + "\n");
};

async function main(): Promise<void> {
  if (!existsSync(IK)) {
    log(`${IK} missing: building it once (bash scripts/build.sh)`);
    execFileSync("bash", ["scripts/build.sh"], { cwd: ROOT, stdio: "inherit" });
  }
  tmp = mkdtempSync(join(tmpdir(), "ik-bench-load-"));
  runsDir = join(tmp, "runs");
  keyFile = join(tmp, "key");
  const tStart = performance.now();
  const load0 = loadavg();
  const cpu = cpuName();
  const date = new Date().toISOString();
  const notes: string[] = [];

  // ---------------------------------------------------------------- 1. memory bound
  log(`1. memory: constant runs, then ${MEM_REQUESTS} requests at ${MEM_RATE} req/s, then two levels`);
  const mem = await withMock("mock-zero", ["--tpot-ms", "0", "--ttft-ms", "0"], async (mock) => {
    const idle = await loadRun(mock, "const-idle", ["--rates", "100", "--duration-s", "2", "--max-tokens", "4"], 60);
    const atRate = await loadRun(mock, "const-rate", ["--rates", String(MEM_RATE), "--duration-s", "3", "--max-tokens", "4"], 60);
    const d = Math.ceil(MEM_REQUESTS / MEM_RATE) + 2;
    const big = await loadRun(mock, "mem-200k", [
      "--rates", String(MEM_RATE), "--duration-s", String(d), "--max-requests-per-level", String(MEM_REQUESTS), "--max-tokens", "4",
    ], d + 90);
    const d2 = Math.ceil(TWO_LEVEL_REQUESTS / MEM_RATE) + 1;
    const two = await loadRun(mock, "two-level", [
      "--rates", `${MEM_RATE},${MEM_RATE - 1}`, "--duration-s", String(d2), "--max-requests-per-level", String(TWO_LEVEL_REQUESTS), "--max-tokens", "4", "--sweep-all",
    ], 2 * d2 + 60);
    return { idle, atRate, big, two };
  });
  out("# `ik bench serve --mode load`: memory, pacing and client cost");
  out();
  out(`Host CPU: ${cpu}. Measured ${date.slice(0, 16).replace("T", " ")} UTC. Load average at start: ${load0}. Client: \`${process.env.IK_BIN ?? "dist/ik"}\` (Bun, compiled); bench and in-process parts: ${(globalThis as { Bun?: { version: string } }).Bun ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}` : `node ${process.version}`}. The mock (\`ik mock\`) runs in its own process; everything on 127.0.0.1.`);
  out();
  out("## 1. Memory of a load level");
  out();
  out(`Client RSS sampled from /proc/<pid>/status every 100 ms (VmRSS; VmHWM = the kernel's peak). Zero-delay mock (\`--tpot-ms 0 --ttft-ms 0\`), \`--max-tokens 4\`. ik replaces itself (execve) with a fresh start that has BUN_CONFIG_MAX_HTTP_REQUESTS raised, so one process runs the benchmark ("worker"; "tree" = every process of it, a launcher and a worker only with IK_LAUNCHER=1); CPU is the tree's. "level peak" = the worker's max VmRSS while the level's requests were at the mock (window from the mock's request log); "after" = the worker's max VmRSS from the level's end to exit (summary, record, artifact hashes).`);
  out();
  out("| run | requests | token events | level peak VmRSS (MB) | VmHWM worker / tree (MB) | after level (MB) | after level (s) | client CPU (%) | achieved rps | send lag p99 (ms) |");
  out("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  const memRow = (label: string, r: LoadOut) => {
    if (r.error) return out(`| ${label} | error: ${r.error} |||||||||`);
    for (const l of r.levels) {
      out(`| ${label} ${l.name} | ${l.summary.n_requests} | ${l.summary.output_tokens} | ${mb(l.maxRssKb)} | ${mb(r.run.workerHwmKb)} / ${mb(r.run.hwmKb)} | ${mb(r.afterRssKb)} | ${f(r.afterS, 1)} | ${f(l.cpuPct, 0)} | ${f(l.achieved, 0)} | ${f(l.summary.send_lag_ms.p99)} |`);
    }
  };
  memRow("constant, 100 req/s × 2 s", mem.idle);
  memRow(`constant, ${MEM_RATE} req/s × 3 s`, mem.atRate);
  memRow(`${MEM_REQUESTS} requests`, mem.big);
  memRow("two levels", mem.two);
  out();
  const bl = mem.big.levels[0];
  const c0 = mem.atRate.levels[0]?.maxRssKb ?? null;
  const cIdle = mem.idle.levels[0]?.maxRssKb ?? null;
  let memOk: boolean | null = null;
  if (bl && c0 !== null && bl.maxRssKb !== null) {
    const events = bl.summary.output_tokens as number; // 1 token per event (mock default)
    const n = bl.summary.n_requests as number;
    const perLevelKb = (8 * events + 40 * n) / 1024;
    const boundKb = c0 + perLevelKb;
    const peakAll = Math.max(bl.maxRssKb, mem.big.afterRssKb ?? 0);
    memOk = bl.maxRssKb <= boundKb;
    out(`Bound: constant ${mb(c0)} MB (the ${MEM_RATE} req/s × 3 s run's level peak; ${mb(cIdle)} MB at 100 req/s) + 8 B × ${events} token events + 40 B × ${n} requests = ${mb(c0)} + ${f(perLevelKb / 1024, 1)} = **${mb(boundKb)} MB**. Measured level peak **${mb(bl.maxRssKb)} MB** (${memOk ? "within" : "OVER"} the bound by ${f((bl.maxRssKb - boundKb) / 1024, 1)} MB); peak over the whole run including record writing ${mb(peakAll)} MB (worker VmHWM ${mb(mem.big.run.workerHwmKb)} MB, tree ${mb(mem.big.run.hwmKb)} MB).`);
    if (bl.window) {
      const tr = [0.05, 0.25, 0.5, 0.75, 0.95].map((q) => `${Math.round(q * 100)} %: ${mb(rssAt(mem.big.run, bl.window as { t0: number; t1: number }, q))}`).join(", ");
      out();
      out(`VmRSS through the ${MEM_REQUESTS}-request level (MB, at % of its ${f((bl.window.t1 - bl.window.t0) / 1000, 0)} s): ${tr}.`);
    }
    if (mem.big.afterS !== null && mem.big.afterS > 3) notes.push(`the ${MEM_REQUESTS}-request run took ${f(mem.big.afterS, 1)} s after its level ended (summary, record, artifact hashes), peak VmRSS ${mb(mem.big.afterRssKb)} MB in that phase`);
  }
  const [l1, l2] = mem.two.levels;
  if (l1?.window && l2?.window) {
    const endOf1 = rssAt(mem.two.run, l1.window, 1);
    const startOf2 = maxRss(mem.two.run.samples, l2.window.t0, l2.window.t0 + 1000);
    out();
    out(`Two levels of ${TWO_LEVEL_REQUESTS} at ${MEM_RATE} and ${MEM_RATE - 1} req/s (the CLI merges equal grid values): level 1 peak ${mb(l1.maxRssKb)} MB, at its end ${mb(endOf1)} MB; level 2's first second ${mb(startOf2)} MB, level 2 peak ${mb(l2.maxRssKb)} MB (${(l2.maxRssKb ?? 0) <= (l1.maxRssKb ?? 0) * 1.05 ? "no growth across levels" : "GREW across levels"}).`);
  }
  out();

  // ---------------------------------------------------------------- 2. 1000 streams
  log(`2. ${STREAMS} closed-loop streams × ${REPS}`);
  const streams: (LoadOut & { variant: string })[] = await withMock("mock-paced", ["--tpot-ms", "20"], async (mock) => {
    const rs: (LoadOut & { variant: string })[] = [];
    for (let r = 0; r < REPS; r++) {
      const o = await loadRun(mock, `streams-${r}`, ["--closed-loop", "--concurrency", String(STREAMS), "--duration-s", String(STREAMS_S), "--max-tokens", "64"], STREAMS_S + 90);
      rs.push({ ...o, variant: "default" });
    }
    return rs;
  });
  out(`## 2. ${STREAMS} concurrent streams`);
  out();
  out(`\`--closed-loop --concurrency ${STREAMS} --duration-s ${STREAMS_S} --max-tokens 64\` against \`ik mock --tpot-ms 20\` (TTFT 50 ms): ~1.3 s a request. Goal: ≤ 100 MB. "in flight (client)" = mean in flight by Little's law from the rows; "running (mock)" = the mock's own vllm:num_requests_running gauge, mean / max. Bun's fetch opens at most 256 connections at once unless BUN_CONFIG_MAX_HTTP_REQUESTS is set at start (ik raises it; its own HTTP/1.1 client, which measures plain http, has no such cap), so "running (mock)" max should be ${STREAMS} (a max of ~256 means the limit is back, the other requests waiting inside fetch with their wait counted as TTFT).`);
  out();
  out("| rep | requests | level peak VmRSS worker / tree (MB) | VmHWM worker / tree (MB) | client CPU (% of a core) | CPU per token event (µs) | in flight (client) | running (mock) mean / max | TTFT p50 (ms) | TPOT p50 (ms) | failed |");
  out("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  let streamsOk: boolean | null = null;
  let streamsOk1024: boolean | null = null;
  streams.forEach((r, i) => {
    const l = r.levels[0];
    const rep = i + 1;
    if (r.error || !l) return out(`| ${rep} | error: ${r.error} |||||||||`);
    const cpuUsPerEv = l.window && l.cpuPct !== null ? (l.cpuPct / 100) * (l.window.t1 - l.window.t0) * 1000 / Math.max(1, l.summary.output_tokens) : null;
    const hwm = r.run.hwmKb;
    streamsOk = (streamsOk ?? true) && r.run.workerHwmKb / 1024 <= 100;
    streamsOk1024 = (streamsOk1024 ?? true) && hwm / 1024 <= 100;
    out(`| ${rep} | ${l.summary.n_requests} | ${mb(l.maxRssKb)} / ${mb(l.window ? maxRss(r.run.samples, l.window.t0, l.window.t1, true) : null)} | ${mb(r.run.workerHwmKb)} / ${mb(hwm)} | ${f(l.cpuPct, 0)} | ${f(cpuUsPerEv)} | ${f(l.summary.mean_inflight, 0)} | ${f(l.server?.means?.running, 0)} / ${f(l.server?.max?.running, 0)} | ${f(l.summary.ttft_ms.p50, 0)} | ${f(l.summary.tpot_ms.p50)} | ${l.summary.n_failed} |`);
  });
  out();

  // ---------------------------------------------------------------- 3. rates and ceiling
  log(`3. rates ${RATES.join(",")} × ${REPS}, then the ceiling`);
  const rateRuns: LoadOut[] = [];
  const ceilings: { rate: number; p50: number | null; p99: number | null; ratio: number | null; sratio: number | null; cpu: number | null; clientUs: number | null; mockUs: number | null; limited: string | null; error: string | null }[][] = [];
  await withMock("mock-rates", ["--tpot-ms", "0", "--ttft-ms", "0"], async (mock) => {
    for (let r = 0; r < REPS; r++) {
      rateRuns.push(await loadRun(mock, `rates-${r}`, ["--rates", RATES.join(","), "--duration-s", String(RATE_S), "--max-tokens", "4", "--sweep-all"], 3 * RATE_S + 90));
      const steps: typeof ceilings[number] = [];
      for (const rate of CEILING_STEPS) {
        const c = await loadRun(mock, `ceiling-${r}-${rate}`, ["--rates", String(rate), "--duration-s", String(CEILING_S), "--max-tokens", "4"], CEILING_S + 60);
        const l = c.levels[0];
        steps.push({
          rate, p50: l?.summary.send_lag_ms.p50 ?? null, p99: l?.summary.send_lag_ms.p99 ?? null,
          ratio: l && l.achieved !== null ? l.achieved / rate : null, sratio: l && l.achieved !== null && l.scheduled ? l.achieved / l.scheduled : null, cpu: l?.cpuPct ?? null,
          // CPU a request: ik's over the level's window, the mock's over the whole run (it idles outside it but for the warm-up requests, counted in).
          clientUs: l?.window && l.cpuPct !== null && l.sent > 0 ? (l.cpuPct / 100) * (l.window.t1 - l.window.t0) * 1000 / l.sent : null,
          mockUs: c.mockCpuS !== null && c.mockRequests > 0 ? c.mockCpuS * 1e6 / c.mockRequests : null,
          limited: l?.clientLimited ?? null, error: c.error,
        });
        if (c.error || (l?.summary.send_lag_ms.p99 ?? Infinity) > 5) break;
      }
      ceilings.push(steps);
    }
  });
  out("## 3. Achieved rate, send lag and client CPU");
  out();
  out(`\`--rates ${RATES.join(",")} --duration-s ${RATE_S} --max-tokens 4 --sweep-all\`, zero-delay mock; from the measured record's levels (offered_rate_rps, summary.achieved_rps, summary.send_lag_ms); client CPU = utime+stime of the ik process over the level's window (% of one core); "less CPU wait" = summary.send_lag_without_cpu_wait_ms, each request's send lag less the time ik's loop thread waited for a CPU while it waited for its deadline (Linux schedstat): the lag ik's own work caused. Goal at 500 req/s: achieved ≥ 0.99 × target, send lag p50 ≤ 0.2 ms, p99 ≤ 1 ms.`);
  out();
  out("| rep | target (req/s) | schedule's own rate | offered | achieved | achieved / target | achieved / schedule | send lag p50 (ms) | send lag p99 (ms) | less CPU wait p99 (ms) | loop lag max (ms) | of it ik's own (ms) | client CPU (%) | client_limited |");
  out("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
  const at500: { ratio: number; sratio: number | null; p50: number; p99: number; ownP99: number | null }[] = [];
  rateRuns.forEach((r, i) => {
    if (r.error) return out(`| ${i + 1} | error: ${r.error} ||||||||||`);
    for (const l of r.levels) {
      const ratio = l.achieved !== null && l.target ? l.achieved / l.target : null;
      const sratio = l.achieved !== null && l.scheduled ? l.achieved / l.scheduled : null;
      const ownP99 = (l.summary.send_lag_without_cpu_wait_ms?.p99 ?? null) as number | null;
      if (l.target === 500 && ratio !== null) at500.push({ ratio, sratio, p50: l.summary.send_lag_ms.p50, p99: l.summary.send_lag_ms.p99, ownP99 });
      out(`| ${i + 1} | ${l.target} | ${f(l.scheduled, 1)} | ${f(l.offered, 1)} | ${f(l.achieved, 1)} | ${f(ratio, 3)} | ${f(sratio, 3)} | ${f(l.summary.send_lag_ms.p50, 3)} | ${f(l.summary.send_lag_ms.p99, 3)} | ${f(ownP99, 3)} | ${f(l.loopMaxMs, 1)} | ${f(l.loopOwnMaxMs, 1)} | ${f(l.cpuPct, 0)} | ${l.clientLimited ?? ""} |`);
    }
  });
  out();
  const g500 = at500.map((a) => ({ ratio: a.ratio >= 0.99, sratio: (a.sratio ?? 0) >= 0.99, p50: a.p50 <= 0.2, p99: a.p99 <= 1, ownP99: a.ownP99 !== null && a.ownP99 <= 1 }));
  out(`"schedule's own rate" = (planned − 1) / (last − first arrival offset) of the level's seeded Poisson schedule (recomputed here with lib/schedule arrivalOffsetsMs and the record's seed): a ${RATE_S} s Poisson sample at 500 req/s has a ±${f(100 / Math.sqrt(500 * RATE_S), 1)} % (1σ) spread in its count, so "achieved / target" judges the schedule's luck as much as the client; "achieved / schedule" judges the client.`);
  out();
  out(`Goal at 500 req/s, per rep: ${g500.map((g, i) => `rep ${i + 1}: rate vs target ${g.ratio ? "met" : "NOT met"} (vs schedule ${g.sratio ? "met" : "NOT met"}), p50 ${g.p50 ? "met" : "NOT met"}, p99 ${g.p99 ? "met" : "NOT met"}`).join("; ") || "not measured"}.`);
  out();
  out(`Ceiling: one run per rate (${CEILING_S} s each, stepping ${CEILING_STEPS.join(", ")} and stopping at the first whose send lag p99 > 5 ms).`);
  out();
  out(`The client and the mock share this host's ${CPUS} CPUs: "client µs/req" = ik's CPU over the level's window a request sent; "mock µs/req" = the mock's (utime + stime from /proc) over the run a request ik sent it (the levels' and the --warmup ones); "host CPU at this rate" = both at the target rate, as a share of all ${CPUS} CPUs; "CPU-bound limit" = ${CPUS} CPUs / (client + mock µs/req), the rate at which the two would hold every CPU with nothing else running (the send lag passes 5 ms well before it: requests queue for a CPU).`);
  out();
  out("| rep | rate (req/s) | achieved / target | achieved / schedule | send lag p50 (ms) | send lag p99 (ms) | client CPU (%) | client µs/req | mock µs/req | host CPU at this rate (%) | CPU-bound limit (req/s) | client_limited |");
  out("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
  const ceilingOf: (number | null)[] = [];
  const perReq: { client: number; mock: number }[] = [];
  ceilings.forEach((steps, i) => {
    let first: number | null = null, lastOk: number | null = null;
    for (const s of steps) {
      const both = s.clientUs !== null && s.mockUs !== null ? s.clientUs + s.mockUs : null;
      if (s.clientUs !== null && s.mockUs !== null && s.rate >= 2000) perReq.push({ client: s.clientUs, mock: s.mockUs });
      if (s.error) out(`| ${i + 1} | ${s.rate} | error: ${s.error} ||||||||||`);
      else out(`| ${i + 1} | ${s.rate} | ${f(s.ratio, 3)} | ${f(s.sratio, 3)} | ${f(s.p50, 3)} | ${f(s.p99, 3)} | ${f(s.cpu, 0)} | ${f(s.clientUs, 0)} | ${f(s.mockUs, 0)} | ${f(both !== null ? (100 * s.rate * both / 1e6) / CPUS : null, 0)} | ${f(both ? (CPUS * 1e6) / both : null, 0)} | ${s.limited ?? ""} |`);
      if (!s.error && (s.p99 ?? Infinity) > 5 && first === null) first = s.rate;
      if (!s.error && (s.p99 ?? Infinity) <= 5) lastOk = s.rate;
    }
    ceilingOf.push(first);
    out(`| ${i + 1} | **ceiling** | send lag p99 first above 5 ms at ${first ?? `none up to ${CEILING_STEPS[CEILING_STEPS.length - 1]}`} req/s; last at or under 5 ms: ${lastOk ?? "none"} req/s ||||||||||`);
  });
  out();
  if (perReq.length) {
    const med = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
    const c = med(perReq.map((x) => x.client)), m = med(perReq.map((x) => x.mock));
    out(`CPU a request at 2,000 req/s and above (median of ${perReq.length} levels): ik ${f(c, 0)} µs, the mock ${f(m, 0)} µs: together the ${CPUS} CPUs hold at most ${f((CPUS * 1e6) / (c + m), 0)} req/s (a 2× ceiling needs the two to cost half as much on this host, or a server on other CPUs).`);
    out();
  }

  // ---------------------------------------------------------------- 4. pacer margins
  const arms: [PacerSleep, number][] = [
    ...MARGINS.map((m) => ["timer", m] as [PacerSleep, number]),
    ...(pacerTimers("precise") ? PRECISE_MARGINS.map((m) => ["precise", m] as [PacerSleep, number]) : []),
  ];
  log(`4. pacer ${arms.map(([s, m]) => `${s} ${m}`).join(", ")} at 500 req/s × ${REPS}`);
  const noop: PacerResult[] = [];
  const real: (PacerResult & { failed: number })[] = [];
  for (let r = 0; r < REPS; r++) {
    const order = r % 2 ? [...arms].reverse() : arms;
    for (const [s, m] of order) noop.push(await pacerNoop(500, PACER_S, m, 7 + r, s));
  }
  await withMock("mock-pacer", ["--tpot-ms", "0", "--ttft-ms", "0"], async (mock) => {
    for (let r = 0; r < REPS; r++) {
      const order = r % 2 ? [...arms].reverse() : arms;
      for (const [s, m] of order) real.push(await pacerReal(mock, 500, PACER_S, m, 7 + r, s));
    }
  });
  out("## 4. The pacer's spin margin (500 req/s)");
  out();
  out(`In this bench process: lib/executors runOpenLoop with \`spinMarginMs\` = ${MARGINS.join(", ")} after a timer's sleep (DEFAULT_SPIN_MARGIN_MS = ${DEFAULT_SPIN_MARGIN_MS}), and ${PRECISE_MARGINS.join(", ")} after the runtime's precise sleep (PRECISE_SPIN_MARGIN_MS = ${PRECISE_SPIN_MARGIN_MS}; Bun's Atomics.waitAsync, lib/runtime/_precise_sleep.ts: ${pacerTimers("precise") ? "measured" : "not measured, this runtime has none"}), ${PACER_S} s of Poisson arrivals at 500 req/s. "no-op send" isolates the pacer (send returns at once); "real send" streams each request to the zero-delay mock through Runner.send (no journal). Lag = when send was called − its deadline. CPU = this process's user+sys over the send window (% of one core). Reps alternate the margin order.`);
  out();
  out("| send | sleep | margin (ms) | rep | n | achieved (req/s) | lag p50 (ms) | lag p99 (ms) | lag max (ms) | CPU (%) |");
  out("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const [label, rs] of [["no-op", noop], ["real", real]] as const) {
    for (const [s, m] of arms) {
      rs.filter((x) => x.sleep === s && x.margin === m).forEach((x, i) => {
        out(`| ${label} | ${s} | ${m} | ${i + 1} | ${x.n} | ${f(x.achievedRps, 1)} | ${f(x.lagP50, 3)} | ${f(x.lagP99, 3)} | ${f(x.lagMax, 2)} | ${f(x.cpuPct, 1)} |`);
      });
    }
  }
  out();

  // ---------------------------------------------------------------- 5. TTFT lag
  log(`5. client-attributable TTFT lag at ${RATES.join(",")} × ${REPS} (in process)`);
  const ttft: TtftLagResult[] = [];
  await withMock("mock-ttft", ["--tpot-ms", "0", "--ttft-ms", "0"], async (mock) => {
    let k = 0;
    for (let r = 0; r < REPS; r++) for (const rate of RATES) ttft.push(await ttftLagLevel(mock, tmp, rate, RATE_S, k++));
  });
  out("## 5. Client-attributable TTFT lag");
  out();
  out(`Method: ik rows carry only monotonic times (t_send_ns, ttft_ms), so the level runs in this bench process — lib/bench/load_level.ts \`runLevel\` (the code \`ik bench serve --mode load\` runs per level: Runner.send, runOpenLoop, journal, outputs, inputs, typed columns), ${RATE_S} s of Poisson arrivals, \`--max-tokens 4\`, zero-delay mock with \`--request-log\` in its own process — where performance.timeOrigin is known. Each journaled row is paired with the mock's line: lines in the mock's read order (serial), rows in send order (t_send_ns), each line taking the earliest unpaired row with the same prompt token count ("in order" counts the pairs where that was the row in plain send order). Client lag = (timeOrigin + t_send + TTFT) − (recv_wall_ms + first_ms), both on this host's wall clock: from the mock writing the first token to the client having parsed it. Send leg = recv_wall_ms − (timeOrigin + t_send). TTFT − first_ms = leg + lag, needing no shared clock.`);
  out();
  out("| rep | rate (req/s) | sent | paired (in order) | achieved / target | send lag p50 / p99 (ms) | client lag p50 (ms) | client lag p99 (ms) | send leg p50 / p99 (ms) | TTFT − first_ms p50 / p99 (ms) | CPU (%) |");
  out("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  ttft.forEach((t, k) => {
    out(`| ${Math.floor(k / RATES.length) + 1} | ${t.rate} | ${t.sent} | ${t.paired} (${t.inOrder}) | ${f(t.achievedRps !== null ? t.achievedRps / t.rate : null, 3)} | ${f(t.sendLagP50, 3)} / ${f(t.sendLagP99, 3)} | ${f(t.lagP50, 3)} | ${f(t.lagP99, 3)} | ${f(t.legP50, 3)} / ${f(t.legP99, 3)} | ${f(t.ttftMinusFirstP50, 3)} / ${f(t.ttftMinusFirstP99, 3)} | ${f(t.cpuPct, 0)} |${t.note ? ` ${t.note}` : ""}`);
  });
  out();

  // ---------------------------------------------------------------- summary
  const load1 = loadavg();
  out("## Goals");
  out();
  out(`- Memory bound at ${MEM_REQUESTS} requests: ${memOk === null ? "not measured" : memOk ? "met" : "NOT met"} (section 1).`);
  out(`- ${STREAMS} streams ≤ 100 MB: ${streamsOk === null ? "not measured" : streamsOk ? "met" : "NOT met"} for the worker's VmHWM; for the tree (every process): ${streamsOk1024 === null ? "not measured" : streamsOk1024 ? "met" : "NOT met"} (section 2).`);
  // Each criterion: met in how many of the reps (every rep's own verdict is in section 3).
  const inReps = (ok: (g: (typeof g500)[number]) => boolean) => g500.length ? `met in ${g500.filter(ok).length} of ${g500.length} reps` : "n/a";
  out(`- 500 req/s: achieved ≥ 0.99 × target ${inReps((g) => g.ratio)} (≥ 0.99 × the schedule's own rate: ${inReps((g) => g.sratio)}); send lag p50 ≤ 0.2 ms ${inReps((g) => g.p50)}; p99 ≤ 1 ms ${inReps((g) => g.p99)} (less the loop thread's wait for a CPU: ${inReps((g) => g.ownP99)}).`);
  out(`- Ceiling (send lag p99 > 5 ms first at): ${ceilingOf.map((c) => (c === null ? "none" : `${c} req/s`)).join(", ")}.`);
  for (const n of notes) out(`- Note: ${n}.`);
  out();
  out(`Load average at start ${load0}, at end ${load1} (2 cores: other agents' work shares them). Total bench time ${f((performance.now() - tStart) / 1000, 0)} s, ${REPS} rep(s) of sections 2–5${QUICK ? " (BENCH_LOAD_QUICK: small sizes)" : ""}.`);
  // A quick run's small sizes are no result: they go beside RESULTS.md, never over it.
  const file = QUICK ? "RESULTS-quick.md" : "RESULTS.md";
  writeFileSync(join(HERE, file), md.join("\n") + "\n");
  log(`wrote benchmarks/load/${file} in ${f((performance.now() - tStart) / 1000, 0)} s`);
}

try {
  await main();
} finally {
  killAll();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}
