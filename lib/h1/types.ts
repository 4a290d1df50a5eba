/**
 * The byte transport the HTTP/1.1 client runs on: one TCP connection, push-based. The runtime
 * shim supplies it (Bun: its own socket connect; anywhere: `node:net`, see net_transport.ts).
 * @module
 */

/**
 * What a connection reports, on the event loop, calling these as methods of the handlers object
 * (ik's connection is its own handlers). `close` may come from within a call into the transport:
 * Bun's reports it from within {@link TransportConn.destroy}.
 */
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
  /** Closes at once; `close` follows (possibly before this returns). */
  destroy(): void;
  /** Whether the connection keeps the process alive (an idle pooled one does not). */
  setRef(ref: boolean): void;
}

/**
 * Opens a connection to host:port (host without IPv6 brackets). Rejects with the OS error (its
 * `code`: ECONNREFUSED, ENOTFOUND, ...) when it cannot connect.
 */
export type Connect = (host: string, port: number, handlers: TransportHandlers) => Promise<TransportConn>;

/** The part of a Headers a body sink reads (ik's client may hand it the head's fields without a Headers object). */
export type HeadersLike = Pick<Headers, "get" | "has">;

/** Abandons a response whose body a {@link BodySink} took. */
export interface BodyCancel {
  /** Drops the response (and its connection); the sink hears nothing after it. */
  cancelBody(): void;
}

/**
 * A response body taken by callbacks instead of through a stream: an init field (`bodySink`) ik's
 * HTTP/1.1 client understands and other fetches ignore. At the response head the client asks
 * {@link BodySink.accepts}; when the sink says yes, the fetch resolves with the head and no body
 * (`body` null; ik's client then gives a head-only response: status, statusText, ok, headers.get/has),
 * every body chunk goes to {@link BodySink.data} in the socket's own turn (no stream, no queue, no
 * promise per chunk) and {@link BodySink.end} is called once, unless the sink cancels first.
 */
export interface BodySink {
  /**
   * Whether this response's body should come here; called once, when its head has arrived (a
   * response that has a body). `cancel.cancelBody()` abandons the response (and the connection
   * under it); the sink hears nothing after it. (An object, not a closure: a sink keeps it for the
   * whole body, and a closure would be one more function and scope a stream, issue 21.)
   */
  accepts(status: number, headers: HeadersLike, cancel: BodyCancel): boolean;
  /** Body bytes, as they arrive (the client does not reuse the buffer). A throw fails the response. */
  data(bytes: Uint8Array): void;
  /** The body ended: whole (`null`), or with the error a stream reader would have seen (network, protocol, abort reason). */
  end(err: unknown): void;
}

/**
 * The init fields beyond fetch's that ik's HTTP/1.1 client understands (other fetches ignore them).
 * `onSend` is called when the request is handed to its connection, with `reused` true when that
 * connection had already carried a response (a pooled keep-alive one: the server may have closed it
 * just then, and a request it dropped with no response byte may be sent again). `newConnection`
 * asks for a connection of its own rather than a pooled one (the resend of such a request).
 */
export interface H1InitExtras {
  onSend?: (reused: boolean) => void;
  newConnection?: boolean;
  bodySink?: BodySink;
}
