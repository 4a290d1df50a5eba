/**
 * A tiny HTTP/1.1 server on node:net for client tests that need the socket itself: counting
 * connections (keep-alive reuse), resetting mid-body, stalling, holding headers back. Each
 * request is answered by a script of steps. Loopback only; every timer is cleared on close.
 */
import { Buffer } from "node:buffer";
import * as net from "node:net";

/** One step of a scripted response. */
export type Step =
  | { head: number; headers?: Record<string, string> } // status line + headers (chunked body)
  | { chunk: string } // one HTTP chunk with this text
  | { bytes: Uint8Array } // one HTTP chunk with these exact bytes (a gzip body, say)
  | { wait: number } // pause (ms)
  | { end: true } // the terminating zero chunk (keeps the connection open for reuse)
  | { raw: string } // these bytes as they are (a partial head, say)
  | { reset: true } // destroy the socket (RST where the runtime supports it)
  | { close: true }; // end the socket cleanly (FIN) without the zero chunk

/** The request as the server saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A running scripted server. */
export interface RawServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Requests seen so far. */
  requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * Starts a server that answers each request with `script(request, index, onConnection)`: `index`
 * counts every request, `onConnection` those before it on the same connection (0: a new connection).
 */
export async function rawServer(script: (req: SeenRequest, i: number, onConnection: number) => Step[]): Promise<RawServer> {
  let conns = 0;
  const sockets = new Set<net.Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const requests: SeenRequest[] = [];
  const sleep = (ms: number) =>
    new Promise<void>((ok) => {
      const t = setTimeout(() => {
        timers.delete(t);
        ok();
      }, ms);
      timers.add(t);
    });
  const play = async (sock: net.Socket, steps: Step[]) => {
    for (const s of steps) {
      if (sock.destroyed) return;
      if ("head" in s) {
        const extra = Object.entries(s.headers ?? { "content-type": "text/event-stream" }).map(([k, v]) =>
          `${k}: ${v}\r\n`
        ).join("");
        sock.write(`HTTP/1.1 ${s.head} X\r\n${extra}transfer-encoding: chunked\r\n\r\n`);
      } else if ("chunk" in s) {
        const b = Buffer.from(s.chunk, "utf8");
        sock.write(Buffer.concat([Buffer.from(b.length.toString(16) + "\r\n"), b, Buffer.from("\r\n")]));
      } else if ("bytes" in s) {
        const b = Buffer.from(s.bytes);
        sock.write(Buffer.concat([Buffer.from(b.length.toString(16) + "\r\n"), b, Buffer.from("\r\n")]));
      } else if ("raw" in s) {
        sock.write(s.raw);
      } else if ("wait" in s) {
        await sleep(s.wait);
      } else if ("end" in s) {
        sock.write("0\r\n\r\n");
      } else if ("reset" in s) {
        const r = sock as net.Socket & { resetAndDestroy?: () => void };
        if (r.resetAndDestroy) r.resetAndDestroy();
        else sock.destroy();
      } else if ("close" in s) {
        sock.end();
      }
    }
  };
  const srv = net.createServer((sock) => {
    conns++;
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    sock.on("error", () => {});
    let buf: Buffer = Buffer.alloc(0);
    let busy: Promise<void> = Promise.resolve();
    let onConnection = 0;
    sock.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const i = buf.indexOf("\r\n\r\n");
        if (i < 0) return;
        const head = buf.subarray(0, i).toString("latin1").split("\r\n");
        const headers: Record<string, string> = {};
        for (const line of head.slice(1)) {
          const c = line.indexOf(":");
          if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
        }
        const len = Number(headers["content-length"] ?? 0);
        if (buf.length < i + 4 + len) return;
        const [method, path] = head[0].split(" ");
        const req = { method, path, headers, body: buf.subarray(i + 4, i + 4 + len).toString("utf8") };
        buf = buf.subarray(i + 4 + len);
        const n = requests.push(req) - 1;
        const k = onConnection++;
        busy = busy.then(() => play(sock, script(req, n, k)));
      }
    });
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
  const port = (srv.address() as net.AddressInfo).port;
  return {
    port,
    connections: () => conns,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        srv.close(() => ok());
      }),
  };
}

/** A free loopback port with nothing listening on it (for "connection refused"). */
export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((ok) => srv.close(() => ok()));
  return port;
}

/** A chat chunk with the given delta (and optional extra choice fields). */
export function chatChunk(delta: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return `data: ${
    JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, ...extra }] })
  }\n\n`;
}

/** A usage-only chunk (`choices: []`). */
export function usageChunk(completionTokens: number): string {
  return `data: ${
    JSON.stringify({
      id: "c",
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: completionTokens, total_tokens: 5 + completionTokens },
    })
  }\n\n`;
}

/** The end marker. */
export const DONE = "data: [DONE]\n\n";
