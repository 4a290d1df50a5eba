/**
 * The byte transport the HTTP/1.1 client runs on: one TCP connection, push-based. The runtime
 * shim supplies it (Bun: its own socket connect; anywhere: `node:net`, see net_transport.ts).
 * @module
 */

/** What a connection reports. Each is called on the event loop, never re-entrantly. */
export interface TransportHandlers {
  /** Bytes received (the transport does not reuse the buffer). */
  data(bytes: Uint8Array): void;
  /** The connection ended: by the peer (FIN), by an error (`err`) or by {@link TransportConn.destroy}. Called once. */
  close(err: Error | null): void;
}

/** One open TCP connection. */
export interface TransportConn {
  /** Queues bytes for sending; the transport writes what the socket takes and the rest when it drains. */
  write(bytes: Uint8Array): void;
  /** Stops reading from the socket (the kernel buffers, the peer slows down). */
  pause(): void;
  /** Reads again after {@link pause}. */
  resume(): void;
  /** Closes at once; `close` follows. */
  destroy(): void;
  /** Whether the connection keeps the process alive (an idle pooled one does not). */
  setRef(ref: boolean): void;
}

/**
 * Opens a connection to host:port (host without IPv6 brackets). Rejects with the OS error (its
 * `code`: ECONNREFUSED, ENOTFOUND, ...) when it cannot connect.
 */
export type Connect = (host: string, port: number, handlers: TransportHandlers) => Promise<TransportConn>;
