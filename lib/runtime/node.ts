/** Node's serve (for the Node single-executable build on 64 KB-page aarch64 hosts, where Bun cannot run). */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { makeRuntime, scriptArgv } from "./_common.ts";
import { process } from "./_process.ts";
import type { Handler, Runtime, ServeOptions, Served } from "./types.ts";

function toRequest(req: IncomingMessage, base: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", base), {
    method,
    headers,
    signal,
    body: hasBody ? Readable.toWeb(req) as unknown as ReadableStream<Uint8Array> : undefined,
    // @ts-ignore: Node's fetch needs duplex for streamed request bodies
    duplex: "half",
  });
}

async function writeResponse(res: ServerResponse, r: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  r.headers.forEach((v, k) => {
    if (k === "set-cookie") return;
    headers[k] = v;
  });
  const cookies = r.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(r.status, headers);
  res.flushHeaders(); // an SSE client sees the status before the first event
  if (!r.body) return void res.end();
  const reader = r.body.getReader();
  // The client went away (or close() dropped the connection): cancel the body, so the handler's
  // stream stops producing (a mock's timers end) and a write waiting for 'drain' does not hang.
  const onClose = () => void reader.cancel().catch(() => {});
  res.once("close", onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((ok) => {
          const go = () => {
            res.off("drain", go);
            res.off("close", go);
            ok();
          };
          res.once("drain", go);
          res.once("close", go);
        });
      }
    }
    if (!res.destroyed) res.end();
  } catch {
    res.destroy();
  } finally {
    res.off("close", onClose);
  }
}

async function serve(handler: Handler, opts: ServeOptions): Promise<Served> {
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = createServer((req, res) => {
    const ac = new AbortController();
    // Abort the request's signal only when the client leaves early, as Bun and Deno do.
    res.on("close", () => {
      if (!res.writableFinished) ac.abort();
    });
    Promise.resolve()
      .then(() => handler(toRequest(req, `http://${req.headers.host ?? hostname}`, ac.signal)))
      .then((r) => writeResponse(res, r))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end("internal error");
        else res.destroy();
      });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(opts.port ?? 0, hostname, () => {
      server.off("error", fail);
      ok();
    });
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  let closed: Promise<void> | null = null;
  const close = () =>
    closed ??= new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections(); // open SSE streams included; close() alone waits for them
    });
  opts.signal?.addEventListener("abort", () => void close(), { once: true });
  return { port, hostname, close };
}

/**
 * True inside a Node single-executable application. There process.argv[1] is the program name as
 * typed (`./ik`, `ik`), not the executable's path, so it cannot be told from a script path by looking.
 */
export function isNodeSea(): boolean {
  try {
    const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    const sea = getBuiltin?.("node:sea") as { isSea?: () => boolean } | undefined;
    return sea?.isSea?.() === true;
  } catch {
    return false;
  }
}

/** Creates the Node runtime. */
export function nodeRuntime(): Runtime {
  const sea = isNodeSea();
  const self = (): string[] => {
    if (sea) return [process.execPath];
    const [exec, script] = scriptArgv(process.execPath, process.argv);
    return script === undefined ? [exec] : [exec, ...process.execArgv, script];
  };
  // A single executable's argv is [execPath, name as typed, ...args]; a script's [node, script, ...args].
  return makeRuntime("node", process.versions.node, serve, self, () => process.argv.slice(2));
}
