/** Deno's serve: `onListen` (else it prints to stdout) and an AbortSignal (shutdown() waits on open streams). */
import { liveExecPath, makeRuntime } from "./_common.ts";
import { process } from "./_process.ts";
import type { ClockSync, Handler, Runtime, ServeOptions, Served } from "./types.ts";
import { decodeTimex, LIBC_CANDIDATES, TIMEX_SIZE } from "./_clock.ts";
import { releaseExePages } from "./_exe_pages.ts";
import { firstLibc, type LibcCalls, PR_GET_CHILD_SUBREAPER, PR_SET_CHILD_SUBREAPER, WNOHANG } from "./_libc.ts";

async function serve(handler: Handler, opts: ServeOptions): Promise<Served> {
  const ac = new AbortController();
  opts.signal?.addEventListener("abort", () => ac.abort(), { once: true });
  const bound = Promise.withResolvers<{ port: number; hostname: string }>();
  const s = Deno.serve(
    {
      hostname: opts.hostname ?? "127.0.0.1",
      port: opts.port ?? 0,
      signal: ac.signal,
      onListen: (a) => bound.resolve({ port: a.port, hostname: a.hostname }),
      onError: () => new Response("internal error", { status: 500 }),
    },
    (req: Request) => handler(req),
  );
  const addr = await bound.promise;
  let closed: Promise<void> | null = null;
  const close = () =>
    closed ??= (async () => {
      ac.abort();
      await s.finished;
    })();
  return { port: addr.port, hostname: addr.hostname, close };
}

/** adjtimex(2) with modes = 0 through Deno.dlopen (needs --allow-ffi; without it the reason says so). */
function clockSync(): Promise<ClockSync> {
  if (Deno.build.os !== "linux") return Promise.resolve({ source: "unavailable", reason: `adjtimex is Linux only (this is ${Deno.build.os})` });
  let last = "";
  for (const lib of LIBC_CANDIDATES) {
    let h;
    try {
      h = Deno.dlopen(lib, { adjtimex: { parameters: ["buffer"], result: "i32" } } as const);
    } catch (e) {
      last = String((e as Error)?.message ?? e);
      if (/permission|allow-ffi|requires ffi/i.test(last)) break;
      continue;
    }
    try {
      const buf = new Uint8Array(TIMEX_SIZE);
      return Promise.resolve(decodeTimex(h.symbols.adjtimex(buf) as number, buf));
    } finally {
      h.close();
    }
  }
  return Promise.resolve({ source: "unavailable", reason: `adjtimex could not be called (${last.slice(0, 120)})` });
}

/** prctl and waitpid through Deno.dlopen (needs --allow-ffi; without it the reason says so). */
function denoLibc(): LibcCalls | string {
  return firstLibc((lib) => {
    const h = Deno.dlopen(lib, {
      prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
      waitpid: { parameters: ["i32", "pointer", "i32"], result: "i32" },
    } as const);
    const s = h.symbols;
    return {
      setChildSubreaper: () => s.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) as number,
      getChildSubreaper: () => {
        const buf = new Int32Array(1);
        const ptr = Deno.UnsafePointer.value(Deno.UnsafePointer.of(buf));
        return s.prctl(PR_GET_CHILD_SUBREAPER, BigInt(ptr), 0n, 0n, 0n) === 0 ? buf[0] : null;
      },
      reapNoHang: (pid) => s.waitpid(pid, null, WNOHANG) as number,
    };
  });
}

/** Creates the Deno runtime. */
export function denoRuntime(): Runtime {
  const compiled = Deno.build && (Deno as unknown as { mainModule?: string }).mainModule?.includes("/deno-compile-");
  const self = (): string[] => compiled ? [liveExecPath(Deno.execPath())] : [liveExecPath(Deno.execPath()), "run", "-A", process.argv[1]];
  const rt = makeRuntime("deno", Deno.version.deno, serve, self, () => [...Deno.args], clockSync, undefined, denoLibc);
  rt.releaseExePages = () =>
    releaseExePages(Deno.build.os, () => {
      const h = firstLibc((lib) => Deno.dlopen(lib, { madvise: { parameters: ["usize", "usize", "i32"], result: "i32" } } as const));
      return typeof h === "string" ? h : { call: (addr, length, advice) => h.symbols.madvise(addr, length, advice) as number, close: () => h.close() };
    });
  return rt;
}
