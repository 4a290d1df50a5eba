/**
 * Starts `ik mock` as a separate process (never on the client's event loop), so that what the
 * client measures is not disturbed by the server's own work, and finds its port on stderr.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IkError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import type { ProcessGroup, Runtime } from "../runtime/mod.ts";

/** A running mock server process. */
export interface MockProcess {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** The port it listens on. */
  port: number;
  /** Stops the process group, waits for it and removes its log. */
  stop(): Promise<void>;
}

const LISTENING = /ik mock: listening on http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Runs `ik mock --port 0 <args>` and waits until it listens.
 * @param ikArgv how to run ik (default: this same ik, binary or runtime + script)
 */
export async function startMockProcess(rt: Runtime, args: string[], ikArgv: string[] = rt.selfArgv(), timeoutMs = 15_000): Promise<MockProcess> {
  const dir = await mkdtemp(join(tmpdir(), "ik-selftest-"));
  const logFile = join(dir, "mock.log");
  const group: ProcessGroup = rt.spawn([...ikArgv, "mock", "--host", "127.0.0.1", "--port", "0", ...args], { logFile });
  let exited = false;
  group.exited.then(() => (exited = true));
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
      };
    }
    if (exited || performance.now() > deadline) {
      group.killGroup("SIGKILL");
      await rm(dir, { recursive: true, force: true });
      const tail = text.trim().split("\n").slice(-2).join(" | ");
      throw new IkError(ExitCode.INTERNAL, "selftest", `the mock (ik mock ${args.join(" ")}) did not start: ${tail || "no output"}`, "please report it");
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
