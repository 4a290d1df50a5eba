/** Bun's serve. `idleTimeout: 0`, or Bun cuts an SSE stream that is silent for 10 s (a long prefill). */
import { makeRuntime, scriptArgv } from "./_common.ts";
import { process } from "./_process.ts";
import type { ClockSync, Handler, Runtime, ServeOptions, Served } from "./types.ts";
import { decodeTimex, LIBC_CANDIDATES, TIMEX_SIZE } from "./_clock.ts";

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
  const s = bun.serve({ hostname: opts.hostname ?? "127.0.0.1", port: opts.port ?? 0, idleTimeout: 0, fetch: (req) => handler(req) });
  let closed: Promise<void> | null = null;
  const close = () => closed ??= Promise.resolve(s.stop(true)).then(() => {});
  opts.signal?.addEventListener("abort", () => void close(), { once: true });
  return { port: s.port, hostname: s.hostname, close };
}

interface BunFfi {
  dlopen(path: string, defs: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, (...a: unknown[]) => number>; close(): void };
  ptr(buf: Uint8Array): unknown;
}

/** adjtimex(2) with modes = 0 through bun:ffi (a variable specifier keeps other runtimes from resolving it). */
async function clockSync(): Promise<ClockSync> {
  if (process.platform !== "linux") return { source: "unavailable", reason: `adjtimex is Linux only (this is ${process.platform})` };
  const spec = "bun:ffi";
  const ffi = await import(spec) as BunFfi;
  let last = "";
  for (const lib of LIBC_CANDIDATES) {
    let h;
    try {
      h = ffi.dlopen(lib, { adjtimex: { args: ["ptr"], returns: "i32" } });
    } catch (e) {
      last = String((e as Error)?.message ?? e);
      continue;
    }
    try {
      const buf = new Uint8Array(TIMEX_SIZE);
      return decodeTimex(h.symbols.adjtimex(ffi.ptr(buf)), buf);
    } finally {
      h.close();
    }
  }
  return { source: "unavailable", reason: `no libc with adjtimex could be opened (${last.slice(0, 120)})` };
}

/** Creates the Bun runtime. */
export function bunRuntime(): Runtime {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  const self = () => scriptArgv(process.execPath, process.argv);
  return makeRuntime("bun", bun.version, serve, self, () => process.argv.slice(2), clockSync);
}
