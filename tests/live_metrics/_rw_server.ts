/**
 * An in-process remote write receiver on 127.0.0.1 for RemoteWriter tests: each request is
 * answered by a script (a status and body, a delay, or no answer at all), the requests are kept
 * (headers and raw body), and the most requests ever open at once is counted. close() destroys
 * open sockets and clears every timer.
 */
import { Buffer } from "node:buffer";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { Socket } from "node:net";

/** What the server does with request `i` (0-based). */
export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | "hang";

/** A request as received. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: Uint8Array;
}

/** A running receiver. */
export interface RwServer {
  url: string;
  requests: Received[];
  /** The most requests open at the same time so far. */
  maxOpen(): number;
  close(): Promise<void>;
}

/** Starts a receiver that answers request `i` with `script(i, request)`. */
export async function rwServer(script: (i: number, req: Received) => Reply): Promise<RwServer> {
  const requests: Received[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let open = 0;
  let maxOpen = 0;
  const server = createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: Received = { headers: req.headers, body: new Uint8Array(Buffer.concat(chunks)) };
      requests.push(r);
      const reply = script(requests.length - 1, r);
      if (reply === "hang") return;
      const answer = () => {
        open--;
        res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers });
        res.end(reply.body ?? "");
      };
      if (reply.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          answer();
        }, reply.delayMs);
        timers.add(t);
      } else answer();
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/api/v1/write`,
    requests,
    maxOpen: () => maxOpen,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
