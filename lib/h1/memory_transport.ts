/**
 * A transport with no network under it: every request written on one of its connections is
 * answered with the same response bytes, in the reads it was given as, each read on its own turn
 * of the event loop (as a socket's reads arrive). For running ik's own HTTP/1.1 client, parser and
 * streaming loop without sending anything (lib/bench/client_warm_up.ts).
 * @module
 */
import { setImmediate } from "node:timers";
import type { Connect, TransportConn, TransportHandlers } from "./types.ts";

/**
 * A {@link Connect} whose connections answer each write with `reads` (one response, split where the
 * reads split it). Each read is handed over as a fresh copy: the client's parser may rearrange a
 * read in place.
 */
export function memoryConnect(reads: readonly Uint8Array[]): Connect {
  return (_host: string, _port: number, h: TransportHandlers) => {
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      h.close(null);
    };
    const deliver = (i: number) => {
      if (closed || i >= reads.length) return;
      h.data(reads[i].slice());
      setImmediate(deliver, i + 1);
    };
    const conn: TransportConn = {
      write: () => void setImmediate(deliver, 0),
      pause: () => {},
      resume: () => {},
      destroy: close,
      setRef: () => {},
    };
    return Promise.resolve(conn);
  };
}
