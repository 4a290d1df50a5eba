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
    headers[k] = v;
  });
  res.writeHead(r.status, headers);
  res.flushHeaders();
  if (!r.body) return void res.end();
  const reader = r.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((ok) => res.once("drain", ok));
    }
    res.end();
  } catch {
    res.destroy();
  }
}

async function serve(handler: Handler, opts: ServeOptions): Promise<Served> {
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = createServer((req, res) => {
    const ac = new AbortController();
    res.on("close", () => ac.abort());
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
    server.listen(opts.port ?? 0, hostname, () => ok());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  let closed: Promise<void> | null = null;
  const close = () =>
    closed ??= new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  opts.signal?.addEventListener("abort", () => void close(), { once: true });
  return { port, hostname, close };
}

/** Creates the Node runtime. */
export function nodeRuntime(): Runtime {
  const self = () => scriptArgv(process.execPath, process.argv);
  return makeRuntime("node", process.versions.node, serve, self, () => process.argv.slice(2));
}
