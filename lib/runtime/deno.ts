/** Deno's serve: `onListen` (else it prints to stdout) and an AbortSignal (shutdown() waits on open streams). */
import { makeRuntime } from "./_common.ts";
import { process } from "./_process.ts";
import type { Handler, Runtime, ServeOptions, Served } from "./types.ts";

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
    handler,
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

/** Creates the Deno runtime. */
export function denoRuntime(): Runtime {
  const compiled = Deno.build && (Deno as unknown as { mainModule?: string }).mainModule?.includes("/deno-compile-");
  const self = (): string[] => compiled ? [Deno.execPath()] : [Deno.execPath(), "run", "-A", process.argv[1]];
  return makeRuntime("deno", Deno.version.deno, serve, self, () => [...Deno.args]);
}
