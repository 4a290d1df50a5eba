/**
 * An append-only JSONL file kept open for a run: lines are handed to the kernel in order, in
 * batches, within about {@link FLUSH_MS} of being written, so a crash loses at most the last few
 * milliseconds measured, and a load level at thousands of requests per second neither opens and
 * closes files per row nor writes each row on its own.
 *
 * Rows are turned into JSON off the turn that wrote them: a burst of completions (256 streams of
 * the same length ending together) would otherwise block the event loop for tens of ms with JSON
 * and the scrubber, and every token that arrives meanwhile would be stamped late. Queued rows are
 * encoded on later turns under the budget all deferred work shares (lib/executors/turn_work.ts:
 * every writer and the completion queue together, 2 ms a turn, the sockets read in between), and
 * written with their neighbours in one write; past {@link MAX_PENDING} queued rows the writer
 * encodes inline, so memory stays bounded. A queued value must not change after write().
 *
 * The file only ever holds whole lines: a write that fails part way (a full disk takes what fits,
 * then says ENOSPC) is cut back to the end of the last whole line. After the first failure no
 * more lines are written, and `onError` is told once (the run stops sending on it, CONTRACTS.md
 * exit 74).
 * @module
 */
import { type FileHandle, mkdir, open, truncate } from "node:fs/promises";
import { dirname } from "node:path";
import type { IkError } from "../cli/errors.ts";
import { TURN_WORK } from "../executors/turn_work.ts";
import { outputError } from "./output_error.ts";
import { scrubJsonLine } from "./scrub.ts";

/**
 * How long an encoded row may wait to be written with the rows after it, ms. Rows are still encoded
 * a few at a time on each turn (small blocks of the loop), but written in batches: at 3,000
 * req/s a write per turn (1 ms on Bun) was about a thousand writes a second per file, each a hand-off
 * to the runtime's file threads that cost the loop's thread about 10 µs and woke another thread on
 * the client's cores.
 */
export const FLUSH_MS = 10;
/** Queued rows past which write() encodes at once (bounded memory when the producer outruns the timer). */
export const MAX_PENDING = 2048;

const encoder = new TextEncoder();
const NEWLINE = 10;
/** Batch buffers kept for reuse once written: one being filled while another's write is in flight, and one more. */
const SPARE_BUFFERS = 2;
/** Bounds of a batch buffer's starting size (it grows when a batch needs more). */
export const MIN_START_BYTES = 4096;
const MAX_START_BYTES = 1 << 20;

/** A row built only when it is encoded (see {@link JsonlWriter.writeLazy}). */
class Lazy {
  constructor(readonly make: () => unknown) {}
}

/** Options of {@link JsonlWriter.open}. */
export interface JsonlWriterOptions {
  /** Called once, with the exit-74 error naming the file, on the first failed write. */
  onError?: (e: IkError) => void;
}

/** An open JSONL appender. */
export class JsonlWriter {
  #fh: FileHandle;
  #chain: Promise<void> = Promise.resolve();
  #error: IkError | null = null;
  /** Bytes of whole lines in the file: where a failed write is cut back to. */
  #size: number;
  #onError?: (e: IkError) => void;
  /** Whole lines on disk (written by this writer). */
  lines = 0;
  /** Rows written but not yet encoded (values, or Lazy builders). */
  #pending: unknown[] = [];
  /** This writer's share of the turn work: encodes until the turn's budget is spent. */
  readonly #slice = (untilMs: number): boolean => {
    this.#encode(untilMs);
    return this.#pending.length > 0 && this.#error === null;
  };
  /** Encoded lines not yet handed to a write: the buffer, bytes used, each line's end offset. */
  #batch: { buf: Uint8Array; used: number; ends: number[] } | null = null;
  /** The open batch's write, due {@link FLUSH_MS} after its first line. */
  #sealTimer: ReturnType<typeof setTimeout> | null = null;
  /** Starting size of the next batch's buffer. */
  #batchBytes = MIN_START_BYTES;
  /**
   * Batch buffers whose write has completed, for the next batches (at most {@link SPARE_BUFFERS}):
   * a buffer per batch was about as many bytes of garbage as the file's lines (~2.6 KB a request
   * over a level's three files), every one of them counted towards the next young collection.
   */
  #spare: Uint8Array[] = [];
  /** Batch buffers this writer has made (the rest were reused). */
  buffersMade = 0;

  private constructor(fh: FileHandle, readonly path: string, size: number, opts: JsonlWriterOptions) {
    this.#fh = fh;
    this.#size = size;
    this.#onError = opts.onError;
  }

  /** Opens (creating, 0600, parents 0700) a file for appending; an output failure is exit 74. */
  static async open(path: string, opts: JsonlWriterOptions = {}): Promise<JsonlWriter> {
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const fh = await open(path, "a", 0o600);
      return new JsonlWriter(fh, path, (await fh.stat()).size, opts);
    } catch (e) {
      throw outputError(e, path);
    }
  }

  /** The first write failure (exit 74, naming the file), or null. */
  get failed(): IkError | null {
    return this.#error;
  }

  /**
   * Queues one line (written in call order); once a write has failed, later lines are dropped and
   * close() raises the failure. The line goes through the scrubber (secret-looking keys, this
   * run's secret values).
   */
  write(value: unknown): void {
    if (this.#error !== null) return;
    this.#pending.push(value);
    this.#queued();
  }

  /**
   * As {@link write}, with the row built by `make` only when it is encoded (off the writer's turn):
   * for rows that cost something to build. `make` must read only what no longer changes.
   */
  writeLazy(make: () => unknown): void {
    if (this.#error !== null) return;
    this.#pending.push(new Lazy(make));
    this.#queued();
  }

  #queued(): void {
    if (this.#pending.length >= MAX_PENDING) return this.#encode(Infinity);
    TURN_WORK.schedule(this.#slice);
  }

  /**
   * Encodes queued rows until `untilMs` on performance.now (at least one) into the open batch. The lines go
   * straight into the batch's one buffer (UTF-8, each with its newline): no array per line and no
   * joining copy, which at thousands of rows a second was most of what the writer allocated. The
   * batch is written {@link FLUSH_MS} after its first line (or at once when it has grown large).
   */
  #encode(untilMs: number): void {
    if (!this.#pending.length) return;
    const b = this.#batch ??= { buf: this.#freshBuffer(), used: 0, ends: [] };
    let i = 0;
    do {
      const v = this.#pending[i++];
      const line = scrubJsonLine(v instanceof Lazy ? v.make() : v);
      let from = 0;
      for (;;) {
        const r = encoder.encodeInto(from === 0 ? line : line.slice(from), b.buf.subarray(b.used));
        b.used += r.written;
        from += r.read;
        // The newline needs a byte of its own after the line.
        if (from === line.length && b.used < b.buf.length) break;
        // Out of room: a bigger buffer (a UTF-16 unit is at most 3 bytes), and the line goes on.
        const next = new Uint8Array(Math.max(b.buf.length * 2, b.used + (line.length - from) * 3 + 1));
        next.set(b.buf.subarray(0, b.used));
        b.buf = next;
      }
      b.buf[b.used++] = NEWLINE;
      b.ends.push(b.used);
    } while (i < this.#pending.length && performance.now() < untilMs);
    this.#pending = i === this.#pending.length ? [] : this.#pending.slice(i);
    if (b.used >= MAX_START_BYTES || !Number.isFinite(untilMs)) this.#seal();
    else if (this.#sealTimer === null) this.#sealTimer = setTimeout(() => this.#seal(), FLUSH_MS);
  }

  /** Queues the open batch's write. */
  #seal(): void {
    if (this.#sealTimer !== null) clearTimeout(this.#sealTimer);
    this.#sealTimer = null;
    const b = this.#batch;
    this.#batch = null;
    if (b === null || b.used === 0) return;
    // The next batch starts at about this one's size (within bounds), so most batches never grow.
    this.#batchBytes = Math.min(MAX_START_BYTES, Math.max(MIN_START_BYTES, b.used));
    // A buffer that grew for one long line can be far larger than the batch: only the batch waits
    // (a copy), and the buffer is free at once; otherwise it is free when its write has completed.
    const buf = b.buf;
    const copied = b.used * 2 < buf.length;
    const bytes = copied ? buf.slice(0, b.used) : buf.subarray(0, b.used);
    if (copied) this.#recycle(buf);
    const ends = b.ends;
    this.#chain = this.#chain.then(() => this.#append(bytes, ends)).then(() => {
      if (!copied) this.#recycle(buf);
    });
  }

  /** A buffer for the next batch: a spare one of about its size, else a new one. */
  #freshBuffer(): Uint8Array {
    const want = this.#batchBytes;
    for (let i = 0; i < this.#spare.length; i++) {
      const b = this.#spare[i];
      if (b.length >= want && b.length <= want * 4) {
        this.#spare.splice(i, 1);
        return b;
      }
    }
    this.buffersMade++;
    return new Uint8Array(want);
  }

  /** Keeps a buffer whose bytes are no longer needed for a later batch (a few, none over MAX_START_BYTES). */
  #recycle(buf: Uint8Array): void {
    if (this.#spare.length < SPARE_BUFFERS && buf.length <= MAX_START_BYTES) this.#spare.push(buf);
  }

  /**
   * Writes whole lines (`ends`: the byte offset after each line), or cuts a partial one back to the
   * last whole line and records the failure.
   */
  async #append(buf: Uint8Array, ends: number[]): Promise<void> {
    if (this.#error !== null) return;
    let off = 0;
    try {
      // One write of the lines; a short write (the kernel took what fitted) is continued, and if
      // the rest fails the file is cut back to its last whole line below.
      while (off < buf.length) {
        const { bytesWritten } = await this.#fh.write(buf, off, buf.length - off);
        if (bytesWritten <= 0) throw Object.assign(new Error("short write"), { code: "EIO", syscall: "write" });
        off += bytesWritten;
      }
      this.#size += buf.length;
      this.lines += ends.length;
    } catch (e) {
      // The lines that reached the file whole stay; a torn one is cut off. A runtime may throw
      // without saying what it wrote first (Deno's write loops until done): the file's size says.
      const onDisk = await this.#fh.stat().then((st) => st.size - this.#size, () => off);
      if (onDisk > off) off = Math.min(onDisk, buf.length);
      let whole = 0;
      for (const end of ends) {
        if (end > off) break;
        whole = end;
        this.lines++;
      }
      this.#size += whole;
      await this.#fh.truncate(this.#size).catch(() => truncate(this.path, this.#size)).catch(() => {});
      this.#error = outputError(e, this.path);
      this.#onError?.(this.#error);
    }
  }

  /** Encodes every queued row now and waits until all are written. */
  flush(): Promise<void> {
    this.#encode(Infinity);
    this.#seal();
    return this.#chain;
  }

  /** Writes what is queued and closes the file; raises the first write failure (exit 74). */
  async close(): Promise<void> {
    this.#encode(Infinity);
    this.#seal();
    await this.#chain;
    await this.#fh.close().catch((e) => {
      this.#error ??= outputError(e, this.path);
    });
    if (this.#error !== null) throw this.#error;
  }
}
