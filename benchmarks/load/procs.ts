/**
 * Processes for `npm run bench:load`: the zero-delay (or paced) mock in its own process with its
 * request log captured to a file, and `dist/ik bench serve --mode load` runs whose RSS (VmRSS,
 * VmHWM from /proc/<pid>/status) and CPU (utime + stime from /proc/<pid>/stat) are sampled every
 * 100 ms on the host's wall clock (the same clock as the mock's recv_wall_ms). Every process is
 * started with a time limit and killed by its pid at the end, even on error.
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { type MockRequestLog, parseRequestLog } from "../../lib/selftest/request_log.ts";

/** Wall-clock epoch ms, sub-ms (as the mock stamps recv_wall_ms). */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/** Clock ticks per second for /proc/<pid>/stat. */
export const CLK_TCK: number = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

const live = new Set<ChildProcess>();

/** Registers a child so that killAll (on exit, SIGINT, SIGTERM and errors) kills it. */
export function track(c: ChildProcess): void {
  live.add(c);
}

/** Kills every child still running (SIGKILL, by pid). Called on exit and on error. */
export function killAll(): void {
  for (const c of live) {
    try {
      if (c.pid && c.exitCode === null) process.kill(c.pid, "SIGKILL");
    } catch { /* gone */ }
  }
  live.clear();
}
process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the child's exit code once it has exited. */
export function exited(c: ChildProcess): Promise<number | null> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve(c.exitCode);
  return new Promise((r) => c.once("exit", (code) => r(code)));
}

/** A running mock. */
export interface Mock {
  port: number;
  pid: number;
  baseUrl: string;
  logPath: string;
  /** Request-log lines so far (waits up to `waitMs` for at least `atLeast`). */
  log(atLeast?: number, waitMs?: number): Promise<MockRequestLog[]>;
  stop(): Promise<void>;
}

/**
 * Starts `ik mock --port 0 [--request-log] <args>` with stdout (the request log) to a file,
 * pinned to one CPU with `taskset -c` when `opts.cpu` is given.
 */
export async function startMock(ik: string, dir: string, name: string, args: string[], opts: { cpu?: number | null; requestLog?: boolean } = {}): Promise<Mock> {
  const logPath = join(dir, `${name}.log`);
  const errPath = join(dir, `${name}.err`);
  const out = openSync(logPath, "w");
  const err = openSync(errPath, "w");
  const argv = [ik, "mock", "--host", "127.0.0.1", "--port", "0", ...(opts.requestLog === false ? [] : ["--request-log"]), "--parent-pid", String(process.pid), ...args];
  const [cmd, ...rest] = opts.cpu === null || opts.cpu === undefined ? argv : ["taskset", "-c", String(opts.cpu), ...argv];
  const c = spawn(cmd, rest, { stdio: ["ignore", out, err] });
  closeSync(out);
  closeSync(err);
  live.add(c);
  const until = performance.now() + 15_000;
  let port = 0;
  while (!port) {
    const m = readFileSync(errPath, "utf8").match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
    if (m) port = Number(m[1]);
    else if (c.exitCode !== null || performance.now() > until) {
      killOne(c);
      throw new Error(`mock did not start: ${readFileSync(errPath, "utf8").trim().slice(-300)}`);
    } else await sleep(10);
  }
  return {
    port,
    pid: c.pid as number,
    baseUrl: `http://127.0.0.1:${port}`,
    logPath,
    async log(atLeast = 0, waitMs = 2000) {
      const end = performance.now() + waitMs;
      for (;;) {
        const lines = parseRequestLog(readFileSync(logPath, "utf8"));
        if (lines.length >= atLeast || performance.now() > end) return lines;
        await sleep(20);
      }
    },
    async stop() {
      if (c.exitCode === null && c.signalCode === null) {
        process.kill(c.pid as number, "SIGTERM");
        const t = setTimeout(() => killOne(c), 2000);
        await exited(c);
        clearTimeout(t);
      }
      live.delete(c);
    },
  };
}

/** Kills one child (SIGKILL, by pid) and forgets it. */
export function killOne(c: ChildProcess): void {
  try {
    if (c.pid && c.exitCode === null) process.kill(c.pid, "SIGKILL");
  } catch { /* gone */ }
  live.delete(c);
}

/** One /proc sample of the client: its process tree (ik re-executes itself as a child). */
export interface Sample {
  /** Wall-clock epoch ms. */
  wallMs: number;
  /** VmRSS summed over the tree (launcher + worker), kB. */
  rssKb: number;
  /** VmHWM summed over the tree (an upper bound of the tree's peak), kB. */
  hwmKb: number;
  /** The largest process's (the worker's) VmRSS and VmHWM, kB. */
  workerRssKb: number;
  workerHwmKb: number;
  /** utime + stime of the tree (each pid's last value kept after it exits), clock ticks. */
  cpuTicks: number;
  /** Processes seen in the tree. */
  procs: number;
}

function treeOf(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length && out.length < 64; i++) {
    try {
      for (const t of readdirSync(`/proc/${out[i]}/task`)) {
        const kids = readFileSync(`/proc/${out[i]}/task/${t}/children`, "utf8").trim();
        if (kids) for (const k of kids.split(/\s+/)) out.push(Number(k));
      }
    } catch { /* gone */ }
  }
  return out;
}

/** Reads one sample of `pid`'s tree, or null when it is gone; `ticksSeen` keeps each pid's last CPU. */
export function sampleProc(pid: number, ticksSeen: Map<number, number> = new Map()): Sample | null {
  const wallMs = wallNow();
  let rss = 0, hwm = 0, wRss = 0, wHwm = 0, n = 0;
  for (const p of treeOf(pid)) {
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const kb = (k: string) => Number(status.match(new RegExp(`^${k}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0);
      const r = kb("VmRSS"), h = kb("VmHWM");
      rss += r;
      hwm += h;
      if (r > wRss) wRss = r;
      if (h > wHwm) wHwm = h;
      ticksSeen.set(p, Number(f[11]) + Number(f[12]));
      n++;
    } catch { /* gone */ }
  }
  if (!n) return null;
  let cpu = 0;
  for (const v of ticksSeen.values()) cpu += v;
  return { wallMs, rssKb: rss, hwmKb: hwm, workerRssKb: wRss, workerHwmKb: wHwm, cpuTicks: cpu, procs: n };
}

/** A finished, sampled client run. */
export interface ClientRun {
  rc: number | null;
  timedOut: boolean;
  wallS: number;
  samples: Sample[];
  /** Peak VmHWM seen, summed over the tree (kB). */
  hwmKb: number;
  /** Peak VmHWM of the worker (the largest process), kB. */
  workerHwmKb: number;
  /** Most processes seen at once. */
  procs: number;
  stdout: string;
  stderr: string;
  startWallMs: number;
  endWallMs: number;
}

/**
 * Reads an executable whole (and drops what it read), so that every page of it is in the page
 * cache before it runs. Its file-backed RSS depends on that: the kernel maps the pages around a
 * fault that are already cached (fault-around), so a binary just written or read shows ~2.5 MB more
 * of its own code resident than one partly evicted (AMD EPYC 2026-12-06, `ik bench serve` at one
 * stream: 31.7 MB of Bun's code with the cache dropped, 35.3 MB with the binary cached). Peaks of
 * builds compared side by side, and of ik against a floor compiled a moment before, are taken
 * alike only when each starts warm. Best effort: a file that cannot be read is left as it is.
 */
export function warmPageCache(path: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    const buf = new Uint8Array(1 << 20);
    for (let i = 0; i < 4096 && readSync(fd, buf, 0, buf.length, null) > 0; i++);
  } catch {
    // not readable (a command on PATH, say): measured as it is
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Runs `ik <args>` (env added), sampling /proc every `everyMs`; killed after `limitS`. */
export async function runSampled(ik: string, args: string[], env: Record<string, string>, dir: string, name: string, limitS: number, everyMs = 100): Promise<ClientRun> {
  const outPath = join(dir, `${name}.stdout`);
  const errPath = join(dir, `${name}.stderr`);
  const out = openSync(outPath, "w");
  const err = openSync(errPath, "w");
  warmPageCache(ik);
  const startWallMs = wallNow();
  const c = spawn(ik, args, { stdio: ["ignore", out, err], env: { ...process.env, ...env } });
  closeSync(out);
  closeSync(err);
  live.add(c);
  const samples: Sample[] = [];
  const seen = new Map<number, number>();
  const take = () => {
    const s = sampleProc(c.pid as number, seen);
    if (s && Number.isFinite(s.rssKb)) samples.push(s);
  };
  take();
  const iv = setInterval(take, everyMs);
  let timedOut = false;
  const kill = setTimeout(() => {
    timedOut = true;
    killOne(c);
  }, limitS * 1000);
  const rc = await exited(c);
  clearInterval(iv);
  clearTimeout(kill);
  live.delete(c);
  const endWallMs = wallNow();
  return {
    rc,
    timedOut,
    wallS: (endWallMs - startWallMs) / 1000,
    samples,
    hwmKb: samples.reduce((a, s) => Math.max(a, s.hwmKb), 0),
    workerHwmKb: samples.reduce((a, s) => Math.max(a, s.workerHwmKb), 0),
    procs: samples.reduce((a, s) => Math.max(a, s.procs), 0),
    stdout: readFileSync(outPath, "utf8"),
    stderr: readFileSync(errPath, "utf8"),
    startWallMs,
    endWallMs,
  };
}

/** CPU ticks at wall time `t`, linearly interpolated between samples. */
export function ticksAt(samples: Sample[], t: number): number {
  if (!samples.length) return NaN;
  if (t <= samples[0].wallMs) return samples[0].cpuTicks;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1], b = samples[i];
    if (t <= b.wallMs) return a.cpuTicks + (b.cpuTicks - a.cpuTicks) * ((t - a.wallMs) / Math.max(1e-9, b.wallMs - a.wallMs));
  }
  return samples[samples.length - 1].cpuTicks;
}

/** Client CPU over [t0, t1] wall ms, in % of one core. */
export function cpuPct(samples: Sample[], t0: number, t1: number): number | null {
  if (!(t1 > t0) || samples.length < 2) return null;
  return (100 * (ticksAt(samples, t1) - ticksAt(samples, t0)) / CLK_TCK) / ((t1 - t0) / 1000);
}

/** Max VmRSS (kB) among samples in [t0, t1]: the worker's, or the tree's with `tree`. */
export function maxRss(samples: Sample[], t0: number, t1: number, tree = false): number | null {
  let m = -1;
  for (const s of samples) if (s.wallMs >= t0 && s.wallMs <= t1) m = Math.max(m, tree ? s.rssKb : s.workerRssKb);
  return m < 0 ? null : m;
}

/** The level's wall-clock window from its request-log lines (first read → last token written). */
export function windowOf(lines: MockRequestLog[]): { t0: number; t1: number } | null {
  const w = lines.filter((l) => l.recvWallMs !== null);
  if (!w.length) return null;
  let t0 = Infinity, t1 = -Infinity;
  for (const l of w) {
    t0 = Math.min(t0, l.recvWallMs as number);
    t1 = Math.max(t1, (l.recvWallMs as number) + (l.lastMs ?? l.firstMs ?? 0));
  }
  return { t0, t1 };
}
