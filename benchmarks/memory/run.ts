/**
 * `npm run bench:memory`: the client's memory (issue 21 goal 2), measured, never asserted. Against
 * `ik mock` in its own process (127.0.0.1):
 *
 * 1. closed-loop streams of 256 tokens at 64, 256 and 1,000 streams: the whole process tree's peak
 *    RSS (one process by default: ik execve's itself on Bun to raise the fetch limit; two with
 *    IK_LAUNCHER=1), the largest process's alone, and the tree's PSS at the peak sample
 *    (/proc/<pid>/smaps_rollup: shared pages split); what the parts hold, from the level record's
 *    `client_memory` (ik's own peaks of JS heap in use, external, ArrayBuffers) and the sockets
 *    open at the peak (/proc/<pid>/fd); beside it the runtime's floor at the same streams
 *    (floor_client.ts, compiled with dist/ik's runtime flags: a socket per stream and nothing of
 *    ik's), so what is above that floor is ik's own; and the work floor (the same client doing, in
 *    plain code, the least a client that times every token must: decode, split lines, JSON.parse
 *    every event, keep the text and the times, serialize a row per request), so what is above that
 *    is the cost of ik's own structure, not of the work;
 * 2. what is live per open stream: ik and the floor at 1 and at 1,000 streams, each with
 *    live_probe.ts preloaded (a full collection mid-level, then JavaScriptCore's heap size and object
 *    counts): the difference over 999 streams is what one open stream holds, and by which types;
 * 3. 200,000 requests at 2,000 req/s: the worker's RSS at every 10,000th request (the mock's log
 *    counts them), and the growth from request 10,000 to 200,000 (the goal: within 10 %).
 *
 * Prints the tables (host CPU, date, load average) and writes benchmarks/memory/RESULTS.md. Env: IK_BIN
 * (default dist/ik), BENCH_MEMORY_QUICK=1 (small sizes, to try the script), BENCH_MEMORY_STREAMS=1000
 * (only these stream counts, comma-separated), BENCH_MEMORY_CURVE=0 (no 200,000-request curve),
 * BENCH_MEMORY_PROBE=0 (no per-stream probe); a run with any of these four writes
 * RESULTS-partial.md instead.
 * @module
 */
import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuName } from "../_host_cpu.ts";
import { runtimeFlagsOf } from "../_runtime_flags.ts";
import { exited, killAll, sampleProc, startMock, track, warmPageCache } from "../load/procs.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");
const QUICK = process.env.BENCH_MEMORY_QUICK === "1";
const IK = resolve(ROOT, process.env.IK_BIN ?? "dist/ik");
const STREAMS = process.env.BENCH_MEMORY_STREAMS !== undefined ? streamCounts(process.env.BENCH_MEMORY_STREAMS) : QUICK ? [64, 256] : [64, 256, 1000];
const CURVE = process.env.BENCH_MEMORY_CURVE !== "0";
// A quick run's small sizes are no result either: it must not overwrite RESULTS.md.
const PARTIAL = QUICK || CURVE === false || process.env.BENCH_MEMORY_STREAMS !== undefined || process.env.BENCH_MEMORY_PROBE === "0";
const TOKENS = 256;
const STREAM_S = QUICK ? 3 : 8;
const CURVE_RATE = 2000;
const CURVE_N = QUICK ? 20_000 : 200_000;
const GOAL_MB = 100;
/** The many-streams side of the per-stream probe. */
const N_PROBE = QUICK ? 256 : 1000;
const PROBE = process.env.BENCH_MEMORY_PROBE !== "0";

/** BENCH_MEMORY_STREAMS as stream counts; anything but positive integers stops the bench with a line naming it. */
function streamCounts(text: string): number[] {
  const out = text.split(",").map((w) => Number(w.trim()));
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 1)) {
    process.stderr.write(`bench:memory: BENCH_MEMORY_STREAMS '${text}': give positive integers separated by commas, e.g. 64,1000\n`);
    process.exit(64);
  }
  return out;
}

const mb = (kb: number | null | undefined) => (kb === null || kb === undefined ? "n/a" : (kb / 1024).toFixed(1));
const log = (s: string) => process.stderr.write(`bench:memory: ${s}\n`);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** PSS (kB) of every process of a tree, from smaps_rollup, or null where it cannot be read. */
function treePss(pid: number): number | null {
  const pids = [pid];
  for (let i = 0; i < pids.length && pids.length < 64; i++) {
    try {
      for (const t of readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) pids.push(Number(t));
    } catch { /* gone */ }
  }
  let sum = 0, any = false;
  for (const p of pids) {
    try {
      const m = readFileSync(`/proc/${p}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
      if (m) {
        sum += Number(m[1]);
        any = true;
      }
    } catch { /* gone */ }
  }
  return any ? sum : null;
}

const md: string[] = [];
const out = (s = "") => {
  md.push(s);
  process.stdout.write(s + "\n");
};

/** Lines of a growing file, counted from where the last call stopped. */
function lineCounter(path: string): () => number {
  let off = 0, n = 0;
  const buf = Buffer.alloc(1 << 20);
  return () => {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return n;
    }
    try {
      for (;;) {
        const got = readSync(fd, buf, 0, buf.length, off);
        if (got <= 0) break;
        off += got;
        for (let i = 0; i < got; i++) if (buf[i] === 10) n++;
      }
    } finally {
      closeSync(fd);
    }
    return n;
  };
}

interface Point {
  wallMs: number;
  sockets: number | null;
  treeRssKb: number;
  workerRssKb: number;
  pssKb: number | null;
  done: number;
  procs: number;
}

/** Sockets open in a process tree (its /proc/<pid>/fd links), or null where they cannot be read. */
function treeSockets(pid: number): number | null {
  let n = 0, any = false;
  const pids = [pid];
  for (let i = 0; i < pids.length && pids.length < 64; i++) {
    try {
      for (const t of readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) pids.push(Number(t));
    } catch { /* gone */ }
  }
  for (const p of pids) {
    try {
      for (const fd of readdirSync(`/proc/${p}/fd`)) {
        try {
          if (readlinkSync(`/proc/${p}/fd/${fd}`).startsWith("socket:")) n++;
        } catch { /* closed meanwhile */ }
      }
      any = true;
    } catch { /* gone */ }
  }
  return any ? n : null;
}

/** Runs `cmd` (ik) with `args`, sampling its tree every 100 ms (RSS, PSS, `done()`; sockets every second), bounded by `limitS`. */
async function sampled(cmd: string, args: string[], env: Record<string, string>, limitS: number, done: () => number): Promise<{ rc: number | null; points: Point[]; stderr: string; stdout: string }> {
  // Every binary (ik and the floors) starts with its file in the page cache: see warmPageCache.
  warmPageCache(cmd);
  const c = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  track(c);
  let stderr = "", stdout = "";
  // Enough for the probe's line (every object type's count) with progress lines after it.
  c.stderr?.on("data", (d) => (stderr = (stderr + String(d)).slice(-65536)));
  c.stdout?.on("data", (d) => (stdout += String(d)));
  let tick = 0;
  const points: Point[] = [];
  const seen = new Map<number, number>();
  const iv = setInterval(() => {
    const s = sampleProc(c.pid as number, seen);
    if (s) points.push({ wallMs: s.wallMs, treeRssKb: s.rssKb, workerRssKb: s.workerRssKb, pssKb: treePss(c.pid as number), done: done(), procs: s.procs, sockets: tick++ % 10 === 0 ? treeSockets(c.pid as number) : null });
  }, 100);
  const kill = setTimeout(() => c.kill("SIGKILL"), limitS * 1000);
  const rc = await exited(c);
  clearInterval(iv);
  clearTimeout(kill);
  return { rc, points, stderr, stdout };
}

/** The first level of the record a `--json` run printed (its measurement id): its `client_memory` and event-loop lag, or nulls. */
function levelOf(stdout: string, runsDir: string): { mem: Record<string, number | null> | null; lag: Record<string, number | null> | null } {
  try {
    const id = JSON.parse(stdout).data.measurement as string;
    const ev = JSON.parse(readFileSync(join(runsDir, id, "evidence.json"), "utf8"));
    return { mem: ev.data.levels[0].client_memory ?? null, lag: ev.data.levels[0].event_loop_lag_ms ?? null };
  } catch {
    return { mem: null, lag: null };
  }
}

/**
 * Compiles floor_client.ts as dist/ik is compiled (`bun build --compile`, minified, bytecode, ESM,
 * with the binary's built-in runtime flags from `--version --json`), into `dir`.
 */
function buildFloor(dir: string): string {
  const flags = runtimeFlagsOf(IK).join(" ");
  const outfile = join(dir, "floor_client");
  execFileSync(process.execPath, ["build", "--compile", "--minify", "--bytecode", "--format=esm", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig",
    ...(flags ? [`--compile-exec-argv=${flags}`] : []), join(HERE, "floor_client.ts"), "--outfile", outfile], { stdio: ["ignore", "ignore", "inherit"] });
  return outfile;
}

/**
 * The floor client's peak RSS (kB) at `n` streams against the mock on `port` (`extra`: ["parse"] for
 * the work floor), or null when it failed or no reading was taken.
 */
async function floorPeak(floor: string, port: string, n: number, extra: string[]): Promise<number | null> {
  const fl = await sampled(floor, [port, String(n), String(STREAM_S), String(TOKENS), ...extra], {}, STREAM_S + 60, () => 0);
  if (fl.rc !== 0) log(`floor ${[n, ...extra].join(" ")}: exit ${fl.rc}: ${fl.stderr.trim().split("\n").slice(-2).join(" | ")}`);
  const kb = fl.points.reduce((a, p) => Math.max(a, p.treeRssKb), 0);
  return fl.rc === 0 && kb > 0 ? kb : null;
}

const f1 = (v: number | null | undefined) => (typeof v === "number" ? v.toFixed(1) : "n/a");

interface Probe {
  heap_bytes: number;
  objects: number;
  types: Record<string, number>;
  rss_kb: number;
}

/** Runs `cmd` with live_probe.ts preloaded, firing `atMs` after start; its reading, or null. */
async function probed(cmd: string, args: string[], env: Record<string, string>, atMs: number): Promise<Probe | null> {
  const preload = `--preload=${join(HERE, "live_probe.ts")}`;
  const r = await sampled(cmd, args, { ...env, BUN_OPTIONS: [process.env.BUN_OPTIONS, preload].filter(Boolean).join(" "), LIVE_PROBE_AT_MS: String(atMs) }, STREAM_S + 60, () => 0);
  const line = r.stderr.split("\n").find((l) => l.startsWith("[live-probe] "));
  if (!line) {
    log(`probe of ${cmd}: no reading (exit ${r.rc})`);
    return null;
  }
  return JSON.parse(line.slice("[live-probe] ".length)) as Probe;
}

/** What one open stream holds: ik and the floor at 1 and 1,000 streams, a full collection mid-level. */
async function perStream(tmp: string, env: Record<string, string>, floor: string): Promise<void> {
  const mock = await startMock(IK, tmp, "mock-probe", ["--tpot-ms", "8", "--ttft-ms", "20"], { requestLog: false });
  try {
    const port = new URL(mock.baseUrl).port;
    // ik's level starts after its start-up and one warm-up request (256 tokens, ~2.1 s): probe 3.5 s into it.
    const ikAt = (n: number) => probed(IK, ["bench", "serve", "--base-url", mock.baseUrl, "--model", "mock-model", "--mode", "load", "--closed-loop",
      "--concurrency", String(n), "--duration-s", String(STREAM_S), "--max-tokens", String(TOKENS), "--warmup", "1", "--json"], env, QUICK ? 3800 : 6000);
    const floorAt = (n: number) => probed(floor, [port, String(n), String(STREAM_S), String(TOKENS)], {}, QUICK ? 1500 : 3000);
    const rows: [string, Probe | null, Probe | null][] = [["ik", await ikAt(1), await ikAt(N_PROBE)], ["runtime floor", await floorAt(1), await floorAt(N_PROBE)]];
    out(`What one open stream holds: a full collection mid-level, then the live JavaScript heap (objects and the memory they report) at 1 and at ${N_PROBE.toLocaleString("en")} streams; per stream = the difference over ${N_PROBE - 1}.`);
    out();
    out(`| process | live heap at 1 stream MB | at ${N_PROBE.toLocaleString("en")} MB | objects at 1 / ${N_PROBE.toLocaleString("en")} | per stream KB | objects per stream | RSS at the probe, 1 / ${N_PROBE.toLocaleString("en")} MB | the types that grew most (per stream) |`);
    out("|---|---:|---:|---:|---:|---:|---:|---|");
    for (const [name, one, many] of rows) {
      if (one === null || many === null) {
        out(`| ${name} | n/a | n/a | n/a | n/a | n/a | n/a | |`);
        continue;
      }
      const grew = Object.entries(many.types).map(([t, c]) => [t, (c - (one.types[t] ?? 0)) / (N_PROBE - 1)] as const)
        .filter(([, d]) => d >= 0.5).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([t, d]) => `${t} ${d.toFixed(1)}`).join(", ");
      out(`| ${name} | ${(one.heap_bytes / 1048576).toFixed(2)} | ${(many.heap_bytes / 1048576).toFixed(2)} | ${one.objects.toLocaleString("en")} / ${many.objects.toLocaleString("en")} | ${((many.heap_bytes - one.heap_bytes) / 1024 / (N_PROBE - 1)).toFixed(2)} | ${((many.objects - one.objects) / (N_PROBE - 1)).toFixed(1)} | ${mb(one.rss_kb)} / ${mb(many.rss_kb)} | ${grew} |`);
    }
    out();
  } finally {
    await mock.stop();
  }
}

/** The 200,000-request curve at 2,000 req/s: the worker's RSS every 20,000 requests, and its growth. */
async function curve(tmp: string, env: Record<string, string>): Promise<void> {
  const mock = await startMock(IK, tmp, "mock-curve", ["--tpot-ms", "0", "--ttft-ms", "0"]);
  try {
    const count = lineCounter(mock.logPath);
    const r = await sampled(IK, ["bench", "serve", "--base-url", mock.baseUrl, "--model", "mock-model", "--mode", "load", "--rates", String(CURVE_RATE),
      "--requests", String(CURVE_N), "--max-tokens", "8", "--warmup", "1", "--json"], env, CURVE_N / CURVE_RATE + 180, count);
    // RSS under a collector is a sawtooth: beside the reading at request k, the lowest and highest
    // readings since the previous row (every 100 ms) show the floor (what is held) and the peaks.
    out(`| requests ended (the mock's log), of ${CURVE_N.toLocaleString("en")} at ${CURVE_RATE} req/s | worker RSS MB at k | lowest since the row above | highest since the row above |`);
    out("|---:|---:|---:|---:|");
    const at = (k: number) => r.points.find((p) => p.done >= k) ?? null;
    const step = QUICK ? 5_000 : 20_000;
    let from = 0;
    const lows: (number | null)[] = [], highs: (number | null)[] = [];
    for (let k = 10_000; k <= CURVE_N; k += k === 10_000 && step > 10_000 ? step - 10_000 : step) {
      const span = r.points.filter((p) => p.done > from && p.done <= k);
      const lo = span.length ? Math.min(...span.map((p) => p.workerRssKb)) : null;
      const hi = span.length ? Math.max(...span.map((p) => p.workerRssKb)) : null;
      out(`| ${k.toLocaleString("en")} | ${mb(at(k)?.workerRssKb)} | ${mb(lo)} | ${mb(hi)} |`);
      if (k > 10_000) {
        lows.push(lo);
        highs.push(hi);
      }
      from = k;
    }
    const a = at(10_000)?.workerRssKb, b = at(CURVE_N)?.workerRssKb;
    out();
    const { mem, lag } = levelOf(r.stdout, env.IK_RUNS_DIR);
    out(`ik's own record of the level: peak RSS ${f1(mem?.rss_peak_mib)} MiB, JS heap in use ${f1(mem?.heap_used_peak_mib)} MiB, external ${f1(mem?.external_peak_mib)} MiB; event loop blocked p99 ${f1(lag?.p99_ms)} ms, max ${f1(lag?.max_ms)} ms (ik's own: p99 ${f1(lag?.own_p99_ms)} ms, max ${f1(lag?.own_max_ms)} ms).`);
    out();
    out(`Growth of the worker's RSS from request 10,000 to ${CURVE_N.toLocaleString("en")}: ${a && b ? `${(((b - a) / a) * 100).toFixed(1)} %` : "n/a"} (goal: within 10 %: ${a && b ? (Math.abs(b - a) / a <= 0.1 ? "met" : "not met") : "n/a"}); exit ${r.rc}.`);
    const lo0 = lows[0], lo1 = lows[lows.length - 1];
    if (lo0 && lo1) out(`The floor (lowest reading of a window) from the first window after request 10,000 to the last: ${mb(lo0)} → ${mb(lo1)} MB (${(((lo1 - lo0) / lo0) * 100).toFixed(1)} %).`);
    // The reading at k is one sample of a sawtooth (a collection every few hundred ms): the lowest
    // and highest of each window bound it, and show whether what is held, or its peaks, grow.
    const hi0 = highs[0], hi1 = highs[highs.length - 1];
    if (hi0 && hi1) out(`The peaks (highest reading of a window), the same windows: ${mb(hi0)} → ${mb(hi1)} MB (${(((hi1 - hi0) / hi0) * 100).toFixed(1)} %); the highest of all windows after request 10,000: ${mb(Math.max(...highs.filter((h): h is number => h !== null)))} MB.`);
    if (r.rc !== 0) log(`curve: exit ${r.rc}: ${r.stderr.trim().split("\n").slice(-2).join(" | ")}`);
  } finally {
    await mock.stop();
  }
  out();
}

async function main(): Promise<void> {
  if (!existsSync(IK)) throw new Error(`${IK} missing: npm run build first`);
  const tmp = mkdtempSync(join(tmpdir(), "ik-bench-mem-"));
  const env = { IK_RUNS_DIR: join(tmp, "runs"), IK_KEY_FILE: join(tmp, "key") };
  out(`# bench:memory — ${cpuName()}, ${new Date().toISOString()}, load average at start ${loadavg()}`);
  out();
  out(`Goal (issue 21): the whole tree's peak RSS <= ${GOAL_MB} MB at 1,000 streams; the worker's RSS flat within 10 % from request 10,000 to ${CURVE_N.toLocaleString("en")} at ${CURVE_RATE} req/s.`);
  out();
  const floor = buildFloor(tmp);
  out(`| streams (closed loop, ${TOKENS} tokens) | tree peak RSS MB | largest process peak RSS MB | tree PSS at the peak MB | processes | JS heap in use MB | external MB (ArrayBuffers) | sockets | event loop blocked p99 / max ms | ik's own block p99 / max ms | runtime floor peak RSS MB | ik above the floor MB | work floor peak RSS MB | ik above the work floor MB | goal |`);
  out("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const n of STREAMS) {
    const mock = await startMock(IK, tmp, `mock-s${n}`, ["--tpot-ms", "8", "--ttft-ms", "20"], { requestLog: false });
    try {
      const r = await sampled(IK, ["bench", "serve", "--base-url", mock.baseUrl, "--model", "mock-model", "--mode", "load", "--closed-loop",
        "--concurrency", String(n), "--duration-s", String(STREAM_S), "--max-tokens", String(TOKENS), "--warmup", "1", "--json"], env, STREAM_S + 120, () => 0);
      const peak = r.points.reduce<Point | null>((a, p) => (a === null || p.treeRssKb > a.treeRssKb ? p : a), null);
      const worker = r.points.reduce((a, p) => Math.max(a, p.workerRssKb), 0);
      // A verdict only where a peak was read.
      const goal = n !== 1000 ? "" : peak === null ? "n/a" : peak.treeRssKb / 1024 <= GOAL_MB ? "met" : "not met";
      const { mem: cm, lag } = levelOf(r.stdout, env.IK_RUNS_DIR);
      const sockets = r.points.reduce((a, p) => Math.max(a, p.sockets ?? 0), 0);
      if (r.rc !== 0) log(`streams ${n}: exit ${r.rc}: ${r.stderr.trim().split("\n").slice(-2).join(" | ")}`);
      // The same streams, the same mock, the same length, with nothing of ik's.
      const port = new URL(mock.baseUrl).port;
      const fl = await floorPeak(floor, port, n, []);
      // The same, doing the least a measuring client must: decode, split, JSON.parse, times, a row.
      const work = await floorPeak(floor, port, n, ["parse"]);
      const above = (kb: number | null) => (peak && kb !== null ? mb(peak.treeRssKb - kb) : "n/a");
      out(`| ${n} | ${mb(peak?.treeRssKb)} | ${mb(worker)} | ${mb(peak?.pssKb)} | ${peak?.procs ?? "n/a"} | ${f1(cm?.heap_used_peak_mib)} | ${f1(cm?.external_peak_mib)} (${f1(cm?.array_buffers_peak_mib)}) | ${sockets} | ${f1(lag?.p99_ms)} / ${f1(lag?.max_ms)} | ${f1(lag?.own_p99_ms)} / ${f1(lag?.own_max_ms)} | ${mb(fl)} | ${above(fl)} | ${mb(work)} | ${above(work)} | ${goal} |`);
    } finally {
      await mock.stop();
    }
  }
  out();
  if (PROBE) await perStream(tmp, env, floor);
  if (CURVE) await curve(tmp, env);
  out();
  out(`Load average at the end: ${loadavg()}.`);
  writeFileSync(join(HERE, PARTIAL ? "RESULTS-partial.md" : "RESULTS.md"), md.join("\n") + "\n");
  rmSync(tmp, { recursive: true, force: true });
}

main().then(() => killAll(), (e) => {
  log(`failed: ${(e as Error).message}`);
  killAll();
  process.exit(1);
});
