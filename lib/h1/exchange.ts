/**
 * One request and its response on a pooled HTTP/1.1 connection (see {@link Exchange}); fetch.ts
 * makes one per request and its connection carries it.
 * @module
 */
import type { BodyCancel, BodySink } from "./types.ts";

/** What an exchange asks of the connection that carries it. */
export interface ExchangeCarrier {
  /** The exchange fails with `e`: its fetch, or its body once the head has come. */
  failWith(ex: Exchange, e: unknown): void;
  /** The reader stopped early: the rest of the response goes with its connection. */
  abandon(ex: Exchange): void;
}

/**
 * One request and its response on a connection. It is its abort signal's listener itself
 * ({@link Exchange.handleEvent}): a listener closure made beside the request would keep the
 * request's bytes and init (the prompt, twice) alive for the whole response.
 */
export class Exchange implements BodyCancel {
  ctrl: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** The response promise has settled (the head came, or it failed). */
  answered = false;
  /** The body has ended, failed or been cancelled. */
  finished = false;
  /** Listening to {@link signal}. */
  listening = false;
  /** The error to raise once the queued chunks are read (the connection's `failWith`). */
  pendingError: { e: unknown } | null = null;
  /** The sink that took the body (then the Response has none), or null. */
  sink: BodySink | null = null;

  /** The fetch's settle functions, dropped once it has settled (a body can last minutes). */
  private resolve: ((r: Response) => void) | null;
  private reject: ((e: unknown) => void) | null;

  /**
   * @param conn the connection that carries it
   * @param offer the init's body sink, offered at the head
   */
  constructor(
    resolve: (r: Response) => void,
    reject: (e: unknown) => void,
    readonly signal: AbortSignal | null,
    readonly offer: BodySink | null,
    readonly conn: ExchangeCarrier,
  ) {
    this.resolve = resolve;
    this.reject = reject;
  }

  /** The fetch resolves with `r` (once). */
  answer(r: Response): void {
    const resolve = this.resolve;
    this.answered = true;
    this.resolve = this.reject = null;
    resolve?.(r);
  }

  /** The fetch fails with `e` (once). */
  refuse(e: unknown): void {
    const reject = this.reject;
    this.answered = true;
    this.resolve = this.reject = null;
    reject?.(e);
  }

  /** {@link BodyCancel}: the sink that took the body abandons it. */
  cancelBody(): void {
    this.conn.abandon(this);
  }

  /** The signal aborted: the exchange fails with its reason. */
  handleEvent(): void {
    this.conn.failWith(this, this.signal?.reason ?? new DOMException("The operation was aborted.", "AbortError"));
  }
}
