/**
 * An incremental HTTP/1.1 response parser (RFC 9112): the head (status line and header fields,
 * interim 1xx responses skipped), then the body framed by `transfer-encoding: chunked`,
 * `content-length` or the connection's close, handed on as views into the bytes it was given
 * (a push's body bytes gathered in place, no allocation). It never buffers body bytes; the head
 * (response_head.ts) is capped at {@link MAX_HEAD_BYTES}.
 *
 * Lenient where real servers are (a bare LF ends a line, a missing reason phrase, chunk
 * extensions and trailers ignored, chunk sizes padded with zeros, empty lines before a status line),
 * strict where a wrong guess would corrupt a measurement
 * (a malformed status line, a bad chunk size or content-length, two different lengths).
 * @module
 */
import { contentLength, type Framing, framingOf, latin1, parseHead, type ResponseHead } from "./response_head.ts";
import { H1ProtocolError } from "./response_error.ts";

export { H1ProtocolError } from "./response_error.ts";
export { type Framing, framingOf, keepsAlive, type ResponseHead } from "./response_head.ts";

/** The longest response head accepted (status line plus header fields). */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The longest chunk-size or trailer line accepted. */
const MAX_LINE_BYTES = 4096;
/** The largest chunk size accepted: 13 hex digits (2^52 - 1), whatever zeros lead them (RFC 9112 §7.1: 1*HEXDIG). */
const MAX_CHUNK_SIZE = 0xfffffffffffff;


/** What the parser hands on. */
export interface ResponseSink {
  /** The final (non-1xx) head, with the framing the parser will apply. */
  onHead(head: ResponseHead, framing: Framing): void;
  /** Body bytes: a view into the pushed buffer, which the parser may have rearranged in place (it is
   * never touched again after this call). */
  onData(bytes: Uint8Array): void;
  /** The body is complete. */
  onEnd(): void;
}

const enum S {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
  Close,
  Done,
}

const CR = 13, LF = 10;


/** Parses one response after another on one connection (call {@link reset} between them). */
export class ResponseParser {
  private state = S.Head;
  private head: Uint8Array[] = [];
  private headLen = 0;
  /** Empty-line bytes (CR, LF) skipped before this response's status line. */
  private skipped = 0;
  /** The trailer line read so far (one may span pushes). */
  private line = "";
  /** The chunk-size line being read: digits so far, past them, in an extension, its bytes. */
  private sizeDigits = 0;
  private sizeDone = false;
  private inExt = false;
  private lineBytes = 0;
  private left = 0;
  private framing: Framing = "none";
  private noBody: boolean;
  /** Bytes that came after the end of the response (the connection cannot be reused). */
  extra = false;

  /** @param sink receives the head, the body and its end; @param isHead the request was HEAD (no body follows) */
  constructor(private readonly sink: ResponseSink, isHead = false) {
    this.noBody = isHead;
  }

  /** Starts the next response on the same connection. */
  reset(isHead = false): void {
    this.state = S.Head;
    this.head = [];
    this.headLen = 0;
    this.skipped = 0;
    this.line = "";
    this.left = 0;
    this.sizeDigits = 0;
    this.sizeDone = false;
    this.inExt = false;
    this.lineBytes = 0;
    this.framing = "none";
    this.noBody = isHead;
    this.extra = false;
    this.gatherAt = this.gatherEnd = -1;
  }

  /** Whether the whole response (head and body) has been read. */
  get done(): boolean {
    return this.state === S.Done;
  }

  /** Whether the body runs to the connection's close (and has not ended). */
  get untilClose(): boolean {
    return this.state === S.Close;
  }

  /** Whether the head has been read. */
  get headDone(): boolean {
    return this.state !== S.Head;
  }

  /**
   * Feeds the bytes the connection delivered. Throws {@link H1ProtocolError} for a malformed
   * response (after handing on the body bytes before the fault). The body bytes of one push go out
   * as one piece: a view when they are contiguous, one copy when chunk framing cut them apart (a
   * server that coalesces 259 one-event chunks into one write costs one read downstream, not 259).
   */
  push(b: Uint8Array): void {
    this.buf = b;
    try {
      this.pushAll(b);
    } finally {
      this.flush();
      this.buf = null;
    }
  }

  /**
   * Body bytes of this push not yet handed on: the buffer and where its body bytes are gathered,
   * in place (each range moved down over the chunk framing before it: no allocation, one memmove).
   */
  private buf: Uint8Array | null = null;
  private gatherAt = -1;
  private gatherEnd = -1;

  /** Body bytes b[s, e) of the current push. */
  private emit(s: number, e: number): void {
    if (e <= s) return;
    if (this.gatherAt < 0) {
      this.gatherAt = s;
      this.gatherEnd = e;
    } else {
      // The buffer is this parser's to change: the transport never reads or reuses it.
      if (s !== this.gatherEnd) (this.buf as Uint8Array).copyWithin(this.gatherEnd, s, e);
      this.gatherEnd += e - s;
    }
  }

  private flush(): void {
    if (this.gatherAt < 0) return;
    const b = this.buf as Uint8Array;
    const out = this.gatherAt === 0 && this.gatherEnd === b.length ? b : b.subarray(this.gatherAt, this.gatherEnd);
    this.gatherAt = this.gatherEnd = -1;
    this.sink.onData(out);
  }

  /** Takes up to `left` body bytes from b[i, n); returns where it stopped. */
  private takeBody(i: number, n: number): number {
    const take = Math.min(this.left, n - i);
    this.left -= take;
    this.emit(i, i + take);
    return i + take;
  }

  private pushAll(b: Uint8Array): void {
    let i = 0;
    const n = b.length;
    while (i < n) {
      switch (this.state) {
        case S.Head:
          i = this.pushHead(b, i);
          break;
        case S.Length:
          i = this.takeBody(i, n);
          if (this.left === 0) this.finish();
          break;
        case S.Close:
          this.emit(i, n);
          i = n;
          break;
        case S.ChunkSize:
          i = this.sizeLine(b, i);
          break;
        case S.ChunkData:
          i = this.takeBody(i, n);
          if (this.left === 0) this.state = S.ChunkDataEnd;
          break;
        case S.ChunkDataEnd: {
          // CRLF after the chunk's data (a bare LF accepted).
          const c = b[i];
          if (c === CR && this.line === "") {
            this.line = "\r";
            i++;
          } else if (c === LF) {
            this.line = "";
            this.state = S.ChunkSize;
            i++;
          } else throw new H1ProtocolError("malformed chunked body: chunk data longer than its size");
          break;
        }
        case S.Trailer: {
          const nl = b.indexOf(LF, i);
          const end = nl < 0 ? n : nl;
          this.line += latin1(b.subarray(i, end));
          if (this.line.length > MAX_LINE_BYTES) throw new H1ProtocolError("malformed chunked body: trailer line over 4 KiB");
          if (nl < 0) return;
          i = nl + 1;
          const empty = this.line === "" || this.line === "\r";
          this.line = "";
          if (empty) this.finish();
          break;
        }
        case S.Done:
          this.extra = true;
          return;
      }
    }
  }

  /**
   * The connection closed (cleanly or not). A close-delimited body ends here; anything else
   * unfinished throws: before the head, or mid-body (code ECONNRESET either way).
   */
  close(): void {
    if (this.state === S.Done) return;
    if (this.state === S.Close || this.state === S.Trailer) {
      // A close-delimited body ends here; so does one whose last chunk came (only trailers were left).
      this.finish();
      return;
    }
    if (this.state === S.Head) {
      // Mid-head (network_errors.ts words it "closed mid-head"): part of a response came, so the
      // request was taken and is never sent again; before the response: possibly a stale connection.
      throw new H1ProtocolError(
        this.headLen === 0 ? "socket closed before the response (ECONNRESET)" : "socket closed mid-head (ECONNRESET)",
        "ECONNRESET",
      );
    }
    throw new H1ProtocolError(
      this.framing === "length"
        ? `connection closed mid-body, ${this.left} bytes short of its content-length (ECONNRESET)`
        : "connection closed mid-body, before the last chunk (ECONNRESET)",
      "ECONNRESET",
    );
  }

  private finish(): void {
    this.flush();
    this.state = S.Done;
    this.sink.onEnd();
  }

  /**
   * Collects head bytes up to the blank line; returns where the body starts in `b` (or b.length).
   * Empty lines before the status line are skipped (RFC 9112 §2.2: a stray CRLF after the previous
   * message on a reused connection), counted against the head's limit.
   */
  private pushHead(b: Uint8Array, from: number): number {
    if (this.headLen === 0) {
      while (from < b.length && (b[from] === CR || b[from] === LF)) {
        from++;
        if (++this.skipped > MAX_HEAD_BYTES) throw new H1ProtocolError(`response head over ${MAX_HEAD_BYTES / 1024} KiB`);
      }
      if (from === b.length) return from;
    }
    // The blank line may span pushes: search from a few bytes before this push's start.
    const part = from === 0 ? b : b.subarray(from);
    this.head.push(part);
    this.headLen += part.length;
    const all = this.head.length === 1 ? part : this.joined();
    if (all.length >= 5 && !(all[0] === 72 && all[1] === 84 && all[2] === 84 && all[3] === 80 && all[4] === 47)) {
      // An HTTP/2 SETTINGS frame (length < 64 KiB, type 4, flags 0 or ACK): a server that speaks only HTTP/2.
      const h2 = all[0] === 0 && all[3] === 4 && all[4] <= 1 ? "; an HTTP/2 frame: the server speaks only HTTP/2, ik speaks HTTP/1.1" : "";
      throw new H1ProtocolError(`malformed status line '${latin1(all.subarray(0, Math.min(all.length, 40))).replace(/[^\x20-\x7e]/g, "?")}' (not an HTTP/1.x response${h2})`);
    }
    const searchFrom = Math.max(0, all.length - part.length - 3);
    let end = -1, bodyAt = -1;
    for (let k = all.indexOf(LF, searchFrom); k >= 0; k = all.indexOf(LF, k + 1)) {
      if (k >= 1 && all[k - 1] === LF) {
        end = k - 1;
        bodyAt = k + 1;
        break;
      }
      if (k >= 2 && all[k - 1] === CR && all[k - 2] === LF) {
        end = k - 2;
        bodyAt = k + 1;
        break;
      }
    }
    if (end < 0) {
      if (this.headLen > MAX_HEAD_BYTES) throw new H1ProtocolError(`response head over ${MAX_HEAD_BYTES / 1024} KiB`);
      if (this.head.length > 1) this.head = [all];
      return b.length;
    }
    if (end > MAX_HEAD_BYTES) throw new H1ProtocolError(`response head over ${MAX_HEAD_BYTES / 1024} KiB`);
    const head = parseHead(latin1(all.subarray(0, end)));
    // Where the body starts within `b`.
    const consumed = bodyAt - (all.length - part.length);
    this.head = [];
    this.headLen = 0;
    if (head.status >= 100 && head.status < 200 && head.status !== 101) {
      // An interim response (100 Continue, 103 Early Hints): the final one follows.
      return from + consumed;
    }
    if (head.status === 101) throw new H1ProtocolError("unexpected 101 Switching Protocols (ik never asks to upgrade)");
    // The head is not kept: the sink has it, and a stream's whole body would hold it (issue 21).
    this.framing = framingOf(head, this.noBody);
    this.sink.onHead(head, this.framing);
    switch (this.framing) {
      case "none":
        this.finish();
        break;
      case "length":
        this.left = Number(contentLength(head));
        if (this.left === 0) this.finish();
        else this.state = S.Length;
        break;
      case "chunked":
        this.line = "";
        this.left = 0;
        this.state = S.ChunkSize;
        break;
      case "close":
        this.state = S.Close;
        break;
    }
    return from + consumed;
  }

  private joined(): Uint8Array {
    const all = new Uint8Array(this.headLen);
    let o = 0;
    for (const c of this.head) {
      all.set(c, o);
      o += c.length;
    }
    return all;
  }

  /**
   * Reads a chunk-size line byte by byte from `b[i]` (no string per chunk: a stream of one-event
   * chunks has one per token): hex digits, optional spaces, an ignored `;extension`, CRLF or LF.
   * Returns where it stopped (`b.length` when the line goes on in the next push).
   */
  private sizeLine(b: Uint8Array, i: number): number {
    const start = i;
    for (; i < b.length; i++) {
      const c = b[i];
      if (++this.lineBytes > MAX_LINE_BYTES) throw new H1ProtocolError("malformed chunked body: chunk-size line over 4 KiB");
      if (c === LF) {
        if (this.sizeDigits === 0) throw this.badSize(b, start);
        this.state = this.left === 0 ? S.Trailer : S.ChunkData;
        this.sizeDigits = 0;
        this.sizeDone = false;
        this.inExt = false;
        this.lineBytes = 0;
        return i + 1;
      }
      if (this.inExt || c === CR) continue;
      const d = c >= 48 && c <= 57 ? c - 48 : (c | 32) >= 97 && (c | 32) <= 102 ? (c | 32) - 87 : -1;
      if (d >= 0 && !this.sizeDone) {
        // The value is bounded, not the digits: leading zeros are allowed (the line's own limit bounds them).
        this.sizeDigits++;
        this.left = this.left * 16 + d;
        if (this.left > MAX_CHUNK_SIZE) throw new H1ProtocolError("malformed chunked body: chunk size over 13 hex digits");
      } else if (c === 32 || c === 9) {
        if (this.sizeDigits > 0) this.sizeDone = true;
      } else if (c === 59 && this.sizeDigits > 0) this.inExt = true; // ";": an extension, ignored
      else throw this.badSize(b, start);
    }
    return i;
  }

  private badSize(b: Uint8Array, from: number): H1ProtocolError {
    let end = b.indexOf(LF, from);
    if (end < 0 || end - from > 40) end = Math.min(b.length, from + 40);
    const text = latin1(b.subarray(from, end)).replace(/\r$/, "").trim();
    return new H1ProtocolError(`malformed chunked body: chunk size '${text}' is not hexadecimal`);
  }
}
