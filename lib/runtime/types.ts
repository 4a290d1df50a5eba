/** The one interface behind which Deno, Bun and Node differ. Everything else in ik is web standards. */
import type { PreciseSleep } from "./_precise_sleep.ts";
export type { PreciseSleep };

/** What a server knows of a request beyond the Request itself. */
export interface ServedRequestInfo {
  /**
   * When the server had read the whole request body, on the `performance.now()` clock, where the
   * serve implementation read it before calling the handler (Node, bodies up to 1 MiB); else null
   * and the handler's own read is the time.
   */
  bodyReadMs: number | null;
}

/**
 * What {@link Runtime.releaseExePages} did: the mappings released and what of them was resident
 * before (kB), and how many the kernel refused; or why nothing was done.
 */
export type ExePagesResult = { mappings: number; rssKb: number; failed: number } | { reason: string };

/** A fetch-style request handler (a Hono app's `fetch`). */
export type Handler = (req: Request, info?: ServedRequestInfo) => Response | Promise<Response>;

/** Options for {@link Runtime.serve}. */
export interface ServeOptions {
  /** Interface to bind; ik binds 127.0.0.1 unless told otherwise (both runtimes default to 0.0.0.0). */
  hostname?: string;
  /** Port; 0 picks a free one, reported back in {@link Served.port}. */
  port?: number;
  /** Aborting it closes the server, open streams included. */
  signal?: AbortSignal;
}

/** A listening server. */
export interface Served {
  /** The bound port (the real one when 0 was asked for). */
  port: number;
  /** The bound interface. */
  hostname: string;
  /** Stops listening and force-closes open connections (SSE streams included). */
  close(): Promise<void>;
}

/** Options for {@link Runtime.spawn}. */
export interface SpawnOptions {
  /** Extra environment variables, merged over the current environment. */
  env?: Record<string, string>;
  /** Give the child exactly `env` (an engine's clean environment) instead of merging it over ik's. */
  replaceEnv?: boolean;
  /** Working directory. */
  cwd?: string;
  /** Append the child's stdout and stderr to this file; without it they are discarded. */
  logFile?: string;
  /** Pipe the child's stdout back as a stream instead (stderr still goes to logFile). */
  pipeStdout?: boolean;
  /**
   * Passes every line the child writes to logFile through this first, as it is written (a line is
   * held until its newline or the child's exit): the caller's redaction, so a secret an engine
   * prints never reaches the file, even while the child runs.
   */
  logTransform?: (line: string) => string;
  /** Start a new process group (default true). False keeps the child in ik's group, untracked. */
  newGroup?: boolean;
}

/** How a child process ended. */
export interface ExitStatus {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  /** The signal that killed it, or null. */
  signal: string | null;
}

/** A child started in its own process group (session leader). */
export interface ProcessGroup {
  /** The child's pid, which is also its process-group id. */
  pid: number;
  /** Resolves once the child has exited. */
  exited: Promise<ExitStatus>;
  /** The child's stdout when `pipeStdout` was set. */
  stdout: ReadableStream<Uint8Array> | null;
  /** Signals the whole group (children and grandchildren); a group already gone is not an error. */
  killGroup(signal?: string): void;
}

/**
 * The kernel's clock-sync state (adjtimex, read-only), or why it could not be read. Errors are the
 * daemon's own bounds in ms; `unsynced` is the kernel's STA_UNSYNC flag (or TIME_ERROR).
 */
export type ClockSync =
  | { source: "adjtimex"; state: number; state_name: string; unsynced: boolean; est_error_ms: number; max_error_ms: number; status_flags: number }
  | { source: "unavailable"; reason: string };

/** Whether ik is a child subreaper (Linux PR_SET_CHILD_SUBREAPER), and how or why not. */
export interface SubreaperState {
  /** True once the flag is set on ik. */
  active: boolean;
  /** How it was set, or why it could not be ("this build has no FFI ..."). */
  detail: string;
}

/** How a re-executed worker ended (see {@link Runtime.reexecWorker}). */
export interface WorkerExit {
  /** The worker's pid (-1 when it could not be started). */
  pid: number;
  /** Its exit code, 128 + n when a signal killed it, 127 when it could not start. */
  code: number;
  /** The signal that killed it, or null. */
  signal: string | null;
}

/** This process's memory now, in bytes (process.memoryUsage()'s parts). */
export interface MemoryUsage {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** Process CPU time consumed so far, in microseconds. */
export interface CpuUsage {
  userUs: number;
  systemUs: number;
}

/** File operations (paths are plain strings; text is UTF-8). */
export interface Files {
  /** Reads a whole file as text. */
  readText(path: string): Promise<string>;
  /** Reads a whole file as bytes. */
  readBytes(path: string): Promise<Uint8Array>;
  /** Writes (replaces) a file; `mode` applies when the file is created (e.g. 0o600 for keys). */
  writeText(path: string, text: string, opts?: { mode?: number }): Promise<void>;
  /** Appends text, creating the file if needed (journals). */
  appendText(path: string, text: string): Promise<void>;
  /** Creates a directory and its parents. */
  mkdir(path: string): Promise<void>;
  /** Atomically renames within a filesystem. */
  rename(from: string, to: string): Promise<void>;
  /** Changes permission bits. */
  chmod(path: string, mode: number): Promise<void>;
  /** Whether the path exists. */
  exists(path: string): Promise<boolean>;
  /** Removes a file or directory tree; missing is fine. */
  remove(path: string): Promise<void>;
}

/** The fetch signature of the measured requests (a URL string and an init; resolves at the head). */
export type FetchFn = (input: string, init?: RequestInit) => Promise<Response>;

/** Everything ik needs from the host runtime. */
export interface Runtime {
  /** "bun", "deno" or "node". */
  readonly name: "bun" | "deno" | "node";
  /** The runtime's own version string. */
  readonly version: string;
  /** Serves `handler` over HTTP/1.1 on hostname:port. */
  serve(handler: Handler, opts?: ServeOptions): Promise<Served>;
  /** Starts argv[0] with argv[1..] in a new process group that ik kills on exit and on SIGINT/SIGTERM/SIGHUP. */
  spawn(argv: string[], opts?: SpawnOptions): ProcessGroup;
  /** Command-line arguments after the program (and script) name. */
  args(): string[];
  /** Path of the running executable (the compiled binary, or the runtime for scripts). */
  execPath(): string;
  /** The program's own argv prefix that re-runs this ik (binary alone, or runtime + script). */
  selfArgv(): string[];
  /**
   * The runtime's own flags this process runs with (the compiled binary's built-in `--smol`, or a
   * script's runtime flags); empty when there are none or the runtime does not say.
   */
  runtimeFlags(): string[];
  /** Reads an environment variable. */
  env(name: string): string | undefined;
  /** A copy of the whole environment. */
  envAll(): Record<string, string>;
  /** Current working directory. */
  cwd(): string;
  /** Process id of ik itself. */
  pid(): number;
  /** Whether a process with this pid exists (signal 0; a process owned by another user counts as alive). */
  pidAlive(pid: number): boolean;
  /** Live (non-zombie) pids in process group `pgid`; empty once the whole group is gone. */
  groupMembers(pgid: number): number[];
  /** The kernel's clock-sync state (Linux adjtimex through the runtime's FFI); never throws. */
  clockSync(): Promise<ClockSync>;
  /** Sets the file-creation mask (e.g. 0o077 for private output); false where not supported. */
  setUmask(mask: number): boolean;
  /** Exits now with `code`, after killing every spawned group. */
  exit(code: number): never;
  /** Registers `fn` for a signal; returns a function that removes it. */
  onSignal(signal: "SIGINT" | "SIGTERM" | "SIGHUP", fn: () => void): () => void;
  /** Whether fd 0, 1 or 2 is a terminal. */
  isTerminal(stream: "stdin" | "stdout" | "stderr"): boolean;
  /** Writes text to stdout. */
  writeStdout(text: string): void;
  /** Writes text to stderr. */
  writeStderr(text: string): void;
  /** Reads all of stdin as text. */
  readStdin(): Promise<string>;
  /**
   * Runs this program again as a worker with `extra` added to its environment (stdio inherited,
   * signals passed on) and resolves with its pid, exit code and the signal that ended it: for
   * settings a runtime reads only at start, where {@link execSelfWithEnv} cannot be used.
   */
  reexecWorker(extra: Record<string, string>): Promise<WorkerExit>;
  /**
   * Replaces this process with a fresh start of this same program, `extra` added to its
   * environment (execve(2) through the runtime's FFI: same pid, stdio, process group and parent;
   * no second process waits). Call it before anything is written or started: it returns only when
   * the process could not be replaced, saying why (then {@link reexecWorker} is the fallback).
   */
  execSelfWithEnv(extra: Record<string, string>): string;
  /**
   * Makes ik a child subreaper (prctl PR_SET_CHILD_SUBREAPER through the runtime's FFI), so an
   * engine's descendant that detaches (`setsid`) and outlives its parent reparents to ik, not
   * init. Idempotent; never throws; says why not where it cannot (no FFI, not Linux).
   */
  childSubreaper(): SubreaperState;
  /** The pids of the live children ik spawned itself (engines, watchdogs, a re-exec worker). */
  ownChildPids(): ReadonlySet<number>;
  /** Sends `signal` to one process; false when it is gone or not ik's to signal. */
  signalPid(pid: number, signal: "SIGTERM" | "SIGKILL"): boolean;
  /** Reaps an exited child ik did not spawn (an orphan it adopted as subreaper); false where it cannot. */
  reapAdopted(pid: number): boolean;
  /** CPU time used by this process so far. */
  cpuUsage(): CpuUsage;
  /** This process's memory now (resident set, JavaScript heap in use, external, ArrayBuffers). */
  memoryUsage(): MemoryUsage;
  /**
   * Drops the compiled code of everything run so far and collects the whole heap once, then gives
   * free memory back to the system (Bun: `Bun.shrink()`, JavaScriptCore's shrink-footprint), so
   * what a load run set itself up with (the CLI's parsers, prompt building, the server check) is
   * not carried as live heap through every level; code that runs again is compiled again. Resolves
   * once it has run (~5 ms). Where the runtime has no such call (Deno, Node) it does nothing.
   */
  shrinkHeap(): Promise<void>;
  /**
   * Drops this process's mappings of its own executable's read-only pages (`madvise(MADV_DONTNEED)`,
   * lib/runtime/_exe_pages.ts): what start-up ran stops counting in the RSS, pages stay in the page
   * cache and what runs again maps back on a minor fault. Linux with an FFI only; elsewhere the
   * result says why nothing was done.
   */
  releaseExePages(): ExePagesResult;
  /**
   * A sleep that keeps fractions of a millisecond and holds no CPU (lib/runtime/_precise_sleep.ts),
   * for the open-loop pacer; null where the runtime has none better than its timers (Deno, Node).
   */
  preciseSleep: PreciseSleep | null;
  /**
   * The HTTP client for measured streaming requests: the global fetch on Bun and Deno; on Node a
   * `node:http` one (its fetch adds ~1 ms to every TTFT: lib/runtime/_node_fetch.ts).
   */
  readonly fetch: FetchFn;
  /** File operations. */
  readonly files: Files;
}
