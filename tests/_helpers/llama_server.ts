/**
 * The real llama.cpp server of ../shared/engines/llama.cpp for end-to-end tests: why it cannot run
 * here (Bun only, binary missing, libgomp1 missing), and starting it on a free loopback port.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runtime } from "../../lib/runtime/mod.ts";
import { closedPort } from "../client/_raw_server.ts";
import { ROOT } from "./ik.ts";

/** The engine folder. */
export const LLAMA_DIR: string = join(ROOT, "..", "shared", "engines", "llama.cpp");
const SERVER = join(LLAMA_DIR, "llama-server");

/** A reason to skip real-engine tests here, or false when the server can run. */
export function llamaSkip(): string | false {
  if (runtime.name !== "bun") return "real-engine tests run under Bun only";
  if (!existsSync(SERVER)) return `${SERVER} is missing`;
  const v = spawnSync(SERVER, ["--version"], { timeout: 10_000 });
  return v.status === 0 ? false : `llama-server does not run here (${v.error?.message ?? `exit ${v.status}`}; Debian libgomp1?)`;
}

/** A running llama-server. */
export interface LlamaServer {
  url: string;
  child: ChildProcess;
  stop(): void;
}

/**
 * Starts llama-server with the tiny model (or `model`) on 127.0.0.1 and waits (≤ 20 s) for /health.
 * @param slots parallel slots (-np); the context is 2048 per slot
 */
export async function startLlama(opts: { slots?: number; model?: string; alias?: string } = {}): Promise<LlamaServer> {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  const slots = opts.slots ?? 1;
  const child = spawn(SERVER, [
    "-m", opts.model ?? join(LLAMA_DIR, "tiny.gguf"), "--alias", opts.alias ?? "tiny-llama", "--host", "127.0.0.1",
    "--port", String(port), "-c", String(2048 * slots), "-np", String(slots), "-t", "1", "--metrics", "--no-webui",
  ], { stdio: "ignore" });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error("llama-server did not become ready in 20 s");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, child, stop: () => void (child.exitCode === null && child.kill("SIGTERM")) };
}
