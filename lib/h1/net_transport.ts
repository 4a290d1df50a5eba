/**
 * The HTTP/1.1 client's transport on `node:net` (Bun, Deno and Node all have it). The transport
 * over Bun's own socket connect (lib/runtime/bun.ts) is lighter; this one is for the other runtimes
 * and for tests that run the same client everywhere.
 * @module
 */
import * as net from "node:net";
import type { Connect, TransportConn } from "./types.ts";

/** Connects with `node:net` (Nagle off: every request goes out at once). */
export const netConnect: Connect = (host, port, h) =>
  new Promise<TransportConn>((resolve, reject) => {
    const s = net.connect({ host, port, noDelay: true });
    let open = false, closed = false;
    let lastErr: Error | null = null;
    const conn: TransportConn = {
      write: (b) => void s.write(b),
      pause: () => void s.pause(),
      resume: () => void s.resume(),
      destroy: () => void s.destroy(),
      setRef: (ref) => void (ref ? s.ref() : s.unref()),
    };
    s.on("connect", () => {
      open = true;
      resolve(conn);
    });
    s.on("data", (d: Uint8Array) => h.data(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)));
    s.on("error", (e) => {
      lastErr = e;
      if (!open) reject(e);
    });
    s.on("close", () => {
      if (closed) return;
      closed = true;
      if (open) h.close(lastErr);
      else if (!lastErr) reject(Object.assign(new Error("socket closed while connecting (ECONNRESET)"), { code: "ECONNRESET" }));
    });
  });
