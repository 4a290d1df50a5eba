/**
 * How the streaming loop gets a 2xx body, chunk by chunk, into its one per-chunk function: from a
 * fetch that takes a body sink (ik's HTTP/1.1 client hands each chunk over in the socket's own
 * turn: no stream, no queue, no promise per chunk), or else through the Response's stream (any other
 * fetch; a compressed body; a sink the fetch ignored). Either way the loop may stop reading early
 * (the line cap, or [DONE] on a body kept open), and a failed read surfaces as the error a stream
 * reader would have raised.
 * @module
 */
import type { BodyCancel, BodySink, HeadersLike } from "../h1/types.ts";
import { compressionOf, decodedBody } from "./body_decode.ts";

/** The per-chunk function: false when reading should stop. */
export type OnChunk = (bytes: Uint8Array) => boolean;

/** What a {@link SinkFeed} reports to: the loop's request (methods, not closures: one object a request). */
export interface FeedOwner {
  /** Called once when the body is taken, at the head's arrival (the loop stamps it). */
  headArrived(): void;
  /** The loop's per-chunk function: false when reading should stop. */
  chunk(bytes: Uint8Array): boolean;
  /**
   * The body ended (`null`) or failed (what a stream reader would have raised): called once, after
   * {@link SinkFeed.watch}, in the turn the end came in (or within `watch` when it came first).
   */
  bodyEnded(err: unknown): void;
}

/**
 * The loop's body sink (offered to the fetch as `init.bodySink`). It takes a 2xx body that needs
 * no decoding (the Response then has none); chunks that came with the head reach `onChunk` before
 * the fetch's promise settles.
 */
export class SinkFeed implements BodySink {
  /** The fetch handed the body here (set at the head). */
  taken = false;
  #ended: { err: unknown } | null = null;
  #cancel: BodyCancel | null = null;
  #reading = false;
  #stopWanted = false;

  /** @param owner what the head and every chunk are reported to */
  constructor(private readonly owner: FeedOwner) {}

  /** {@link BodySink}: a 2xx body that {@link decodedBody} would pass through as it came (nothing to decompress). */
  accepts(status: number, headers: HeadersLike, cancel: BodyCancel): boolean {
    if (status < 200 || status > 299 || compressionOf(headers) !== null) return false;
    // Taken only once the head is recorded: a throw here leaves the body to the stream, and the
    // loop then reads the stream (a sink that says yes and is not used would wait forever).
    this.owner.headArrived();
    this.#cancel = cancel;
    this.taken = true;
    return true;
  }

  /** {@link BodySink}: one chunk, unless reading has stopped. */
  data(bytes: Uint8Array): void {
    if (this.#ended === null && !this.#stopWanted && !this.owner.chunk(bytes)) this.stop();
  }

  /** {@link BodySink}: the body ended (null) or failed; the owner hears it once it {@link watch}es. */
  end(err: unknown): void {
    if (this.#ended !== null) return;
    this.#ended = { err };
    if (this.#reading) this.owner.bodyEnded(err);
  }

  /**
   * Stops reading: the response is abandoned (its connection dropped) and the body counts as
   * ended. Asked for before {@link watch} (chunks that came with the head), it happens there.
   */
  stop(): void {
    if (!this.#reading) {
      this.#stopWanted = true;
      return;
    }
    this.#cancel?.cancelBody();
    this.end(null);
  }

  /**
   * The owner reads the taken body from now on: it hears the end through {@link FeedOwner.bodyEnded}
   * (at once when the body has ended already). No promise and no suspended call wait for it: an
   * open stream holds neither (issue 21).
   */
  watch(): void {
    this.#reading = true;
    if (this.#ended !== null) this.owner.bodyEnded(this.#ended.err);
    else if (this.#stopWanted) this.stop();
  }
}

/**
 * Reads a body through its stream (decoding gzip or deflate) into `onChunk`. `setStop` receives
 * the function that stops reading early.
 */
export async function readStream(body: ReadableStream<Uint8Array>, headers: Headers, onChunk: OnChunk, setStop: (stop: () => void) => void): Promise<void> {
  const reader = decodedBody(body, headers).getReader();
  setStop(() => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) return;
      if (!onChunk(r.value)) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
