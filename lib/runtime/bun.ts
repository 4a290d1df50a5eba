/** Bun's serve. `idleTimeout: 0`, or Bun cuts an SSE stream that is silent for 10 s (a long prefill). */
import { makeRuntime, scriptArgv } from "./_common.ts";
import { process } from "./_process.ts";
import type { ClockSync, ExePagesResult, Handler, Runtime, ServeOptions, Served } from "./types.ts";
import { decodeTimex, LIBC_CANDIDATES, TIMEX_SIZE } from "./_clock.ts";
import { firstLibc, type LibcCalls, PR_GET_CHILD_SUBREAPER, PR_SET_CHILD_SUBREAPER, WNOHANG } from "./_libc.ts";
import { h1Fetch } from "../h1/fetch.ts";
import { bunConnect } from "./_bun_socket.ts";
import { measuredFetchChoice } from "./_fetch_choice.ts";
import { releaseExePages } from "./_exe_pages.ts";
import { atomicsWaitAsync, waitAsyncSleep } from "./_precise_sleep.ts";

interface BunServer {
  port: number;
  hostname: string;
  stop(closeActive?: boolean): Promise<void> | void;
}
interface BunGlobal {
  version: string;
  serve(o: { hostname: string; port: number; idleTimeout: number; fetch: Handler }): BunServer;
  shrink?: () => void;
}

/** Bun.serve behind the shim's serve: a failure to listen (a port in use) is a rejection, as from Deno's. */
function serve(handler: Handler, opts: ServeOptions): Promise<Served> {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  let s: BunServer;
  try {
    s = bun.serve({ hostname: opts.hostname ?? "127.0.0.1", port: opts.port ?? 0, idleTimeout: 0, fetch: (req) => handler(req) });
  } catch (e) {
    return Promise.reject(e);
  }
  let closed: Promise<void> | null = null;
  const close = () => closed ??= Promise.resolve(s.stop(true)).then(() => {});
  opts.signal?.addEventListener("abort", () => void close(), { once: true });
  return Promise.resolve({ port: s.port, hostname: s.hostname, close });
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

/** prctl and waitpid through bun:ffi, loaded synchronously (import.meta.require; Bun only). */
function bunLibc(): LibcCalls | string {
  const req = (import.meta as unknown as { require?: (id: string) => unknown }).require;
  if (!req) return "bun:ffi cannot be loaded here (no import.meta.require)";
  const ffi = req("bun:ffi") as BunFfi;
  return firstLibc((lib) => {
    const h = ffi.dlopen(lib, {
      prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
      waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" },
    });
    const s = h.symbols;
    return {
      setChildSubreaper: () => s.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n),
      getChildSubreaper: () => {
        const buf = new Int32Array(1);
        return s.prctl(PR_GET_CHILD_SUBREAPER, BigInt(ffi.ptr(new Uint8Array(buf.buffer)) as number), 0n, 0n, 0n) === 0 ? buf[0] : null;
      },
      reapNoHang: (pid) => s.waitpid(pid, null, WNOHANG),
    };
  });
}

/** A C string (UTF-8, NUL-terminated). */
const cString = (t: string): Uint8Array => new TextEncoder().encode(t + "\0");

/**
 * execve(2) through bun:ffi: this process becomes a fresh start of `path` with `argv` and `env`
 * (same pid, same stdio, no second process). Returns only when it could not, saying why.
 */
function bunExecve(path: string, argv: readonly string[], env: Record<string, string>): string {
  const req = (import.meta as unknown as { require?: (id: string) => unknown }).require;
  if (!req) return "bun:ffi cannot be loaded here (no import.meta.require)";
  const ffi = req("bun:ffi") as BunFfi;
  // The strings must stay alive (referenced) until execve has copied them into the new image.
  const held: Uint8Array[] = [];
  const table = (items: string[]): BigUint64Array => {
    const t = new BigUint64Array(items.length + 1);
    items.forEach((x, i) => {
      const c = cString(x);
      held.push(c);
      t[i] = BigInt(ffi.ptr(c) as number);
    });
    return t; // NULL-terminated: the last slot stays 0
  };
  const file = cString(path);
  const argvT = table([...argv]);
  const envT = table(Object.entries(env).filter(([k, v]) => !k.includes("=") && typeof v === "string").map(([k, v]) => `${k}=${v}`));
  const h = firstLibc((lib) => ffi.dlopen(lib, { execve: { args: ["ptr", "ptr", "ptr"], returns: "i32" } }));
  if (typeof h === "string") return h;
  const rc = h.symbols.execve(ffi.ptr(file), ffi.ptr(new Uint8Array(argvT.buffer)), ffi.ptr(new Uint8Array(envT.buffer)));
  h.close();
  return `execve(${path}) returned ${rc} (${held.length} strings)`;
}

/** Creates the Bun runtime. */
export function bunRuntime(): Runtime {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  const self = () => scriptArgv(process.execPath, process.argv);
  const globalFetch = (input: string, init?: RequestInit) => fetch(input, init);
  const measured = measuredFetchChoice(process.env) === "h1" ? h1Fetch(bunConnect, globalFetch) : globalFetch;
  const rt = makeRuntime("bun", bun.version, serve, self, () => process.argv.slice(2), clockSync, measured, bunLibc, bunExecve);
  rt.shrinkHeap = () => shrinkAndSettle(bun);
  rt.releaseExePages = bunReleaseExePages;
  const waitAsync = atomicsWaitAsync();
  rt.preciseSleep = waitAsync ? waitAsyncSleep(waitAsync) : null;
  return rt;
}

/** {@link releaseExePages} with madvise(2) through bun:ffi (addresses as 64-bit integers). */
function bunReleaseExePages(): ExePagesResult {
  return releaseExePages(process.platform, () => {
    const req = (import.meta as unknown as { require?: (id: string) => unknown }).require;
    if (!req) return "bun:ffi cannot be loaded here (no import.meta.require)";
    const ffi = req("bun:ffi") as BunFfi;
    const h = firstLibc((lib) => ffi.dlopen(lib, { madvise: { args: ["u64", "u64", "i32"], returns: "i32" } }));
    return typeof h === "string" ? h : { call: (addr, length, advice) => h.symbols.madvise(addr, length, advice), close: () => h.close() };
  });
}

/**
 * Runs `Bun.shrink()` (where this Bun has it) and resolves on a later timer turn: JavaScriptCore
 * defers the work until the current entry into JavaScript has returned, so the promise waits for that.
 */
function shrinkAndSettle(bun: BunGlobal): Promise<void> {
  if (typeof bun.shrink !== "function") return Promise.resolve();
  bun.shrink();
  return new Promise((resolve) => setTimeout(resolve, 0));
}
