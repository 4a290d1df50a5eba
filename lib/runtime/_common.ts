/** Builds a {@link Runtime} from a runtime-specific serve() plus the shared node: built-in parts. */
import { statSync } from "node:fs";
import { files } from "./_files.ts";
import * as p from "./_process.ts";
import type { ClockSync, FetchFn, Handler, Runtime, ServeOptions, Served } from "./types.ts";
import { type LibcCalls, subreaperOf } from "./_libc.ts";

/** Assembles a Runtime around a serve implementation. */
export function makeRuntime(
  name: Runtime["name"],
  version: string,
  serve: (handler: Handler, opts: ServeOptions) => Promise<Served>,
  selfArgv: () => string[],
  args: () => string[],
  clockSync: () => Promise<ClockSync> = () => Promise.resolve({ source: "unavailable", reason: "this build has no FFI to call adjtimex" }),
  fetchFn: FetchFn = (input, init) => fetch(input, init),
  libc: () => LibcCalls | string = () => "this build has no FFI to call prctl",
  execve: (path: string, argv: readonly string[], env: Record<string, string>) => string = () => "this build has no FFI to call execve",
): Runtime {
  const proc = p.process;
  const reaper = subreaperOf(proc.platform, libc);
  return {
    name,
    version,
    serve: (handler, opts = {}) => serve(handler, opts),
    spawn: p.spawnGroup,
    args,
    execPath: () => proc.execPath,
    selfArgv,
    runtimeFlags: () => [...(proc.execArgv ?? [])],
    env: (k) => proc.env[k],
    envAll: () => ({ ...proc.env }) as Record<string, string>,
    cwd: () => proc.cwd(),
    pid: () => proc.pid,
    pidAlive: p.pidAlive,
    groupMembers: p.groupMembers,
    setUmask: p.setUmask,
    clockSync: () => clockSync().catch((e) => ({ source: "unavailable" as const, reason: String((e as Error)?.message ?? e).slice(0, 200) })),
    exit: p.exitNow,
    onSignal: p.onSignal,
    isTerminal: p.isTerminal,
    writeStdout: (t) => {
      proc.stdout.write(t);
    },
    writeStderr: (t) => {
      proc.stderr.write(t);
    },
    readStdin: p.readStdin,
    reexecWorker: (extra) => p.reexecWorker([...selfArgv(), ...args()], extra),
    execSelfWithEnv: (extra) => {
      const argv = [...selfArgv(), ...args()];
      return execve(argv[0], argv, { ...(proc.env as Record<string, string>), ...extra });
    },
    childSubreaper: reaper.state,
    ownChildPids: p.ownChildPids,
    signalPid: (pid, signal) => {
      if (!Number.isInteger(pid) || pid <= 1) return false;
      try {
        proc.kill(pid, signal);
        return true;
      } catch {
        return false;
      }
    },
    reapAdopted: (pid) => !p.ownChildPids().has(pid) && reaper.reap(pid),
    cpuUsage: p.cpuUsage,
    memoryUsage: p.memoryUsage,
    shrinkHeap: () => Promise.resolve(),
    releaseExePages: () => ({ reason: "this build has no FFI to call madvise" }),
    preciseSleep: null,
    fetch: fetchFn,
    files,
  };
}

/**
 * The argv prefix that re-runs this program: `[execPath]` for a compiled single-file executable,
 * `[execPath, script]` for runtime + script. A Node single executable cannot be recognised from argv
 * (its argv[1] is the name as typed); node.ts asks `node:sea` instead.
 */
export function scriptArgv(execPath: string, argv: string[]): string[] {
  // argv[1] is the script for `bun x.ts` / `node x.js`; Bun's compiled binaries put a virtual path there.
  const script = argv[1] ?? "";
  const compiled = script.startsWith("/$bunfs/") || script.startsWith("B:/~BUN/") || script === execPath;
  const exe = liveExecPath(execPath);
  return compiled ? [exe] : [exe, script];
}

/**
 * A path that runs this very executable. When the file was replaced or removed during the run (a
 * rebuild, an upgrade), Linux names it `PATH (deleted)`, which runs nothing, and the path, if it
 * exists, holds another program: `/proc/self/exe` is given instead (a process started through it
 * runs the same program, from the inode the kernel still holds), so every cell of a run measures
 * with one build.
 * @param stat the file identity reader (tests); default node:fs statSync
 */
export function liveExecPath(execPath: string, stat: (p: string) => { dev: number; ino: number } = statSync): string {
  if (execPath.endsWith(" (deleted)")) return "/proc/self/exe";
  try {
    const a = stat(execPath), b = stat("/proc/self/exe");
    return a.dev === b.dev && a.ino === b.ino ? execPath : "/proc/self/exe";
  } catch {
    // No /proc (not Linux), or the path is gone with no /proc to fall back on: the path as given.
    return execPath;
  }
}
