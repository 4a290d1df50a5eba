/**
 * What the launcher says when its re-executed worker (see BUN_FETCH_LIMIT in cli.ts) dies by a
 * signal it did not pass on: SIGKILL from the OOM killer or `kill -9`, a crash. The worker can say
 * nothing then, so the launcher does, in one line: what happened, where the rows journaled so far
 * are, and that `ik report` reads them as incomplete. The exit code stays 128 + n (137 for
 * SIGKILL), as a shell reports a killed process.
 *
 * Where the journal is, found from outside: the launcher lists the store's `.staging/` before the
 * worker starts; after its death, a staging run that is new (not listed before, its id's UTC
 * second not before the start) is this run's (a `bench serve` killed mid-run). A run another ik
 * started in the same store in the same seconds would look the same: then all are named, newest
 * first. `bench rounds` writes its cells into `<run dir>/rounds/` (`--run-dir`, else the
 * manifest's folder), which the launcher computes from the parsed flags as the command does.
 *
 * The launcher is a child subreaper too (as the worker is for its engines): what the worker
 * adopted or started (an engine's setsid'd descendant, an engine whose group the orphan watchdog
 * has yet to end) reparents to the launcher when the worker is killed, and the launcher ends it
 * ({@link stopLeftovers}) instead of leaving it to init.
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { descendantsOf, processTable } from "../engines_host/proc_table.ts";
import type { Runtime } from "../runtime/mod.ts";
import { WATCHDOG_NAME } from "../runtime/_watchdog.ts";
import { dirname, join, resolve } from "node:path";
import { parseEvidenceId, storeRoot } from "../evidence/mod.ts";
import { formatErrorLine } from "./errors.ts";

/** What the launcher knows before it starts the worker. */
export interface WorkerWatch {
  /** The command words, for the message (`bench serve`). */
  where: string;
  /** `$IK_RUNS_DIR`, else ./runs. */
  root: string;
  /** Staging entries that existed before the worker started. */
  stagedBefore: Set<string>;
  /** When the worker was started (ms since the epoch). */
  startedMs: number;
  /** A `bench rounds` run's rounds dir, else null. */
  roundsDir: string | null;
}

function listStaging(root: string): string[] {
  try {
    return readdirSync(join(root, ".staging")).filter((n) => parseEvidenceId(n) !== null);
  } catch {
    return [];
  }
}

/** `20260102T030405Z` → ms since the epoch. */
function idUtcMs(utc: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(utc);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
}

/**
 * Notes what the launcher must know to find the worker's journal later.
 * @param args the parsed command (`cmd`, and for bench rounds `runDir`, `manifest`, `manifestArg`)
 */
export function watchWorker(argv: readonly string[], args: Record<string, unknown>, env: (n: string) => string | undefined, cwd: string): WorkerWatch {
  const root = storeRoot(env, cwd);
  let roundsDir: string | null = null;
  if (args.cmd === "bench-rounds") {
    const manifest = (args.manifest ?? args.manifestArg) as string | undefined;
    const runDir = typeof args.runDir === "string" ? resolve(cwd, args.runDir) : manifest ? resolve(cwd, dirname(manifest)) : null;
    if (runDir) roundsDir = join(runDir, "rounds");
  }
  const where = argv.filter((a) => !a.startsWith("-")).slice(0, 2).join(" ") || "ik";
  return { where, root, stagedBefore: new Set(listStaging(root)), startedMs: Date.now(), roundsDir };
}

/** The journals this worker left: new staging runs (newest first), then the rounds dir when it was written. */
export function workerJournals(w: WorkerWatch): string[] {
  const since = Math.floor(w.startedMs / 1000) * 1000;
  const staged = listStaging(w.root)
    .filter((n) => !w.stagedBefore.has(n) && idUtcMs(parseEvidenceId(n)!.utc) >= since)
    .sort((a, b) => (parseEvidenceId(a)!.utc < parseEvidenceId(b)!.utc ? 1 : -1))
    .map((n) => join(w.root, ".staging", n));
  const out = [...staged];
  if (w.roundsDir) {
    try {
      if (statSync(join(w.roundsDir, "plan.json")).mtimeMs >= since) out.unshift(w.roundsDir);
    } catch { /* never written */ }
  }
  return out;
}

/**
 * Whether the worker died by a signal the launcher did not pass on (SIGINT, SIGTERM, SIGHUP are
 * interrupts the worker handled and reported itself).
 */
export function workerWasKilled(signal: string | null): boolean {
  return signal !== null && signal !== "SIGINT" && signal !== "SIGTERM" && signal !== "SIGHUP";
}

/** The one line for a worker killed by `signal`, or null when {@link workerWasKilled} is false. */
export function killedWorkerLine(w: WorkerWatch, pid: number, signal: string | null): string | null {
  if (!workerWasKilled(signal)) return null;
  const why = signal === "SIGKILL" ? " (out of memory? kill -9?)" : "";
  const what = `the worker (pid ${pid}) was killed by ${signal}${why}`;
  const found = workerJournals(w);
  if (found.length === 0) {
    return formatErrorLine(w.where, `${what}; no journal of this run was found (${join(w.root, ".staging")}${w.roundsDir ? `, ${w.roundsDir}` : ""}): it had measured nothing yet`, "run it again; if it was the OOM killer, see dmesg and give it less (fewer requests or levels)");
  }
  const more = found.length > 1 ? ` (also ${found.slice(1).join(", ")})` : "";
  return formatErrorLine(w.where, `${what}; rows journaled so far are in ${found[0]}${more}`, `'ik report ${found[0]}' reads it as incomplete`);
}

/** Whether `pid` is an orphan watchdog (`sh -c <script> ik-watchdog ...`): it ends its own group. */
function isWatchdog(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[3] === WATCHDOG_NAME;
  } catch {
    return false;
  }
}

/**
 * Ends what a killed worker left to the launcher (the launcher's children other than the worker,
 * and their descendants; watchdogs are left to do their own job): SIGTERM, up to `graceMs`, then
 * SIGKILL, and reaps them. Best effort; without /proc it finds nothing.
 * @returns the pids it signalled
 */
export async function stopLeftovers(rt: Runtime, graceMs = 1500): Promise<number[]> {
  const me = rt.pid();
  const table = processTable();
  const roots = table.filter((p) => p.ppid === me && p.state !== "Z" && !isWatchdog(p.pid)).map((p) => p.pid);
  if (roots.length === 0) return [];
  const all = [...roots, ...descendantsOf(roots, table)];
  for (const pid of all) rt.signalPid(pid, "SIGTERM");
  const live = () => {
    for (const p of processTable()) if (p.ppid === me && p.state === "Z") rt.reapAdopted(p.pid);
    const t = new Map(processTable().map((p) => [p.pid, p.state]));
    return all.filter((pid) => t.has(pid) && t.get(pid) !== "Z");
  };
  const end = performance.now() + graceMs;
  while (live().length && performance.now() < end) await new Promise((r) => setTimeout(r, 50));
  for (const pid of live()) rt.signalPid(pid, "SIGKILL");
  await new Promise((r) => setTimeout(r, 100));
  live();
  return all;
}
