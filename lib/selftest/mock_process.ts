/**
 * Starts `ik mock` as a separate process (never on the client's event loop), so that what the
 * client measures is not disturbed by the server's own work, and finds its port on stderr. Every
 * mock gets `--parent-pid <ik>` (it exits when ik is gone) and `--request-log`, whose lines (the
 * mock's own clock) are read back from the captured log.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IkError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import type { ExitStatus, ProcessGroup, Runtime } from "../runtime/mod.ts";
import { broken, type Check } from "./checks.ts";
import { type MockRequestLog, parseRequestLog } from "./request_log.ts";

/** A running mock server process. */
export interface MockProcess {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** The port it listens on. */
  port: number;
  /** Stops the process group, waits for it and removes its log. */
  stop(): Promise<void>;
  /**
   * The request-log lines written so far, waiting (up to `timeoutMs`) until there are at least
   * `atLeast` (the mock writes a line when it ends a request, just after its last bytes).
   */
  requestLog(atLeast?: number, timeoutMs?: number): Promise<MockRequestLog[]>;
}

const LISTENING = /ik mock: listening on http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Runs `ik mock --port 0 <args>` and waits until it listens.
 * @param ikArgv how to run ik (default: this same ik, binary or runtime + script)
 */
export async function startMockProcess(
  rt: Runtime,
  args: string[],
  ikArgv: string[] = rt.selfArgv(),
  timeoutMs = 15_000,
): Promise<MockProcess> {
  const dir = await mkdtemp(join(tmpdir(), "ik-selftest-"));
  const logFile = join(dir, "mock.log");
  const group: ProcessGroup = rt.spawn([
    ...ikArgv,
    "mock",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--parent-pid",
    String(rt.pid()),
    "--request-log",
    ...args,
  ], { logFile });
  let exited: ExitStatus | null = null;
  group.exited.then((st) => (exited = st));
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const text = await readFile(logFile, "utf8").catch(() => "");
    const m = text.match(LISTENING);
    if (m) {
      const port = Number(m[1]);
      return {
        baseUrl: `http://127.0.0.1:${port}`,
        port,
        async stop() {
          group.killGroup("SIGTERM");
          const t = setTimeout(() => group.killGroup("SIGKILL"), 3000);
          await group.exited;
          clearTimeout(t);
          await rm(dir, { recursive: true, force: true });
        },
        async requestLog(atLeast = 0, waitMs = 3000) {
          const until = performance.now() + waitMs;
          for (;;) {
            const lines = parseRequestLog(await readFile(logFile, "utf8").catch(() => ""));
            if (lines.length >= atLeast || performance.now() > until) return lines;
            await new Promise((r) => setTimeout(r, 5));
          }
        },
      };
    }
    if (exited !== null || performance.now() > deadline) {
      const how: string = exited === null
        ? `no listening line in ${timeoutMs / 1000} s`
        : `it exited (${(exited as ExitStatus).signal ?? `code ${(exited as ExitStatus).code}`})`;
      group.killGroup("SIGKILL");
      await rm(dir, { recursive: true, force: true });
      const tail = text.trim().split("\n").slice(-2).join(" | ");
      throw new IkError(
        ExitCode.INTERNAL,
        "selftest",
        `the mock (ik mock ${args.join(" ")}) did not start: ${how}; ${tail || "no output"}`,
        "please report it",
      );
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Starts a mock, runs `fn` against it and always stops it; a mock that does not start, or a step
 * that throws, becomes one FAIL row naming why (a selftest step never throws).
 */
export async function withMock(
  deps: { rt: Runtime; ikArgv: string[] },
  group: string,
  args: string[],
  fn: (mock: MockProcess) => Promise<Check[]>,
): Promise<Check[]> {
  let mock: MockProcess;
  try {
    mock = await startMockProcess(deps.rt, args, deps.ikArgv);
  } catch (e) {
    return [broken(group, "mock started", (e as Error).message)];
  }
  try {
    return await fn(mock);
  } catch (e) {
    return [broken(group, "requests", (e as Error).message)];
  } finally {
    await mock.stop();
  }
}
