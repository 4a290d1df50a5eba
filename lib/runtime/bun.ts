/** Bun's serve. `idleTimeout: 0`, or Bun cuts an SSE stream that is silent for 10 s (a long prefill). */
import { makeRuntime, scriptArgv } from "./_common.ts";
import { process } from "./_process.ts";
import type { Handler, Runtime, ServeOptions, Served } from "./types.ts";

interface BunServer {
  port: number;
  hostname: string;
  stop(closeActive?: boolean): Promise<void> | void;
}
interface BunGlobal {
  version: string;
  serve(o: { hostname: string; port: number; idleTimeout: number; fetch: Handler }): BunServer;
}

async function serve(handler: Handler, opts: ServeOptions): Promise<Served> {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  const s = bun.serve({ hostname: opts.hostname ?? "127.0.0.1", port: opts.port ?? 0, idleTimeout: 0, fetch: handler });
  let closed: Promise<void> | null = null;
  const close = () => closed ??= Promise.resolve(s.stop(true)).then(() => {});
  opts.signal?.addEventListener("abort", () => void close(), { once: true });
  return { port: s.port, hostname: s.hostname, close };
}

/** Creates the Bun runtime. */
export function bunRuntime(): Runtime {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  const self = () => scriptArgv(process.execPath, process.argv);
  return makeRuntime("bun", bun.version, serve, self, () => process.argv.slice(2));
}
