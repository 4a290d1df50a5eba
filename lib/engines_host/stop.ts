/**
 * The stop of an engine (server.ts launches it): its whole process group, TERM then KILL, with
 * proof that no member is left; and the descendants that left the group (an engine that forks a
 * child with `setsid` and exits): with ik a child subreaper they are ik's adopted children started
 * after the engine, without one the descendants a /proc poll saw while it ran. Those are ended
 * the same way and reaped, and named in the result.
 * @module
 */
import type { ExitStatus, Runtime, SubreaperState } from "../runtime/mod.ts";
import { descendantsOf, describePid, processTable } from "./proc_table.ts";
import type { LaunchedEngine } from "./launched_engine.ts";

/** `pid:start`: a process's identity (a recycled pid has another start time). */
export const pidKey = (pid: number, start: number): string => `${pid}:${start}`;

/** ik's children it did not spawn itself: orphans adopted as subreaper (zombies included). */
export function adoptedChildren(rt: Runtime): { pid: number; start: number; state: string }[] {
  const me = rt.pid(), own = rt.ownChildPids();
  return processTable().filter((p) => p.ppid === me && !own.has(p.pid)).map((p) => ({ pid: p.pid, start: p.start, state: p.state }));
}

/** How the stop went. */
export interface StopResult {
  /** The last signal sent to the group. */
  signal: "SIGTERM" | "SIGKILL";
  /** Seconds from TERM to the end. */
  seconds: number;
  /** True when no live member of the group, nor any descendant that left it, is left. */
  group_gone: boolean;
  /** Pids still alive at the end (empty when gone): group members, then escaped descendants. */
  survivors: number[];
  /** The leader's exit status, when it exited. */
  exit: ExitStatus | null;
  /** Whether ik was a subreaper for this engine, and how or why not. */
  subreaper: SubreaperState;
  /** Descendants outside the group (detached with setsid, orphaned) that the stop ended: `pid N (cmd)`. */
  orphans: string[];
}

/** The engine's descendants outside its group that are still alive: adopted orphans, or tracked ones. */
function escapedDescendants(rt: Runtime, engine: LaunchedEngine): number[] {
  const table = processTable();
  const live = new Map(table.filter((p) => p.state !== "Z" && p.state !== "X").map((p) => [p.pid, p]));
  const roots = new Set<number>();
  // ik's adopted children are this engine's only where ik was a subreaper for it.
  for (const p of engine.subreaper.active ? adoptedChildren(rt) : []) {
    if (engine.adoptedBefore.has(pidKey(p.pid, p.start)) || (engine.startTicks >= 0 && p.start < engine.startTicks)) continue;
    if (live.has(p.pid)) roots.add(p.pid);
  }
  for (const [pid, start] of engine.tracked) if (live.get(pid)?.start === start) roots.add(pid);
  roots.delete(engine.group.pid);
  return [...roots, ...descendantsOf(roots, table).filter((pid) => live.has(pid))].filter((pid) => pid !== rt.pid());
}

/** Reaps the adopted orphans that have exited (zombies of ik's), so none is left behind. */
function reapAdopted(rt: Runtime): void {
  for (const p of adoptedChildren(rt)) if (p.state === "Z") rt.reapAdopted(p.pid);
}

function signalPids(rt: Runtime, pids: readonly number[], signal: "SIGTERM" | "SIGKILL"): void {
  for (const pid of pids) rt.signalPid(pid, signal);
}

/** Once ik is interrupted, the longest a stop waits after SIGTERM before SIGKILL (ms). */
export const INTERRUPTED_TERM_WAIT_MS = 3000;

/** Options of {@link stopGroup}. */
export interface StopOptions {
  /**
   * ik's interrupt: once it is aborted (before or during the stop), the TERM wait is cut to
   * {@link INTERRUPTED_TERM_WAIT_MS} and the check after SIGKILL to 2 s, so the stop ends inside
   * the CLI's grace and the interrupted run still writes its cell, plan and summary.
   */
  signal?: AbortSignal;
}

/**
 * Stops the whole process group: SIGTERM, then SIGKILL after `timeoutMs` if any member is left,
 * then checks (up to 5 s more) that none is. Descendants that left the group (an engine that
 * forks with `setsid` and exits) get the same: with ik a subreaper they are ik's adopted children
 * started after the engine; without, the ones a /proc poll saw while the engine ran.
 * An interrupt (`opts.signal`) shortens both waits (see {@link StopOptions}).
 */
export async function stopGroup(rt: Runtime, engine: LaunchedEngine, timeoutMs: number, opts: StopOptions = {}): Promise<StopResult> {
  const t0 = performance.now();
  // When the interrupt came: one before the stop caps the TERM wait from its start.
  let abortedAt = opts.signal?.aborted ? t0 : Infinity;
  const onAbort = () => (abortedAt = Math.min(abortedAt, performance.now()));
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await stopGroupInner(rt, engine, timeoutMs, t0, () => abortedAt);
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

async function stopGroupInner(rt: Runtime, engine: LaunchedEngine, timeoutMs: number, t0: number, abortedAt: () => number): Promise<StopResult> {
  const pgid = engine.group.pid;
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const orphanNames = new Map<number, string>();
  const escaped = () => {
    const pids = escapedDescendants(rt, engine);
    for (const pid of pids) if (!orphanNames.has(pid)) orphanNames.set(pid, describePid(pid));
    return pids;
  };
  const groupGone = () => rt.groupMembers(pgid).length === 0 && (engine.exit !== null || !rt.pidAlive(pgid));
  const goneWithin = async (ms: number) => {
    const end = performance.now() + ms;
    while (true) {
      reapAdopted(rt);
      if (groupGone() && escaped().length === 0) return true;
      if (performance.now() >= end) return false;
      await sleep(50);
    }
  };
  engine.untrack();
  signalPids(rt, escaped(), "SIGTERM");
  engine.group.killGroup("SIGTERM");
  let signal: StopResult["signal"] = "SIGTERM";
  // A descendant orphaned by the TERM (its parent died) reparents to ik and is TERMed too.
  let gone = false;
  const termEnd = () => Math.min(t0 + timeoutMs, abortedAt() + INTERRUPTED_TERM_WAIT_MS);
  while (!gone && performance.now() < termEnd()) {
    gone = await goneWithin(Math.min(250, Math.max(0, termEnd() - performance.now())));
    if (!gone) signalPids(rt, escaped(), "SIGTERM");
  }
  for (let pass = 0; !gone && pass < 3; pass++) {
    if (pass === 2 && abortedAt() !== Infinity) break; // interrupted: 2 s after SIGKILL, not 5
    signal = "SIGKILL";
    engine.group.killGroup("SIGKILL");
    signalPids(rt, escaped(), "SIGKILL");
    gone = await goneWithin([1000, 1000, 3000][pass]); // 5 s in all, as before
  }
  // Let the exit event land so the status is recorded.
  await Promise.race([engine.group.exited, sleep(gone ? 1000 : 0)]);
  reapAdopted(rt);
  const survivors = gone ? [] : [...rt.groupMembers(pgid), ...escaped()];
  return {
    signal, seconds: Math.round(performance.now() - t0) / 1000, group_gone: gone, survivors, exit: engine.exit,
    subreaper: engine.subreaper, orphans: [...orphanNames.values()],
  };
}
