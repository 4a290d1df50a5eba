/**
 * A real Prometheus server (Debian's `prometheus` package, 2.x) for end-to-end remote write tests:
 * why it cannot run here, starting it on a free loopback port with the remote write receiver on,
 * a throwaway TSDB folder and a minimal config (no scrape targets), instant queries, killing and
 * restarting it on the same port and data. Every wait is bounded; stop() kills the process, waits
 * for its exit and removes the folder.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../_helpers/ports.ts";

/** Where Debian installs the server. */
export const PROMETHEUS_BIN = "/usr/bin/prometheus";

/** A reason to skip the real-Prometheus tests here, or false when the server can run. */
export function prometheusSkip(): string | false {
  if (!existsSync(PROMETHEUS_BIN)) return `${PROMETHEUS_BIN} is missing (install Debian's package: apt-get install -y prometheus)`;
  const v = spawnSync(PROMETHEUS_BIN, ["--version"], { timeout: 10_000 });
  return v.status === 0 ? false : `${PROMETHEUS_BIN} --version failed (${v.error?.message ?? `exit ${v.status}`})`;
}

/** One instant-query result: the labels and the value. */
export interface QueryResult {
  metric: Record<string, string>;
  value: number;
}

/** A running (or killed) Prometheus. */
export interface Prometheus {
  /** `http://127.0.0.1:PORT`. */
  base: string;
  /** The remote write endpoint. */
  writeUrl: string;
  /** The current process (a new one after restart()). */
  child(): ChildProcess;
  /** An instant query at `timeMs` (ms since the epoch). */
  query(promql: string, timeMs: number): Promise<QueryResult[]>;
  /** SIGKILL, and wait (≤ 10 s) for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder and waits until ready. */
  restart(): Promise<void>;
  /** Kills it (if alive), waits for the exit, removes the folder. */
  stop(): Promise<void>;
  /** The last lines it wrote to stderr (for failure messages). */
  log(): string;
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((done) => {
    const t = setTimeout(() => done(false), ms);
    child.once("exit", () => {
      clearTimeout(t);
      done(true);
    });
  });
}

/**
 * Starts Prometheus and waits (≤ 20 s) for `/-/ready`.
 * @param scrape targets (`127.0.0.1:PORT`) it scrapes every `intervalS` (a scrape config of its own), none by default
 */
export async function startPrometheus(scrape: { targets: string[]; intervalS: number } | null = null): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), "ik-prom-"));
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, scrape
    ? `global:\n  scrape_interval: ${Math.round(scrape.intervalS * 1000)}ms\nscrape_configs:\n  - job_name: ik\n    scrape_interval: ${Math.round(scrape.intervalS * 1000)}ms\n    scrape_timeout: ${Math.round(scrape.intervalS * 1000)}ms\n    static_configs:\n      - targets: [${scrape.targets.map((t) => `"${t}"`).join(", ")}]\n`
    : "global:\n  scrape_interval: 1m\nscrape_configs: []\n");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let logTail = "";
  let child: ChildProcess;

  const launch = async () => {
    child = spawn(PROMETHEUS_BIN, [
      "--web.enable-remote-write-receiver",
      `--web.listen-address=127.0.0.1:${port}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--config.file=${config}`,
      "--log.level=warn",
    ], { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr!.on("data", (b: Uint8Array) => {
      logTail = (logTail + new TextDecoder().decode(b)).slice(-4000);
    });
    child.on("error", (e) => {
      logTail += `\nspawn error: ${e.message}`;
    });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = await fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(1000) }).then(async (r) => {
        await r.body?.cancel();
        return r.status === 200;
      }, () => false);
      if (ok) return;
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill("SIGKILL");
        await exited(child, 10_000);
        throw new Error(`prometheus did not become ready in 20 s: ${logTail.slice(-800)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  try {
    await launch();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }

  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (!(await exited(child, 10_000))) throw new Error("prometheus did not exit within 10 s of SIGKILL");
  };
  return {
    base,
    writeUrl: `${base}/api/v1/write`,
    child: () => child,
    log: () => logTail,
    async query(promql: string, timeMs: number): Promise<QueryResult[]> {
      const u = `${base}/api/v1/query?query=${encodeURIComponent(promql)}&time=${(timeMs / 1000).toFixed(3)}`;
      const r = await fetch(u, { signal: AbortSignal.timeout(10_000) });
      const j = await r.json() as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (j.status !== "success" || j.data?.resultType !== "vector") throw new Error(`query ${promql}: ${j.status} ${j.error ?? j.data?.resultType}`);
      const num = (v: string) => (v === "+Inf" ? Infinity : v === "-Inf" ? -Infinity : Number(v));
      return j.data.result.map((x) => ({ metric: x.metric, value: num(x.value[1]) }));
    },
    kill,
    restart: launch,
    async stop() {
      try {
        await kill();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
