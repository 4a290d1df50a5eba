/** Node's serve (for the Node single-executable build on 64 KB-page aarch64 hosts, where Bun cannot run). */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { Buffer } from "node:buffer";
import { liveExecPath, makeRuntime, scriptArgv } from "./_common.ts";
import { nodeFetch } from "./_node_fetch.ts";
import { process } from "./_process.ts";
import type { Handler, Runtime, ServedRequestInfo, ServeOptions, Served } from "./types.ts";
import { firstLibc, type LibcCalls, PR_GET_CHILD_SUBREAPER, PR_SET_CHILD_SUBREAPER, WNOHANG } from "./_libc.ts";

/**
 * A request body up to this size (by its Content-Length) is read with Node's own events before the
 * handler runs: through Readable.toWeb each read is several promise hops, and the mock stamps a
 * request's arrival when its body is read (measured: +0.3 ms per request on loopback, see
 * benchmarks/node_lag), so the time the body was read is handed to the handler too
 * ({@link ServedRequestInfo}). Larger or chunked bodies stream as before, so a handler's size cap
 * holds.
 */
const PRE_READ_MAX_BYTES = 1 << 20;

/**
 * Reads a small body with Node's events; resolves with its bytes and when the server had them all.
 * The parser reads the body only after the 'request' handler and every tick and promise job it
 * queued have run, so the handler does as little as it can before this, and the time is taken
 * when the last of the declared bytes is delivered (its 'end' comes a tick later).
 */
function readSmallBody(req: IncomingMessage, declared: number): Promise<{ bytes: Uint8Array; atMs: number }> {
  return new Promise((ok, fail) => {
    const parts: Uint8Array[] = [];
    let got = 0;
    let fullMs: number | null = null;
    req.on("data", (c: Uint8Array) => {
      parts.push(c);
      got += c.byteLength;
      if (got >= declared && fullMs === null) fullMs = performance.now();
    });
    req.once("end", () => {
      const atMs = fullMs ?? performance.now();
      ok({ bytes: parts.length === 1 ? parts[0] : new Uint8Array(Buffer.concat(parts)), atMs });
    });
    req.once("error", fail);
  });
}

function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}

/** The web Request for a Node request, and when its body was read (null: the handler reads it). */
async function toRequest(
  req: IncomingMessage,
  base: string,
  signal: AbortSignal,
): Promise<{ request: Request; info: ServedRequestInfo }> {
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (hasBody && Number.isInteger(declared) && declared <= PRE_READ_MAX_BYTES) {
    // The body first: building the web Headers and URL before it delayed its parsing by ~0.2 ms.
    let body: Uint8Array | null = null;
    let bodyReadMs = performance.now();
    try {
      ({ bytes: body, atMs: bodyReadMs } = await readSmallBody(req, declared));
    } catch {
      // the client left mid-body: the handler sees an empty (unreadable) body
    }
    const url = new URL(req.url ?? "/", base);
    const request = new Request(url, { method, headers: webHeaders(req), signal, body: body as BodyInit | null });
    return { request, info: { bodyReadMs } };
  }
  const request = new Request(new URL(req.url ?? "/", base), {
    method,
    headers: webHeaders(req),
    signal,
    body: hasBody ? Readable.toWeb(req) as unknown as ReadableStream<Uint8Array> : undefined,
    // @ts-ignore: Node's fetch needs duplex for streamed request bodies
    duplex: "half",
  });
  return { request, info: { bodyReadMs: null } };
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
  // A chunked body is framed here and written to the socket directly: res.write corks the socket
  // until the next tick, which runs only after every promise job queued behind it (the handler's
  // stream machinery, its next timer), measured ~0.2–0.4 ms between res.write and the kernel.
  // res.end() still writes the last chunk. Anything else (HTTP/1.0, a Content-Length) uses res.write.
  const sock = res.chunkedEncoding ? res.socket : null;
  const crlf = Buffer.from("\r\n");
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (value.byteLength === 0) continue; // an empty chunk would end a chunked body
      const flowing = sock !== null
        ? sock.write(Buffer.concat([Buffer.from(`${value.byteLength.toString(16)}\r\n`), value, crlf]))
        : res.write(value);
      if (!flowing) {
        const target = sock ?? res;
        await new Promise<void>((ok) => {
          const go = () => {
            target.off("drain", go);
            res.off("close", go);
            ok();
          };
          target.once("drain", go);
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

/** Node's serve on node:http (exported for its tests; ik reaches it through the runtime). */
export async function nodeServe(handler: Handler, opts: ServeOptions): Promise<Served> {
  const hostname = opts.hostname ?? "127.0.0.1";
  // Loaded here, not at start: the Bun build (which imports this module too) never serves with it.
  const { createServer } = process.getBuiltinModule("node:http") as typeof import("node:http");
  const server = createServer((req, res) => {
    const ac = new AbortController();
    // Abort the request's signal only when the client leaves early, as Bun and Deno do.
    res.on("close", () => {
      if (!res.writableFinished) ac.abort();
    });
    toRequest(req, `http://${req.headers.host ?? hostname}`, ac.signal)
      .then(({ request, info }) => handler(request, info))
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

interface NodeFfi {
  dlopen(path: string, defs: Record<string, { arguments: string[]; return: string }>): { functions: Record<string, (...a: unknown[]) => number> };
  getRawPointer(buf: ArrayBufferView): bigint;
}

/**
 * prctl and waitpid through Node's experimental node:ffi (Node 26, which the Node build pins; it
 * is on by default there). Older Nodes have no FFI: then the reason says so and the stop falls back
 * to polling /proc. Node prints an ExperimentalWarning when the module loads; ik asked for it on
 * purpose, so that one warning is kept off stderr.
 */
function nodeLibc(): LibcCalls | string {
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const emit = process.emitWarning;
  let ffi: NodeFfi | undefined;
  try {
    process.emitWarning = ((w: string | Error, ...rest: unknown[]) => {
      if (/\bFFI\b/.test(String((w as Error)?.message ?? w))) return;
      (emit as (...a: unknown[]) => void).call(process, w, ...rest);
    }) as typeof process.emitWarning;
    ffi = getBuiltin?.("node:ffi") as NodeFfi | undefined;
  } catch (e) {
    return `node:ffi could not be loaded (${String((e as Error)?.message ?? e).slice(0, 100)})`;
  } finally {
    process.emitWarning = emit;
  }
  if (!ffi?.dlopen) return `this Node (${process.versions.node}) has no node:ffi to call prctl (Node 26 has)`;
  return firstLibc((lib) => {
    const f = ffi.dlopen(lib, {
      prctl: { arguments: ["int32", "uint64", "uint64", "uint64", "uint64"], return: "int32" },
      waitpid: { arguments: ["int32", "pointer", "int32"], return: "int32" },
    }).functions;
    return {
      setChildSubreaper: () => f.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n),
      getChildSubreaper: () => {
        const buf = new Int32Array(1);
        return f.prctl(PR_GET_CHILD_SUBREAPER, ffi.getRawPointer(buf), 0n, 0n, 0n) === 0 ? buf[0] : null;
      },
      reapNoHang: (pid) => f.waitpid(pid, 0n, WNOHANG),
    };
  });
}

/** Creates the Node runtime. */
export function nodeRuntime(): Runtime {
  const sea = isNodeSea();
  const self = (): string[] => {
    if (sea) return [liveExecPath(process.execPath)];
    const [exec, script] = scriptArgv(process.execPath, process.argv);
    return script === undefined ? [exec] : [exec, ...process.execArgv, script];
  };
  // A single executable's argv is [execPath, name as typed, ...args]; a script's [node, script, ...args].
  const globalFetch = globalThis.fetch.bind(globalThis);
  return makeRuntime("node", process.versions.node, nodeServe, self, () => process.argv.slice(2), undefined, nodeFetch(globalFetch), nodeLibc);
}
