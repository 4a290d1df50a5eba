/**
 * The parts of the runtime that node: built-ins cover identically on Bun, Deno and Node:
 * env, args, exit, signals, terminals, CPU time, and process-group spawning.
 */
import { spawn as nodeSpawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { constants as osConstants } from "node:os";
import process from "node:process";
import { Readable } from "node:stream";
import { isatty } from "node:tty";
import type { CpuUsage, ExitStatus, MemoryUsage, ProcessGroup, SpawnOptions, WorkerExit } from "./types.ts";
import { startWatchdog } from "./_watchdog.ts";

/**
 * How long `exited` waits after the exit event for the child's piped output to drain into its log.
 * Pipes normally close with the child within milliseconds; only a descendant that inherited them
 * holds them longer, and then the exit is not held back for it.
 */
const EXIT_DRAIN_MAX_MS = 100;

const groups = new Set<number>();
/** Every live child ik started itself (engines, watchdogs, the re-exec worker): not "adopted". */
const ownChildren = new Set<number>();
let hooksInstalled = false;

/** The pids of the live children ik spawned itself (an orphan ik adopted as subreaper is not one). */
export function ownChildPids(): ReadonlySet<number> {
  return ownChildren;
}

/** Kills every live spawned group with `signal` (used at exit and on signals). */
export function killAllGroups(signal = "SIGTERM"): void {
  for (const pid of groups) {
    try {
      process.kill(-pid, signal as NodeJS.Signals);
    } catch { /* already gone */ }
  }
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", () => killAllGroups("SIGKILL"));
}

/**
 * Starts a child as leader of a new session and process group, tracked for cleanup: ik kills the
 * group on exit and on signals, and an orphan watchdog (_watchdog.ts) kills it within ~1.2 s when
 * ik dies without cleaning up (SIGKILL, OOM). A `newGroup: false` child gets a watchdog too, for
 * the child alone.
 */
export function spawnGroup(argv: string[], opts: SpawnOptions = {}): ProcessGroup {
  if (argv.length === 0) throw new Error("spawn: empty argv");
  installHooks();
  let fd: number | null = null;
  if (opts.logFile) fd = openSync(opts.logFile, "a");
  // With a transform the child writes into pipes and ik appends each transformed line itself.
  const piped = fd !== null && opts.logTransform !== undefined;
  const logTarget = piped ? "pipe" : (fd ?? "ignore");
  const out = opts.pipeStdout ? "pipe" : logTarget;
  const child = nodeSpawn(argv[0], argv.slice(1), {
    cwd: opts.cwd,
    env: (opts.replaceEnv ? { ...(opts.env ?? {}) } : { ...process.env, ...(opts.env ?? {}) }) as Record<string, string>,
    detached: opts.newGroup !== false,
    stdio: ["ignore", out, logTarget],
  });
  const streamsDone: Promise<void>[] = [];
  // The log's fd is closed once nothing writes to it any more: at the exit when nothing is piped,
  // else when every piped stream has ended, which may be long after the exit (a descendant that
  // inherited the pipe keeps writing until the stop ends it). Its number is never written to after
  // the close, so a reused number cannot send an engine's lines into another file.
  const log = fd === null ? null : { fd, open: true };
  const closeLog = () => {
    if (log === null || !log.open) return;
    log.open = false;
    try {
      closeSync(log.fd);
    } catch { /* closed */ }
  };
  if (piped) {
    const sources = [child.stderr, opts.pipeStdout ? null : child.stdout].filter((x): x is NonNullable<typeof x> => x !== null);
    for (const src of sources) streamsDone.push(transformLines(src, log!, opts.logTransform as (l: string) => string));
    void Promise.all(streamsDone).then(closeLog);
  }
  const pid = child.pid ?? -1;
  const ownGroup = opts.newGroup !== false;
  if (pid > 0 && ownGroup) groups.add(pid);
  if (pid > 0) ownChildren.add(pid);
  // After the child, since it watches the child's pid; ik dying between the two spawns is the one
  // window left open (microseconds).
  if (pid > 0) startWatchdog(process.pid, pid, ownGroup, ownChildren);
  const exited = new Promise<ExitStatus>((resolve) => {
    let settled = false;
    const done = (code: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      groups.delete(pid);
      ownChildren.delete(pid);
      if (!streamsDone.length) closeLog();
      resolve({ code, signal });
    };
    // The status is the one the exit event gives. The lines the child wrote before it exited are
    // in the log when `exited` resolves: the pipes are drained first, for at most
    // EXIT_DRAIN_MAX_MS (a descendant that inherited them may hold them open long after the
    // child is gone; its later lines still reach the log, see closeLog).
    child.once("exit", (code, signal) => {
      if (!streamsDone.length) return done(code, signal);
      const t = setTimeout(() => done(code, signal), EXIT_DRAIN_MAX_MS);
      void Promise.all(streamsDone).then(() => (clearTimeout(t), done(code, signal)));
    });
    child.once("error", () => done(127, null));
  });
  const stdout = opts.pipeStdout && child.stdout
    ? Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>
    : null;
  return {
    pid,
    exited,
    stdout,
    killGroup(signal = "SIGTERM") {
      if (pid <= 0) return;
      try {
        process.kill(ownGroup ? -pid : pid, signal as NodeJS.Signals);
      } catch { /* the group is gone */ }
    },
  };
}

/**
 * Appends what a child writes on `src` to the log's fd line by line, each through `transform`; a
 * partial last line is written when the stream ends. Resolves when the stream has ended or failed.
 */
function transformLines(src: NodeJS.ReadableStream, log: { fd: number; open: boolean }, transform: (line: string) => string): Promise<void> {
  return new Promise((resolve) => {
    let held = "";
    const write = (text: string) => {
      if (!log.open) return; // never to a closed fd: its number may belong to another file now
      try {
        writeSync(log.fd, text);
      } catch { /* a full disk loses the log line, never the run */ }
    };
    src.setEncoding("utf8");
    src.on("data", (chunk: string) => {
      const text = held + chunk;
      const cut = text.lastIndexOf("\n");
      if (cut < 0) {
        held = text;
        return;
      }
      held = text.slice(cut + 1);
      write(text.slice(0, cut + 1).split("\n").slice(0, -1).map((l) => transform(l) + "\n").join(""));
    });
    const end = () => {
      if (held) write(transform(held));
      held = "";
      resolve();
    };
    src.once("end", end);
    src.once("error", end);
  });
}

/**
 * Runs this same program again with `extra` added to its environment, stdio inherited and
 * SIGINT/SIGTERM/SIGHUP passed on, and resolves with how it ended. For settings a runtime reads
 * only at process start.
 */
export function reexecWorker(argv: string[], extra: Record<string, string>): Promise<WorkerExit> {
  return new Promise((resolve) => {
    // IK_REEXEC_PARENT lets the child end itself if this process dies without passing a signal on.
    const env = { ...process.env, ...extra, IK_REEXEC_PARENT: String(process.pid) };
    const child = nodeSpawn(argv[0], argv.slice(1), { stdio: "inherit", env });
    const pid = child.pid ?? -1;
    if (pid > 0) ownChildren.add(pid);
    const forward = (sig: NodeJS.Signals) => () => {
      try {
        child.kill(sig);
      } catch { /* gone */ }
    };
    const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((sig) => [sig, forward(sig)] as const);
    for (const [sig, fn] of handlers) process.on(sig, fn);
    let settled = false;
    const done = (code: number, signal: string | null) => {
      if (settled) return;
      settled = true;
      ownChildren.delete(pid);
      for (const [sig, fn] of handlers) process.off(sig, fn);
      resolve({ pid, code, signal });
    };
    child.once("exit", (code, signal) => done(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1), signal ?? null));
    child.once("error", () => done(127, null));
  });
}

/** Exits after killing spawned groups. */
export function exitNow(code: number): never {
  killAllGroups("SIGTERM");
  process.exit(code);
}

/** Registers a signal handler; returns its remover. */
export function onSignal(signal: "SIGINT" | "SIGTERM" | "SIGHUP", fn: () => void): () => void {
  installHooks();
  process.on(signal, fn);
  return () => {
    process.off(signal, fn);
  };
}

/** Whether the given standard stream is a terminal. */
export function isTerminal(stream: "stdin" | "stdout" | "stderr"): boolean {
  const fd = stream === "stdin" ? 0 : stream === "stdout" ? 1 : 2;
  try {
    return isatty(fd);
  } catch {
    return false;
  }
}

/** Whether a process with this pid exists (kill with signal 0; EPERM means it exists). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as { code?: string }).code === "EPERM";
  }
}

/**
 * The live (non-zombie) members of process group `pgid`. On Linux it reads /proc/<pid>/stat
 * (a zombie that nobody reaped still "exists" for kill(2) but runs nothing); elsewhere it
 * falls back to kill(-pgid, 0), which can only say "some member exists" (reported as [pgid]).
 */
export function groupMembers(pgid: number): number[] {
  if (!Number.isInteger(pgid) || pgid <= 1) return [];
  let names: string[] | null = null;
  try {
    names = readdirSync("/proc");
  } catch { /* no /proc */ }
  if (names && names.includes("self")) {
    const out: number[] = [];
    for (const n of names) {
      if (!/^\d+$/.test(n)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${n}/stat`, "latin1");
      } catch {
        continue; // exited while we looked
      }
      // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses: split after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (rest[0] !== "Z" && rest[0] !== "X" && Number(rest[2]) === pgid) out.push(Number(n));
    }
    return out;
  }
  try {
    process.kill(-pgid, 0);
    return [pgid];
  } catch (e) {
    return (e as { code?: string }).code === "EPERM" ? [pgid] : [];
  }
}

/** Sets this process's file-creation mask; false where the runtime cannot. */
export function setUmask(mask: number): boolean {
  try {
    process.umask(mask);
    return true;
  } catch {
    return false;
  }
}

/** CPU time used by this process so far. */
export function cpuUsage(): CpuUsage {
  const u = process.cpuUsage();
  return { userUs: u.user, systemUs: u.system };
}

/** This process's memory now, in bytes. */
export function memoryUsage(): MemoryUsage {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers ?? 0 };
}

/** Reads all of stdin. */
export async function readStdin(): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of process.stdin) chunks.push(typeof c === "string" ? new TextEncoder().encode(c) : c);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** The node:process object, for the runtime implementations only. */
export { process };
