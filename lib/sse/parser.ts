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
 *
 * Memory is bounded: one line (and one event's data) may hold at most `maxLineBytes` (default
 * MAX_SSE_LINE_BYTES, 64 MiB). Past it the parser drops what it buffered, ignores the rest of the
 * stream and tells the sink once through `onOverflow`, so a server that never sends a newline
 * cannot take the machine.
 * @module
 */
import { MAX_SSE_LINE_BYTES } from "../cli/limits.ts";

/** Receives each dispatched event. */
export interface SseSink {
  /**
   * Called once per event that carried at least one `data` field.
   * @param data the data lines joined with "\n" (trailing spaces kept: trtllm writes `data: {...} `)
   * @param event the `event:` field, or "message" when there was none
   */
  onEvent(data: string, event: string): void;
  /**
   * Optional: an event's data offered as bytes before any text is made of it (`bytes[start, end)`,
   * UTF-8; the event was one `data:` line and nothing else). True when the sink took it, with the
   * effect {@link onEvent} would have had; false: the parser decodes it and calls {@link onEvent}.
   * Offered only for the whole such events a read starts with, and only while nothing is pending
   * between reads. The bytes are the runtime's: read them during the call only.
   */
  onDataBytes?(bytes: Uint8Array, start: number, end: number): boolean;
  /**
   * Called once when a line or an event's data grows past the cap; nothing is parsed after it.
   * @param message e.g. "SSE line over 64 MiB"
   */
  onOverflow?(message: string): void;
}

/** Options for {@link SseParser}. */
export interface SseParserOptions {
  /** The longest line, and the most data one event may collect, in bytes (default 64 MiB). */
  maxLineBytes?: number;
}

/** "64 MiB" for whole MiB, else "N bytes": how a cap is named in messages. */
export function formatByteCap(bytes: number): string {
  const mib = 1024 * 1024;
  return bytes >= mib && bytes % mib === 0 ? `${bytes / mib} MiB` : `${bytes} bytes`;
}

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
const LOWER_D = 100;
const CR_ANY = /\r\n?/g;
const STREAM = { stream: true } as const;
/** The bytes `data:`. */
const DATA_COLON = [100, 97, 116, 97, 58];
/** The first byte of a UTF-8 BOM (EF BB BF). */
const BOM_FIRST_BYTE = 0xef;
/**
 * Decodes reads that end on a UTF-8 sequence boundary (nearly all of them), for every parser: a
 * decoder per stream is one more object and its native state for each open stream (issue 21). It
 * keeps a BOM: only the stream's start drops one (the first read's bytes, or a stream decoder).
 */
const WHOLE = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * True when `b` ends inside a UTF-8 sequence: a lead byte among its last three bytes with fewer
 * bytes after it than the sequence needs (then a streaming decoder must hold the tail).
 */
function endsMidSequence(b: Uint8Array): boolean {
  const n = b.length;
  for (let k = 1; k <= 3 && k <= n; k++) {
    const c = b[n - k];
    if (c < 0x80) return false;
    if (c < 0xc0) continue;
    const need = c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf8 ? 4 : 1;
    return need > k;
  }
  return false;
}

/** An incremental SSE parser: push bytes (or text) as they arrive, get events through a sink. */
export class SseParser {
  private readonly sink: SseSink;
  /** A streaming decoder while a UTF-8 sequence is split across reads, else null: reads go through {@link WHOLE}. */
  private decoder: TextDecoder | null = null;
  /** The stream's start is settled: its BOM, if any, dropped (only there). */
  private begun = false;
  /** The stream's first one or two bytes while they may still be the start of a BOM. */
  private lead: Uint8Array | null = null;
  private rest = "";
  private data = "";
  private hasData = false;
  private event = "";
  private pendingCR = false;
  private started = false;
  private readonly maxLine: number;
  /** Bytes (pushBytes) or characters (pushText) of the unfinished line so far. */
  private lineSize = 0;
  /** Set once the cap was passed: everything after is ignored. */
  overflowed: string | null = null;
  /** The last `id:` seen (carried over events, as EventSource does). */
  lastEventId = "";
  /** The last valid `retry:` value in ms, or null. */
  retryMs: number | null = null;
  /** Events the sink took as bytes ({@link SseSink.onDataBytes}): no text was made of them. */
  eventsFromBytes = 0;
  /**
   * Nothing is pending between reads: the stream's start (a BOM) is behind, no bytes are held by a
   * decoder, no partial line, field or event, no CR that a next LF would complete. Only then may a
   * read be taken as whole events.
   */
  private clean = false;

  /**
   * @param sink receives every dispatched event, synchronously, in order
   * @param opts the line cap
   */
  constructor(sink: SseSink, opts: SseParserOptions = {}) {
    this.sink = sink;
    this.maxLine = opts.maxLineBytes ?? MAX_SSE_LINE_BYTES;
  }

  /** Feeds raw bytes from the network; UTF-8 split across chunks is reassembled. */
  pushBytes(chunk: Uint8Array): void {
    if (this.overflowed !== null) return;
    if (!this.begun && !this.started && this.lead === null && chunk.length !== 0 && chunk[0] !== BOM_FIRST_BYTE) {
      // The stream's first read, and it cannot start a BOM: its start is settled with nothing
      // pending, so its whole events may go as bytes too. (A short response often comes in one read:
      // every event of it went the text way, decoded and parsed, before.)
      this.begun = this.started = this.clean = true;
    }
    const from = this.clean && this.sink.onDataBytes !== undefined ? this.wholeEvents(chunk) : 0;
    if (from === chunk.length) return;
    this.pushDecoded(from === 0 ? chunk : chunk.subarray(from));
    // (A held start of a BOM, `lead`, is only there before `begun`.)
    this.clean = this.begun && this.decoder === null && this.rest.length === 0 &&
      !this.hasData && this.event === "" && !this.pendingCR && this.overflowed === null;
  }

  /**
   * Offers the whole events the read starts with to the sink as bytes: each one `data:` line (at
   * most one space after the colon, no CR, within the cap) and a blank line (LF LF). One the sink
   * declines is decoded and dispatched as text. Returns where the first byte that is not such an
   * event is: the rest goes the general way, from a state with nothing pending (as if the read had
   * been cut there, on an ASCII boundary).
   */
  private wholeEvents(chunk: Uint8Array): number {
    const len = chunk.length, sink = this.sink, take = sink.onDataBytes!;
    let cr = chunk.indexOf(CR);
    if (cr === -1) cr = len;
    let pos = 0;
    while (pos + 7 <= len) {
      for (let k = 0; k < 5; k++) if (chunk[pos + k] !== DATA_COLON[k]) return pos;
      let v = pos + 5;
      if (chunk[v] === SPACE) v++;
      const nl = chunk.indexOf(LF, v);
      if (nl === -1 || nl + 1 >= len || chunk[nl + 1] !== LF || nl + 2 > cr || nl - pos > this.maxLine) return pos;
      this.lineSize = 0;
      if (take.call(sink, chunk, v, nl)) this.eventsFromBytes++;
      else sink.onEvent(v === nl ? "" : WHOLE.decode(chunk.subarray(v, nl)), "message");
      pos = nl + 2;
    }
    return pos;
  }

  /** The general path: decodes the read (UTF-8 split across reads reassembled) and parses its text. */
  private pushDecoded(chunk: Uint8Array): void {
    // Count the unfinished line in bytes before decoding, so the cap holds before memory is spent.
    const lf = chunk.indexOf(LF);
    const cr = chunk.indexOf(CR);
    const first = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
    const last = first === -1 ? -1 : Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
    if (!this.measure(chunk.length, first, last)) return;
    this.feed(this.decode(chunk));
  }

  /**
   * One read's text, as one streaming UTF-8 decoder over the whole stream gives it (a BOM dropped at
   * the stream's start only: here, byte by byte, not by the runtime's decoder, whose handling of a
   * BOM split across calls differs between runtimes).
   */
  private decode(chunk: Uint8Array): string {
    if (!this.begun) {
      if (this.lead !== null) {
        const joined = new Uint8Array(this.lead.length + chunk.length);
        joined.set(this.lead);
        joined.set(chunk, this.lead.length);
        chunk = joined;
        this.lead = null;
      }
      if (chunk.length < 3 && (chunk.length === 0 || (chunk[0] === 0xef && (chunk.length === 1 || chunk[1] === 0xbb)))) {
        if (chunk.length > 0) this.lead = chunk.slice();
        return "";
      }
      this.begun = true;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
    }
    if (chunk.length === 0) return "";
    let d = this.decoder;
    if (d === null) {
      if (!endsMidSequence(chunk)) return WHOLE.decode(chunk);
      d = this.decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    }
    const text = d.decode(chunk, STREAM);
    // Nothing is held once a read of 3 bytes or more ends on a boundary (a sequence is at most 4
    // bytes): back to the shared decoder. A shorter read may be finishing a held sequence.
    if (chunk.length >= 3 && !endsMidSequence(chunk)) this.decoder = null;
    return text;
  }

  /** Feeds already-decoded text (the cap counts characters here). */
  pushText(text: string): void {
    if (this.overflowed !== null) return;
    this.clean = false;
    const lf = text.indexOf("\n");
    const cr = text.indexOf("\r");
    const first = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
    const last = first === -1 ? -1 : Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
    if (!this.measure(text.length, first, last)) return;
    this.feed(text);
  }

  /**
   * Tracks the size of the unfinished line across pushes; false (after overflowing) when the line
   * the chunk completes, or the one it leaves open, is over the cap. Lines wholly inside one chunk
   * are checked while parsing.
   */
  private measure(len: number, first: number, last: number): boolean {
    if (first === -1) {
      this.lineSize += len;
    } else {
      if (this.lineSize + first > this.maxLine) {
        this.overflow("line");
        return false;
      }
      this.lineSize = len - last - 1;
    }
    if (this.lineSize > this.maxLine) {
      this.overflow("line");
      return false;
    }
    return true;
  }

  private overflow(what: "line" | "event"): void {
    this.overflowed = `SSE ${what} over ${formatByteCap(this.maxLine)}`;
    this.rest = "";
    this.data = "";
    this.hasData = false;
    this.sink.onOverflow?.(this.overflowed);
  }

  private feed(text: string): void {
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
      if (nl - pos > this.maxLine) return this.overflow("line");
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
      if (this.overflowed !== null) return;
      pos = nl + 1;
      if (pos >= len) break;
      nl = buf.indexOf("\n", pos);
      if (nl === -1) break;
    }
    this.rest = pos >= len ? "" : buf.slice(pos);
  }

  /** Ends the stream: flushes the decoder; an event without its closing blank line is discarded. */
  end(): void {
    this.clean = false;
    // What is still held: a sequence cut by the end, or a start too short to be a BOM (U+FFFD each).
    const tail = this.lead !== null ? WHOLE.decode(this.lead) : this.decoder?.decode() ?? "";
    this.decoder = null;
    this.lead = null;
    if (tail && this.overflowed === null) this.feed(tail);
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
      // Many lines of one event add up too (UTF-16 length never exceeds the UTF-8 bytes).
      if (this.data.length + 1 + value.length > this.maxLine) return this.overflow("event");
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
      case "error":
        // Not an SSE field: llama.cpp builds whose server_sent_event(sink, "error", …) wrote a
        // stream's error as an `error: {json}` line (then `data: [DONE]`). Read as `event: error`
        // with that data, so the server's failure is not lost among ignored fields.
        this.event = "error";
        this.addData(value);
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
