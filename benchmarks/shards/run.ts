/**
 * `npm run bench:shards`: the client ceiling of `ik bench serve --mode load` run as 1 shard and
 * as 2 shards (`--shard K/S --start-at EPOCH_MS`, merged with `ik merge`) against a zero-delay
 * `ik mock` in its own process, all on 127.0.0.1. Prints the table and writes
 * benchmarks/shards/RESULTS.md (host CPU, core count, date, load average). A report only: measured and
 * printed, never asserted.
 *
 * Method: one seeded Poisson rate grid (RATES, each level DURATION_S long, LEVEL_GAP_S between
 * levels of the shared timetable), run once as `--shard 0/1` and once as two processes
 * `--shard 0/2` and `--shard 1/2` with the same `--start-at` a few seconds ahead; each run is
 * merged with `ik merge`. Per level the figure is the WORST shard's send lag p99, read from each
 * slice's own `data.levels[i].summary.send_lag_ms.p99` (the merge's per-shard figures pool all
 * levels). Ceiling = the highest level whose worst p99 ≤ 5 ms with every lower level passing too.
 *
 * Pinning: with ≥ 4 logical CPUs and `taskset` on PATH the mock is pinned to the last CPU and
 * shard K to CPU K (the 1-shard run to CPU 0). With fewer the mock shares the CPUs with the
 * shards, so 2 shards are expected near 1.0× of 1 shard; the ≥ 1.7× goal is for ≥ 4 cores with
 * the server pinned apart.
 *
 * Env: IK_BIN (default dist/ik, built once with scripts/build.sh when missing).
 * @module
 */
import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { exited, killAll, killOne, type Mock, startMock, track } from "../load/procs.ts";
import { cpuName } from "../_host_cpu.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");
const IK = resolve(ROOT, process.env.IK_BIN ?? "dist/ik");

/** The rate grid (req/s), one level each. */
const RATES = [100, 200, 400, 800, 1200, 1600, 2400, 3200, 4800, 6400, 8000];
const DURATION_S = 2;
const LEVEL_GAP_S = 1;
/** How far ahead of "now" the shared --start-at lies (the shards' start-up fits in it). */
const START_AHEAD_MS = 4000;
/** The send lag p99 bound of the ceiling, ms. */
const LAG_BOUND_MS = 5;
const MAX_TOKENS = 4;
/** Each client is killed after this much more than its timetable. */
const CLIENT_SLACK_S = 90;

const f = (v: number | null | undefined, d = 2) => (v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(d));
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const log = (s: string) => process.stderr.write(`bench:shards: ${s}\n`);


function hasTaskset(): boolean {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// deno-lint-ignore no-explicit-any
type Json = any;

// ------------------------------------------------------------------------------ processes
// The children's lifecycle (kill on exit and on signals, the mock) is benchmarks/load/procs.ts's.

/** `cmd args` prefixed with `taskset -c CPU` when `cpu` is given. */
function pinned(cpu: number | null, cmd: string, args: string[]): [string, string[]] {
  return cpu === null ? [cmd, args] : ["taskset", ["-c", String(cpu), cmd, ...args]];
}

interface Run {
  rc: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  wallS: number;
}

/** Runs a command to its end (stdout/stderr to files in `dir`), killed after `limitS`. */
async function runTo(dir: string, name: string, cmd: string, args: string[], env: Record<string, string>, limitS: number): Promise<Run> {
  const outPath = join(dir, `${name}.stdout`), errPath = join(dir, `${name}.stderr`);
  const out = openSync(outPath, "w"), err = openSync(errPath, "w");
  const t0 = performance.now();
  const c = spawn(cmd, args, { stdio: ["ignore", out, err], env: { ...process.env, ...env } });
  closeSync(out);
  closeSync(err);
  track(c);
  let timedOut = false;
  const kill = setTimeout(() => {
    timedOut = true;
    killOne(c);
  }, limitS * 1000);
  const rc = await exited(c);
  clearTimeout(kill);
  return { rc, timedOut, stdout: readFileSync(outPath, "utf8"), stderr: readFileSync(errPath, "utf8"), wallS: (performance.now() - t0) / 1000 };
}

// ------------------------------------------------------------------------------ one sharded run
interface LevelRow {
  name: string;
  rate: number | null;
  sent: number;
  p99: number | null;
}

interface ShardOut {
  shard: string;
  cpu: number | null;
  run: Run;
  levels: LevelRow[];
  error: string | null;
}

interface ConfigOut {
  shards: number;
  startAt: number;
  outs: ShardOut[];
  /** Merged record: per level name → { sent, p99 (over all shards), achieved }. */
  merged: Map<string, { sent: number; p99: number | null; achieved: number | null; failed: number | null; ttftP99: number | null }>;
  /** data.merge.slices of the merged record. */
  slices: Json[];
  limitations: string[];
  mergeError: string | null;
}

const tail = (s: string) => s.trim().split(/[\r\n]+/).slice(-3).join(" | ").slice(0, 400);

async function runConfig(tmp: string, key: string, mock: Mock, shards: number, cpuOf: (k: number) => number | null): Promise<ConfigOut> {
  const runsDir = join(tmp, `runs-${shards}`);
  mkdirSync(runsDir, { recursive: true });
  const env = { IK_RUNS_DIR: runsDir, IK_KEY_FILE: key };
  const startAt = Math.round(Date.now() + START_AHEAD_MS);
  const limitS = START_AHEAD_MS / 1000 + RATES.length * (DURATION_S + LEVEL_GAP_S) + CLIENT_SLACK_S;
  log(`${shards} shard(s): --start-at ${startAt} (${START_AHEAD_MS} ms ahead), ${RATES.length} levels × (${DURATION_S} s + ${LEVEL_GAP_S} s gap)`);
  const outs = await Promise.all(Array.from({ length: shards }, async (_, k): Promise<ShardOut> => {
    const shard = `${k}/${shards}`;
    const cpu = cpuOf(k);
    const [cmd, args] = pinned(cpu, IK, [
      "bench", "serve", "--base-url", mock.baseUrl, "--model", "mock-model", "--mode", "load",
      "--rates", RATES.join(","), "--duration-s", String(DURATION_S), "--level-gap-s", String(LEVEL_GAP_S), "--sweep-all",
      "--warmup", "0", "--max-tokens", String(MAX_TOKENS), "--gpu-name", "X", "--gpu-count", "1",
      "--shard", shard, "--start-at", String(startAt), "--json",
    ]);
    const run = await runTo(tmp, `client-${shards}-${k}`, cmd, args, env, limitS);
    const o: ShardOut = { shard, cpu, run, levels: [], error: null };
    if (run.rc !== 0) {
      o.error = `${run.timedOut ? "timed out" : `exit ${run.rc}`}: ${tail(run.stderr)}`;
      return o;
    }
    try {
      const rec = JSON.parse(run.stdout);
      for (const l of rec.data.levels as Json[]) {
        o.levels.push({ name: l.name, rate: l.target_rate_rps ?? null, sent: l.sent, p99: l.summary?.send_lag_ms?.p99 ?? null });
      }
    } catch (e) {
      o.error = `could not read the slice record: ${(e as Error).message}`;
    }
    return o;
  }));
  const cfg: ConfigOut = { shards, startAt, outs, merged: new Map(), slices: [], limitations: [], mergeError: null };
  if (outs.some((o) => o.error)) {
    cfg.mergeError = "not merged: a shard failed";
    return cfg;
  }
  const m = await runTo(tmp, `merge-${shards}`, IK, ["merge", "--json", runsDir], env, 120);
  if (m.rc !== 0) {
    cfg.mergeError = `ik merge ${m.timedOut ? "timed out" : `exit ${m.rc}`}: ${tail(m.stderr)}`;
    return cfg;
  }
  try {
    const cap = JSON.parse(m.stdout);
    const measured = JSON.parse(readFileSync(join(runsDir, cap.data.measurement, "evidence.json"), "utf8"));
    for (const l of measured.data.levels as Json[]) {
      cfg.merged.set(l.name, {
        sent: l.sent,
        p99: l.summary?.send_lag_ms?.p99 ?? null,
        achieved: l.summary?.achieved_rps ?? null,
        failed: l.summary?.n_failed ?? null,
        ttftP99: l.summary?.ttft_ms?.p99 ?? null,
      });
    }
    cfg.slices = measured.data.merge?.slices ?? [];
    cfg.limitations = measured.limitations ?? [];
  } catch (e) {
    cfg.mergeError = `could not read the merged record: ${(e as Error).message}`;
  }
  return cfg;
}

/** Worst shard's send lag p99 at each level (null where a shard lacks it). */
function worstPerLevel(cfg: ConfigOut): Map<string, { p99: number | null; shard: string | null; sent: number }> {
  const out = new Map<string, { p99: number | null; shard: string | null; sent: number }>();
  for (const r of RATES) {
    const name = `r${r}`;
    let worst: number | null = null, who: string | null = null, sent = 0, missing = cfg.outs.length === 0;
    for (const o of cfg.outs) {
      const l = o.levels.find((x) => x.name === name);
      if (!l || l.p99 === null) {
        missing = true;
        continue;
      }
      sent += l.sent;
      if (worst === null || l.p99 > worst) {
        worst = l.p99;
        who = o.shard;
      }
    }
    out.set(name, { p99: missing ? null : worst, shard: missing ? null : who, sent });
  }
  return out;
}

/** Highest rate whose worst p99 ≤ the bound with every lower rate passing; `all` when none failed. */
function ceilingOf(w: Map<string, { p99: number | null }>): { rate: number | null; all: boolean; firstFail: number | null } {
  let rate: number | null = null;
  for (const r of RATES) {
    const p = w.get(`r${r}`)?.p99 ?? null;
    if (p === null || p > LAG_BOUND_MS) return { rate, all: false, firstFail: r };
    rate = r;
  }
  return { rate, all: true, firstFail: null };
}

// ------------------------------------------------------------------------------ main
const md: string[] = [];
const out = (s = "") => {
  md.push(s);
  process.stdout.write(s + "\n");
};

let tmp = "";

async function main(): Promise<void> {
  if (!existsSync(IK)) {
    log(`${IK} missing: building it once (bash scripts/build.sh)`);
    execFileSync("bash", ["scripts/build.sh"], { cwd: ROOT, stdio: "inherit" });
  }
  const help = execFileSync(IK, ["bench", "serve", "--help"], { encoding: "utf8" });
  const missingFlags = ["--shard", "--start-at", "--level-gap-s"].filter((fl) => !help.includes(fl));
  if (missingFlags.length) {
    const msg = `${IK} does not accept ${missingFlags.join(", ")} (ik bench serve --help): rebuild it with bash scripts/build.sh; no sharded run possible`;
    out(`# Sharded load: client ceiling\n\n${msg}`);
    process.exitCode = 1;
    return;
  }
  tmp = mkdtempSync(join(tmpdir(), "ik-bench-shards-"));
  const key = join(tmp, "key");
  writeFileSync(key, Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("") + "\n", { mode: 0o600 });
  const tStart = performance.now();
  const load0 = loadavg();
  const model = cpuName();
  const ncpu = cpus().length;
  const pin = ncpu >= 4 && hasTaskset();
  const mockCpu = pin ? ncpu - 1 : null;
  const shardCpu = (k: number) => (pin ? k : null);
  const date = new Date().toISOString();

  const mock = await startMock(IK, tmp, "mock", ["--ttft-ms", "0", "--tpot-ms", "0"], { cpu: mockCpu, requestLog: false });
  let one: ConfigOut, two: ConfigOut;
  try {
    one = await runConfig(tmp, key, mock, 1, shardCpu);
    two = await runConfig(tmp, key, mock, 2, shardCpu);
  } finally {
    await mock.stop();
  }

  const w1 = worstPerLevel(one), w2 = worstPerLevel(two);
  const c1 = ceilingOf(w1), c2 = ceilingOf(w2);

  out("# Sharded load (`--shard K/S --start-at`): client ceiling, 1 shard vs 2");
  out();
  out(`Host CPU: ${model}. Measured ${date.slice(0, 16).replace("T", " ")} UTC. Load average at start: ${load0}. Client and mock: \`${process.env.IK_BIN ?? "dist/ik"}\` (Bun, compiled), each in its own process, everything on 127.0.0.1.`);
  out();
  out(`Pinning: ${pin ? `mock on CPU ${mockCpu} (\`taskset -c ${mockCpu}\`), shard K on CPU K` : ncpu >= 4 ? "none (taskset not found)" : `none (${ncpu} CPUs < 4): the mock shares the CPUs with the shards`}.`);
  out();
  out(`Method: zero-delay \`ik mock --ttft-ms 0 --tpot-ms 0\`; \`ik bench serve --mode load --rates ${RATES.join(",")} --duration-s ${DURATION_S} --level-gap-s ${LEVEL_GAP_S} --sweep-all --warmup 0 --max-tokens ${MAX_TOKENS}\`, run once as \`--shard 0/1\` and once as two processes \`--shard 0/2\`, \`--shard 1/2\` with the same \`--start-at\` ${START_AHEAD_MS / 1000} s ahead; each run merged with \`ik merge\`. Per level: the worst shard's send lag p99 from each slice's own \`data.levels[i].summary.send_lag_ms.p99\`. Ceiling = the highest level whose worst p99 ≤ ${LAG_BOUND_MS} ms with every lower level passing too.`);
  out();
  out("This is a report only (nothing is asserted). With fewer than 4 cores the mock server shares the CPUs with the shards, so 2 shards are expected to reach only ~1.0× the 1-shard ceiling; the ≥ 1.7× goal is for ≥ 4 cores with the server pinned apart (this script pins with `taskset` there).");
  out();
  out(`| level | 1-shard sent | 1-shard p99 (ms) | 2-shard sent (0/2 + 1/2) | 2-shard worst p99 (ms) | worst shard | 2-shard merged p99 (ms) | achieved 1 / 2 shards (req/s) | failed 1 / 2 | TTFT p99 1 / 2 (ms) |`);
  out("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|");
  for (const r of RATES) {
    const name = `r${r}`;
    const a = w1.get(name), b = w2.get(name);
    const per = two.outs.map((o) => o.levels.find((x) => x.name === name)?.sent ?? "?").join(" + ");
    const mark = (p: number | null | undefined) => (p === null || p === undefined ? "n/a" : `${f(p, 3)}${p > LAG_BOUND_MS ? " ✗" : ""}`);
    out(`| ${name} | ${a?.sent ?? "n/a"} | ${mark(a?.p99)} | ${b?.sent ?? "n/a"} (${per}) | ${mark(b?.p99)} | ${b?.shard ?? ""} | ${f(two.merged.get(name)?.p99, 3)} | ${f(one.merged.get(name)?.achieved, 0)} / ${f(two.merged.get(name)?.achieved, 0)} | ${one.merged.get(name)?.failed ?? "n/a"} / ${two.merged.get(name)?.failed ?? "n/a"} | ${f(one.merged.get(name)?.ttftP99, 1)} / ${f(two.merged.get(name)?.ttftP99, 1)} |`);
  }
  out();
  out(`"sent" per shard from each slice; "2-shard merged p99" = the merged record's level send lag p99 over both shards; "achieved", "failed" and "TTFT p99" from the merged records' levels (achieved = completions over the level's window). A TTFT p99 far above a few ms marks the mock (sharing the cores${pin ? " unless pinned apart" : ""}) falling behind, not the pacer; "✗" = send lag p99 > ${LAG_BOUND_MS} ms. The grid is coarse: a ceiling lies between its level and the next.`);
  out();
  const cText = (c: { rate: number | null; all: boolean; firstFail: number | null }) =>
    c.rate === null ? `none (p99 > ${LAG_BOUND_MS} ms already at ${c.firstFail} req/s)` : c.all ? `≥ ${c.rate} req/s (no level of the grid failed)` : `${c.rate} req/s (first failing level ${c.firstFail} req/s)`;
  const ratio = c1.rate && c2.rate ? c2.rate / c1.rate : null;
  out("```");
  out(`ceiling 1 shard: ${c1.rate ?? "none"} req/s`);
  out(`ceiling 2 shards: ${c2.rate ?? "none"} req/s`);
  const bound = c1.all && c2.all ? " (both ceilings at the grid's top: the ratio is not bounded)" : c2.all ? " (a lower bound: 2 shards reached the grid's top)" : c1.all ? " (an upper bound: 1 shard reached the grid's top)" : "";
  out(`ratio: ${ratio === null ? "n/a" : `${f(ratio, 2)}×`}${bound}`);
  out(`host CPU: ${model}${pin ? "; mock pinned apart" : ""}`);
  out("```");
  out();
  out(`- 1 shard: ${cText(c1)}; 2 shards: ${cText(c2)}.`);
  out(`- Expected here: ${ncpu < 4 ? `~1.0× (${ncpu} cores shared by the mock and the shards)` : pin ? "≥ 1.7× (the goal: ≥ 4 cores, server pinned apart)" : "unpinned: no expectation"}; measured ${ratio === null ? "n/a" : `${f(ratio, 2)}×`}.`);

  // per shard, from the merge
  out();
  out("Per shard, from the merged records' `data.merge.slices` (over all levels): send lag against the shard's own clock, lag against the shared wall timetable, and the shard's median offset from the others.");
  out();
  out("| run | shard | CPU | sent | send lag p50 / p99 (ms) | timetable lag p50 / p99 (ms) | median offset (ms) | client wall (s) |");
  out("|---|---|---:|---:|---:|---:|---:|---:|");
  const problems: string[] = [];
  for (const cfg of [one, two]) {
    for (const o of cfg.outs) {
      const s = cfg.slices.find((x: Json) => x.shard === o.shard);
      out(`| ${cfg.shards} shard(s) | ${o.shard} | ${o.cpu ?? "any"} | ${s?.sent ?? "n/a"} | ${f(s?.send_lag_ms?.p50, 3)} / ${f(s?.send_lag_ms?.p99, 3)} | ${f(s?.timetable_lag_ms?.p50, 3)} / ${f(s?.timetable_lag_ms?.p99, 3)} | ${f(s?.median_offset_ms, 3)} | ${f(o.run.wallS, 1)} |`);
      if (o.error) problems.push(`${cfg.shards} shard(s), shard ${o.shard}: ${o.error}`);
    }
    if (cfg.mergeError) problems.push(`${cfg.shards} shard(s): ${cfg.mergeError}`);
    // the shards together must send what one process sends (same seeded schedule)
    if (cfg === two && !one.mergeError && !two.mergeError) {
      for (const r of RATES) {
        const a = one.merged.get(`r${r}`)?.sent, b = two.merged.get(`r${r}`)?.sent;
        if (a !== b) problems.push(`r${r}: 1 shard sent ${a}, 2 shards merged ${b} (the same schedule should give the same count)`);
      }
    }
  }
  out();
  const lim = [...new Set([...one.limitations, ...two.limitations])].filter((l) => /shard|clock|merged from/.test(l));
  if (lim.length) {
    out("Merge limitations (as `ik merge` states them):");
    out();
    for (const l of lim) out(`- ${l}`);
    out();
  }
  if (problems.length) {
    out("Problems:");
    out();
    for (const p of problems) out(`- ${p}`);
    out();
  }
  out(`Load average at start ${load0}, at end ${loadavg()}${ncpu <= 2 ? " (other work on the host shares these cores)" : ""}. Total bench time ${f((performance.now() - tStart) / 1000, 0)} s.`);
  writeFileSync(join(HERE, "RESULTS.md"), md.join("\n") + "\n");
  log(`wrote benchmarks/shards/RESULTS.md in ${f((performance.now() - tStart) / 1000, 0)} s`);
}

try {
  await main();
} finally {
  killAll();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}
