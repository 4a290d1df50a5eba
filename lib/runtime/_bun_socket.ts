/**
 * The HTTP/1.1 client's transport on `Bun.connect`: a socket with no stream objects between the
 * kernel and the parser. Writes the socket does not take at once are queued and sent on drain.
 *
 * One object a connection ({@link BunConn}, kept in the socket's own `data` slot) and one handlers
 * object for every socket: the closures per connection this replaced (a scope, ten functions and a
 * handlers object each) lived as long as their connection, and a 1,000-stream level holds 1,000
 * connections (issue 21: what one open stream holds).
 * @module
 */
import type { Connect, TransportConn, TransportHandlers } from "../h1/types.ts";

interface BunSocket {
  data: BunConn;
  write(data: Uint8Array, byteOffset?: number, byteLength?: number): number;
  pause(): void;
  resume(): void;
  terminate(): void;
  setNoDelay(on?: boolean): boolean;
  ref(): void;
  unref(): void;
}
interface SocketHandlers {
  binaryType: "uint8array";
  data(s: BunSocket, d: Uint8Array): void;
  drain(s: BunSocket): void;
  close(s: BunSocket, err?: Error): void;
  end(s: BunSocket): void;
  error(s: BunSocket, err: Error): void;
  connectError(s: BunSocket, err: Error): void;
}
interface BunConnect {
  connect(o: { hostname: string; port: number; data: BunConn; socket: SocketHandlers }): Promise<BunSocket>;
}

/** One connection: the socket, the bytes it has not taken yet, and whom to tell what arrives. */
class BunConn implements TransportConn {
  s: BunSocket | null = null;
  pending: Uint8Array | null = null;
  closed = false;
  lastErr: Error | null = null;

  constructor(readonly h: TransportHandlers) {}

  /** The connection is over (once): whoever reads it hears why. */
  done(err: Error | null): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = null;
    this.h.close(err);
  }

  /** Writes what is pending, as far as the socket takes it (the rest on drain). */
  flush(): void {
    const s = this.s;
    while (s !== null && this.pending !== null) {
      const n = s.write(this.pending);
      if (n < 0) {
        this.pending = null;
        return;
      }
      this.pending = n >= this.pending.length ? null : this.pending.subarray(n);
      if (this.pending !== null && n === 0) return;
    }
  }

  write(b: Uint8Array): void {
    if (this.closed) return;
    const p = this.pending;
    if (p !== null) {
      const all = new Uint8Array(p.length + b.length);
      all.set(p, 0);
      all.set(b, p.length);
      this.pending = all;
    } else this.pending = b;
    this.flush();
  }

  pause(): void {
    this.s?.pause();
  }

  resume(): void {
    this.s?.resume();
  }

  destroy(): void {
    this.s?.terminate();
    this.done(null);
  }

  setRef(ref: boolean): void {
    if (ref) this.s?.ref();
    else this.s?.unref();
  }
}

/** The handlers every socket shares; each finds its connection in its `data`. */
const HANDLERS: SocketHandlers = {
  binaryType: "uint8array",
  data: (s, d) => s.data.h.data(d),
  drain: (s) => s.data.flush(),
  close: (s, err) => s.data.done(err ?? s.data.lastErr),
  end: (s) => {
    // The peer's FIN: HTTP/1.1 has no half-close, so the connection is over.
    s.terminate();
    s.data.done(s.data.lastErr);
  },
  error: (s, err) => {
    s.data.lastErr = err;
  },
  connectError: () => {},
};

/** Opens a connection with `Bun.connect` (Nagle off); errors carry the OS code in their words. */
export const bunConnect: Connect = (host, port, h) => {
  const bun = (globalThis as unknown as { Bun: BunConnect }).Bun;
  const conn = new BunConn(h);
  return bun.connect({ hostname: host, port, data: conn, socket: HANDLERS }).catch((e: Error & { code?: string }) => {
    // Bun says "Failed to connect" whatever the OS said: put the code in the words (a refused
    // connection reads ECONNREFUSED; EMFILE or EADDRNOTAVAIL is this host's limit, not the server).
    const code = typeof e?.code === "string" ? e.code : "";
    if (!code || String(e?.message).includes(code)) throw e;
    throw Object.assign(new Error(`${code}: connect ${code} ${host}:${port} (${e.message})`, { cause: e }), { code });
  }).then((s): TransportConn => {
    s.setNoDelay(true);
    conn.s = s;
    return conn;
  });
};
