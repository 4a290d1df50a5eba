/**
 * A hand-written Server-Sent Events parser (WHATWG "event stream interpretation"), tuned for the
 * one job ik gives it: turning an LLM server's stream into `data` payloads with as little work per
 * event as possible. It scans decoded text with `indexOf("\n")`, slices each `data` value once and
 * allocates nothing else per event; the consumer gets a callback, not an event object.
 *
 * Handles: LF, CRLF and lone CR line ends (also a CRLF split across two chunks), comments, `event:`,
 * `id:`, `retry:`, multi-line data (joined with "\n"), `data:` with or without the one optional
 * space, a field with no colon, a leading BOM, and UTF-8 sequences split across byte chunks (the
 * decoder runs in streaming mode). An unterminated final event is dropped, as the spec says.
 * @module
 */

/** Receives each dispatched event. */
export interface SseSink {
  /**
   * Called once per event that carried at least one `data` field.
   * @param data the data lines joined with "\n" (trailing spaces kept: trtllm writes `data: {...} `)
   * @param event the `event:` field, or "message" when there was none
   */
  onEvent(data: string, event: string): void;
}

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
const LOWER_D = 100;
const CR_ANY = /\r\n?/g;
const STREAM = { stream: true } as const;

/** An incremental SSE parser: push bytes (or text) as they arrive, get events through a sink. */
export class SseParser {
  private readonly sink: SseSink;
  private readonly decoder = new TextDecoder("utf-8");
  private rest = "";
  private data = "";
  private hasData = false;
  private event = "";
  private pendingCR = false;
  private started = false;
  /** The last `id:` seen (carried over events, as EventSource does). */
  lastEventId = "";
  /** The last valid `retry:` value in ms, or null. */
  retryMs: number | null = null;

  /** @param sink receives every dispatched event, synchronously, in order */
  constructor(sink: SseSink) {
    this.sink = sink;
  }

  /** Feeds raw bytes from the network; UTF-8 split across chunks is reassembled. */
  pushBytes(chunk: Uint8Array): void {
    this.pushText(this.decoder.decode(chunk, STREAM));
  }

  /** Feeds already-decoded text. */
  pushText(text: string): void {
    if (text.length === 0) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCR) {
      // The previous chunk ended in CR, already turned into LF: a following LF is the same line end.
      this.pendingCR = false;
      if (text.charCodeAt(0) === LF) text = text.slice(1);
    }
    if (text.indexOf("\r") !== -1) {
      this.pendingCR = text.charCodeAt(text.length - 1) === CR;
      text = text.replace(CR_ANY, "\n");
    }
    // `rest` never holds a line end, so a read without one only extends the pending line: append
    // without scanning (a multi-megabyte line split over many reads stays linear, not quadratic).
    const first = text.indexOf("\n");
    if (first === -1) {
      this.rest = this.rest.length === 0 ? text : this.rest + text;
      return;
    }
    const buf = this.rest.length === 0 ? text : this.rest + text;
    const len = buf.length;
    let pos = 0;
    let nl = this.rest.length + first;
    for (;;) {
      if (nl === pos) {
        this.dispatch();
      } else if (
        buf.charCodeAt(pos) === LOWER_D && buf.startsWith("data", pos) &&
        (nl === pos + 4 || buf.charCodeAt(pos + 4) === COLON)
      ) {
        let v = pos + 5;
        if (v < nl && buf.charCodeAt(v) === SPACE) v++;
        this.addData(v >= nl ? "" : buf.slice(v, nl));
      } else if (buf.charCodeAt(pos) !== COLON) {
        this.field(buf.slice(pos, nl));
      }
      pos = nl + 1;
      if (pos >= len) break;
      nl = buf.indexOf("\n", pos);
      if (nl === -1) break;
    }
    this.rest = pos >= len ? "" : buf.slice(pos);
  }

  /** Ends the stream: flushes the decoder; an event without its closing blank line is discarded. */
  end(): void {
    const tail = this.decoder.decode();
    if (tail) this.pushText(tail);
    this.rest = "";
    this.data = "";
    this.hasData = false;
    this.event = "";
  }

  /** True when bytes of an unfinished line or event are buffered (a stream cut mid-event). */
  get hasPartial(): boolean {
    return this.rest.length > 0 || this.hasData;
  }

  private addData(value: string): void {
    if (this.hasData) {
      this.data += "\n" + value;
    } else {
      this.data = value;
      this.hasData = true;
    }
  }

  private field(line: string): void {
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = "";
    if (colon !== -1) {
      value = line.charCodeAt(colon + 1) === SPACE ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    switch (name) {
      case "data":
        this.addData(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (value.indexOf("\0") === -1) this.lastEventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  private dispatch(): void {
    if (this.hasData) {
      const data = this.data;
      const event = this.event || "message";
      this.data = "";
      this.hasData = false;
      this.event = "";
      this.sink.onEvent(data, event);
    } else {
      this.event = "";
    }
  }
}
