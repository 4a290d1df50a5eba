/**
 * A fetch for the measured requests on Node, written on `node:http`/`node:https`.
 *
 * Why: Node's own fetch (undici) spent 1.1 ms (median, 2-vCPU EPYC) between the call and the
 * request's bytes reaching the socket, and more under load (64 requests dispatched at once reached
 * the server over ~18 ms instead of ~7 ms): all of it landed in TTFT. Measured stage by stage in
 * benchmarks/node_lag (see its RESULTS.md). `node:http` sends the head and the body in one write, hands
 * each socket read straight to the body stream, and tells the caller when the request went out.
 *
 * What it keeps of fetch's contract, for the callers ik has: method, headers, a string or byte
 * body, an AbortSignal (before and during the response), redirects never followed (the caller
 * asks `redirect: "manual"`), the body never decoded (the caller decodes), errors that carry the
 * OS code (`ECONNREFUSED`, `ECONNRESET`, "socket hang up"). Anything else (a streamed request
 * body, `redirect: "follow"`, credentials in the URL) goes to the global fetch. It also calls
 * the init's `onSend` (see {@link SendHook}) when the request goes out.
 * @module
 */
import type { Agent, ClientRequest, IncomingMessage, RequestOptions } from "node:http";
import { Buffer } from "node:buffer";
import type { FetchFn } from "./types.ts";

// One pool per scheme, kept alive and unbounded as undici's is: a closed loop of N streams reuses
// N connections; more free sockets than Node's default 256 are kept for 1,000-stream levels.
const POOL = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096, scheduling: "lifo" as const };

interface Clients {
  http: { request(o: RequestOptions): ClientRequest; agent: Agent };
  https: { request(o: RequestOptions): ClientRequest; agent: Agent };
}
let clients: Clients | null = null;

/**
 * node:http and node:https, loaded at the first request: a runtime that never uses this client
 * (the Bun build) does not pay their memory (~9 MB RSS on Bun 1.4.5) at start.
 */
function loaded(): Clients {
  if (clients === null) {
    const proc = (globalThis as unknown as { process: { getBuiltinModule(id: string): unknown } }).process;
    const http = proc.getBuiltinModule("node:http") as typeof import("node:http");
    const https = proc.getBuiltinModule("node:https") as typeof import("node:https");
    clients = {
      http: { request: http.request, agent: new http.Agent(POOL) },
      https: { request: https.request, agent: new https.Agent(POOL) },
    };
  }
  return clients;
}

/**
 * An init may carry `onSend`: called when the request is handed to its connection (after this
 * client has built it), so the caller's send time leaves out the client's own set-up, with whether
 * that connection is a reused pooled one; and `newConnection`: take a socket of its own (a resend
 * after a stale pooled connection).
 */
export type SendHook = { onSend?: (reused?: boolean) => void; newConnection?: boolean };

/** Statuses whose response has no body (a Response built with one throws). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function headerRecord(h: HeadersInit | undefined): Record<string, string> {
  if (h === undefined) return {};
  // ik's client passes a plain record of lower-case names: copied as is (web Headers cost ~0.1 ms).
  if (!(h instanceof Headers) && !Array.isArray(h)) return { ...h };
  const out: Record<string, string> = {};
  new Headers(h).forEach((v, k) => (out[k] = v));
  return out;
}

/** Parsed request targets by URL string: a benchmark sends to one or two URLs all run long. */
const targets = new Map<string, { plain: boolean; host: string; port: number; path: string } | null>();

function target(input: string): { plain: boolean; host: string; port: number; path: string } | null {
  let t = targets.get(input);
  if (t === undefined) {
    const u = new URL(input);
    const plain = u.protocol === "http:";
    t = plain || u.protocol === "https:"
      ? {
        plain,
        host: u.hostname.replace(/^\[|\]$/g, ""),
        port: u.port ? Number(u.port) : plain ? 80 : 443,
        path: u.pathname + u.search,
      }
      : null;
    if (u.username || u.password) t = null; // credentials in the URL: leave them to fetch
    if (targets.size > 256) targets.clear();
    targets.set(input, t);
  }
  return t;
}

function bodyBytes(body: BodyInit | null | undefined): Uint8Array | string | null | undefined {
  if (body === null || body === undefined) return null;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  return undefined; // a stream, a form, a blob: not ik's measured requests
}

/** The response's body as a web stream fed by the socket's reads, with backpressure. */
function bodyStream(res: IncomingMessage, req: ClientRequest): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(ctrl) {
      res.on("data", (chunk: Uint8Array) => {
        ctrl.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((ctrl.desiredSize ?? 1) <= 0) res.pause();
      });
      res.once("end", () => {
        ended = true;
        ctrl.close();
      });
      res.once("error", (e) => {
        if (!ended) {
          ended = true;
          ctrl.error(e);
        }
      });
      res.once("close", () => {
        // A connection lost mid-body ends the message without 'end' (and, on some Node versions,
        // without 'error'): the body failed, it did not end.
        if (!ended) {
          ended = true;
          const e = Object.assign(new Error("connection closed mid-body (ECONNRESET)"), { code: "ECONNRESET" });
          ctrl.error(e);
        }
      });
    },
    pull() {
      if (res.isPaused()) res.resume();
    },
    cancel() {
      ended = true;
      req.destroy();
      res.destroy();
    },
  });
}

/**
 * Sends one request on `node:http`/`node:https` and resolves with a web {@link Response} when its
 * head arrives; the body streams as the socket delivers it.
 * @param fallback used for what this client does not do (see the module note)
 */
export function nodeFetch(fallback: FetchFn): FetchFn {
  return (input, init = {}) => {
    const payload = bodyBytes(init.body);
    const t = payload === undefined || init.redirect !== "manual" ? null : target(input);
    if (t === null) return fallback(input, init);
    const signal = init.signal ?? null;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const headers = headerRecord(init.headers);
    if (payload !== null && payload !== undefined) headers["content-length"] = String(Buffer.byteLength(payload));
    const { onSend, newConnection } = init as SendHook;
    return new Promise<Response>((resolve, reject) => {
      const c = t.plain ? loaded().http : loaded().https;
      const req = c.request({
        host: t.host,
        port: t.port,
        path: t.path,
        method: init.method ?? "GET",
        headers,
        agent: newConnection === true ? false : c.agent,
      });
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      req.once("close", () => signal?.removeEventListener("abort", onAbort));
      req.once("socket", (s) => {
        s.setNoDelay(true);
        // The request goes out on this socket now (a pooled one at once, a new one once connected).
        onSend?.(req.reusedSocket === true);
      });
      let answered = false;
      // Before the head the promise carries an error; after it the body stream does (kept as a
      // listener all along: an 'error' with none would end the process).
      req.on("error", (e) => {
        if (!answered) reject(e);
      });
      req.once("response", (res) => {
        answered = true;
        const h = new Headers();
        const raw = res.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) h.append(raw[i], raw[i + 1]);
        const status = res.statusCode ?? 0;
        const noBody = NULL_BODY.has(status) || init.method === "HEAD";
        if (noBody) res.resume();
        try {
          resolve(
            new Response(noBody ? null : bodyStream(res, req), { status, statusText: res.statusMessage, headers: h }),
          );
        } catch (e) {
          req.destroy();
          reject(e);
        }
      });
      req.end(payload ?? undefined);
    });
  };
}
