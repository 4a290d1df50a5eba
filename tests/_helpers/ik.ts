/**
 * Runs ik end to end from tests: the compiled binary (IK_BIN, default dist/ik) and cli.ts on the
 * runtime running the suite. Loopback only; every run is bounded by a timeout.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { runtime } from "../../lib/runtime/mod.ts";

/** The repository root. */
export const ROOT: string = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The compiled binary under test. */
export function ikBin(): string {
  return resolve(ROOT, runtime.env("IK_BIN") ?? "dist/ik");
}

/**
 * The `skip` of a suite that only runs the compiled binary end to end. Under Deno it would run the
 * same dist/ik (the Bun build) that `bun test` runs, ~2.5 min of CI for nothing new: such suites run
 * under Bun only. Deno's run proves the source: the in-process suites and ikVariants' source runs.
 */
export const BINARY_ONLY_SUITE: string | false = runtime.name === "deno"
  ? "runs only dist/ik end to end, as bun test does: Bun only, for CI time"
  : false;

/** argv that runs cli.ts on the runtime running the tests. */
export function ikSourceArgv(): string[] {
  const cli = join(ROOT, "cli.ts");
  return runtime.name === "deno" ? [runtime.execPath(), "run", "-A", cli] : [runtime.execPath(), cli];
}

/** The two ways to run ik, for tests that check both. */
export function ikVariants(): { name: string; argv: string[] }[] {
  const out = [{ name: "source", argv: ikSourceArgv() }];
  if (existsSync(ikBin())) out.unshift({ name: "binary", argv: [ikBin()] });
  return out;
}

/** Result of one ik run. */
export interface IkRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs argv + args to completion (killed after timeoutMs) and captures its output. */
export function runArgv(argv: string[], args: string[], opts: { env?: Record<string, string>; timeoutMs?: number; input?: string; cwd?: string } = {}): Promise<IkRun> {
  return new Promise((ok) => {
    const child = spawn(argv[0], [...argv.slice(1), ...args], {
      env: { ...runtime.envAll(), NO_COLOR: "1", ...(opts.env ?? {}) },
      cwd: opts.cwd ?? ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "", stderr = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      ok({ code, signal, stdout, stderr });
    });
    child.stdin!.end(opts.input ?? "");
  });
}

/** Runs the compiled binary. */
export function runIk(args: string[], opts: Parameters<typeof runArgv>[2] = {}): Promise<IkRun> {
  return runArgv([ikBin()], args, opts);
}

/** A long-running ik process (e.g. `ik mock`), with its stderr watched for a line. */
export interface IkProcess {
  pid: number;
  stderr(): string;
  stdout(): string;
  /** Resolves with the first regexp match on stderr, or rejects after timeoutMs. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends a signal and waits for exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: string | null }>;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** Starts argv + args in the background. */
export function startArgv(argv: string[], args: string[], opts: { env?: Record<string, string> } = {}): IkProcess {
  const child = spawn(argv[0], [...argv.slice(1), ...args], {
    env: { ...runtime.envAll(), NO_COLOR: "1", ...(opts.env ?? {}) },
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "", err = "";
  const waiters: (() => void)[] = [];
  child.stdout!.on("data", (d) => {
    out += d;
    waiters.forEach((w) => w());
  });
  child.stderr!.on("data", (d) => {
    err += d;
    waiters.forEach((w) => w());
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((ok) =>
    child.on("close", (code, signal) => {
      ok({ code, signal });
      waiters.forEach((w) => w());
    })
  );
  let done = false;
  exited.then(() => (done = true));
  return {
    pid: child.pid ?? -1,
    stderr: () => err,
    stdout: () => out,
    exited,
    waitFor(re, timeoutMs = 15_000) {
      return new Promise((ok, fail) => {
        const check = () => {
          const m = err.match(re);
          if (m) {
            clearTimeout(t);
            ok(m);
            return true;
          }
          if (done) {
            clearTimeout(t);
            fail(new Error(`process exited before ${re}; stderr: ${err.slice(-500)}`));
            return true;
          }
          return false;
        };
        const t = setTimeout(() => fail(new Error(`timed out waiting for ${re}; stderr: ${err.slice(-500)}`)), timeoutMs);
        if (!check()) waiters.push(() => void check());
      });
    },
    async stop(signal = "SIGTERM") {
      // process.kill, not child.kill: Deno's ChildProcess.kill records the signal it sent and then
      // reports it instead of the child's real exit code (a child that traps SIGTERM and exits 130).
      if (!done) process.kill(child.pid!, signal);
      const t = setTimeout(() => child.kill("SIGKILL"), 5000);
      const r = await exited;
      clearTimeout(t);
      return r;
    },
  };
}
