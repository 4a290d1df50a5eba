/**
 * An incremental HTTP/1.1 response parser (RFC 9112): the head (status line and header fields,
 * interim 1xx responses skipped), then the body framed by `transfer-encoding: chunked`,
 * `content-length` or the connection's close, handed on as views into the bytes it was given
 * (no copy). It never buffers body bytes; the head is capped at {@link MAX_HEAD_BYTES}.
 *
 * Lenient where real servers are (a bare LF ends a line, a missing reason phrase, chunk
 * extensions and trailers ignored), strict where a wrong guess would corrupt a measurement
 * (a malformed status line, a bad chunk size or content-length, two different lengths).
 * @module
 */

/** The longest response head accepted (status line plus header fields). */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The longest chunk-size or trailer line accepted. */
const MAX_LINE_BYTES = 4096;

/** A parsed response head. */
export interface ResponseHead {
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  status: number;
  reason: string;
  /** Header fields in arrival order, names as sent. */
  fields: [string, string][];
}

/** How a response's body is delimited. */
export type Framing = "none" | "length" | "chunked" | "close";

/** What the parser hands on. */
export interface ResponseSink {
  /** The final (non-1xx) head, with the framing the parser will apply. */
  onHead(head: ResponseHead, framing: Framing): void;
  /** Body bytes: a view valid until the next push (copy to keep it past that). */
  onData(bytes: Uint8Array): void;
  /** The body is complete. */
  onEnd(): void;
}

/** A response the parser cannot read: malformed, or cut short by the connection's close. */
export class H1ProtocolError extends Error {
  /** An OS-style code, so callers classify it as fetch's errors are: ECONNRESET for a cut-short body. */
  readonly code: string;
  constructor(message: string, code = "ERR_HTTP_PARSE") {
    super(message);
    this.name = "H1ProtocolError";
    this.code = code;
  }
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
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

/** Bytes as a latin1 string (each byte one char: header values are byte strings). */
function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  return s;
}

/** Parses one response after another on one connection (call {@link reset} between them). */
export class ResponseParser {
  private state = S.Head;
  private head: Uint8Array[] = [];
  private headLen = 0;
  /** The chunk-size or trailer line read so far (one may span pushes). */
  private line = "";
  private left = 0;
  private framing: Framing = "none";
  private noBody: boolean;
  /** The final head, once parsed. */
  result: ResponseHead | null = null;
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
    this.line = "";
    this.left = 0;
    this.framing = "none";
    this.noBody = isHead;
    this.result = null;
    this.extra = false;
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

  /** Feeds the bytes the connection delivered. Throws {@link H1ProtocolError} for a malformed response. */
  push(b: Uint8Array): void {
    let i = 0;
    const n = b.length;
    while (i < n) {
      switch (this.state) {
        case S.Head:
          i = this.pushHead(b, i);
          break;
        case S.Length: {
          const take = Math.min(this.left, n - i);
          this.left -= take;
          this.sink.onData(b.subarray(i, i + take));
          i += take;
          if (this.left === 0) this.finish();
          break;
        }
        case S.Close:
          this.sink.onData(i === 0 ? b : b.subarray(i));
          i = n;
          break;
        case S.ChunkSize: {
          const nl = b.indexOf(LF, i);
          const end = nl < 0 ? n : nl;
          this.line += latin1(b.subarray(i, end));
          if (this.line.length > MAX_LINE_BYTES) throw new H1ProtocolError("malformed chunked body: chunk-size line over 4 KiB");
          if (nl < 0) return;
          i = nl + 1;
          this.chunkSize();
          break;
        }
        case S.ChunkData: {
          const take = Math.min(this.left, n - i);
          this.left -= take;
          this.sink.onData(b.subarray(i, i + take));
          i += take;
          if (this.left === 0) this.state = S.ChunkDataEnd;
          break;
        }
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
    this.state = S.Done;
    this.sink.onEnd();
  }

  /** Collects head bytes up to the blank line; returns where the body starts in `b` (or b.length). */
  private pushHead(b: Uint8Array, from: number): number {
    // The blank line may span pushes: search from a few bytes before this push's start.
    const part = from === 0 ? b : b.subarray(from);
    this.head.push(part);
    this.headLen += part.length;
    const all = this.head.length === 1 ? part : this.joined();
    if (all.length >= 5 && !(all[0] === 72 && all[1] === 84 && all[2] === 84 && all[3] === 80 && all[4] === 47)) {
      throw new H1ProtocolError(`malformed status line '${latin1(all.subarray(0, Math.min(all.length, 40))).replace(/[^\x20-\x7e]/g, "?")}' (not an HTTP/1.x response)`);
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
    this.result = head;
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

  private chunkSize(): void {
    let line = this.line;
    this.line = "";
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const semi = line.indexOf(";");
    const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
    if (!/^[0-9A-Fa-f]{1,13}$/.test(hex)) throw new H1ProtocolError(`malformed chunked body: chunk size '${hex.slice(0, 40)}' is not hexadecimal`);
    const size = parseInt(hex, 16);
    if (size === 0) this.state = S.Trailer;
    else {
      this.left = size;
      this.state = S.ChunkData;
    }
  }
}

/** Parses a head's text (without its blank line). */
function parseHead(text: string): ResponseHead {
  const lines = text.split("\n");
  const first = lines[0].endsWith("\r") ? lines[0].slice(0, -1) : lines[0];
  const m = STATUS_LINE.exec(first);
  if (!m) throw new H1ProtocolError(`malformed status line '${first.slice(0, 60)}' (not an HTTP/1.x response)`);
  const fields: [string, string][] = [];
  for (let k = 1; k < lines.length; k++) {
    let l = lines[k];
    if (l.endsWith("\r")) l = l.slice(0, -1);
    if (l === "") continue;
    if ((l[0] === " " || l[0] === "\t") && fields.length) {
      // obs-fold: a continuation of the previous field's value.
      fields[fields.length - 1][1] += " " + l.trim();
      continue;
    }
    const colon = l.indexOf(":");
    const name = colon > 0 ? l.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new H1ProtocolError(`malformed header line '${l.slice(0, 60)}'`);
    fields.push([name, l.slice(colon + 1).trim()]);
  }
  return { minor: m[1] === "0" ? 0 : 1, status: Number(m[2]), reason: m[3] ?? "", fields };
}

/** All values of a field (case-insensitive name), comma lists split. */
function values(head: ResponseHead, name: string): string[] {
  const out: string[] = [];
  for (const [k, v] of head.fields) {
    if (k.length === name.length && k.toLowerCase() === name) for (const p of v.split(",")) if (p.trim() !== "") out.push(p.trim());
  }
  return out;
}

/** The content-length, or null when absent. Throws for a malformed one or two that differ. */
function contentLength(head: ResponseHead): string | null {
  const all = values(head, "content-length");
  if (all.length === 0) return null;
  for (const v of all) if (!/^\d{1,15}$/.test(v)) throw new H1ProtocolError(`malformed content-length '${v.slice(0, 40)}'`);
  if (all.some((v) => Number(v) !== Number(all[0]))) throw new H1ProtocolError(`conflicting content-length values (${all.slice(0, 4).join(", ")})`);
  return all[0];
}

/** How the body of `head` is delimited (RFC 9112 §6.3). */
export function framingOf(head: ResponseHead, isHeadRequest: boolean): Framing {
  // 205 Reset Content has no content either (RFC 9110 §15.3.6).
  if (isHeadRequest || head.status === 204 || head.status === 205 || head.status === 304) return "none";
  const te = values(head, "transfer-encoding");
  if (te.length) return te[te.length - 1].toLowerCase() === "chunked" ? "chunked" : "close";
  return contentLength(head) === null ? "close" : "length";
}

/** Whether the connection may carry another request after this response (HTTP/1.1 persistence). */
export function keepsAlive(head: ResponseHead, framing: Framing): boolean {
  if (framing === "close") return false;
  const conn = values(head, "connection").map((v) => v.toLowerCase());
  if (conn.includes("close")) return false;
  if (head.minor === 0) return conn.includes("keep-alive");
  // Both a transfer-encoding and a content-length: a smuggling shape; do not reuse.
  return !(values(head, "transfer-encoding").length && values(head, "content-length").length);
}
