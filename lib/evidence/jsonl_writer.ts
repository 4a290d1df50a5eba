/**
 * An append-only JSONL file kept open for a run: each line is handed to the kernel as soon as it
 * is written (one write per row, in order), so a crash loses nothing already measured and a load
 * level at thousands of requests per second does not open and close files per row.
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
import { outputError } from "./output_error.ts";
import { scrubJsonLine } from "./scrub.ts";

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
    const line = new TextEncoder().encode(scrubJsonLine(value) + "\n");
    this.#chain = this.#chain.then(() => this.#append(line));
  }

  /** Writes one whole line, or cuts a partial one back and records the failure. */
  async #append(line: Uint8Array): Promise<void> {
    if (this.#error !== null) return;
    try {
      let off = 0;
      // One write of the whole line; a short write (the kernel took what fitted) is continued,
      // and if the rest fails the line is cut off below.
      while (off < line.length) {
        const { bytesWritten } = await this.#fh.write(line, off, line.length - off);
        if (bytesWritten <= 0) throw Object.assign(new Error("short write"), { code: "EIO", syscall: "write" });
        off += bytesWritten;
      }
      this.#size += line.length;
      this.lines++;
    } catch (e) {
      await this.#fh.truncate(this.#size).catch(() => truncate(this.path, this.#size)).catch(() => {});
      this.#error = outputError(e, this.path);
      this.#onError?.(this.#error);
    }
  }

  /** Waits for every queued line. */
  flush(): Promise<void> {
    return this.#chain;
  }

  /** Writes what is queued and closes the file; raises the first write failure (exit 74). */
  async close(): Promise<void> {
    await this.#chain;
    await this.#fh.close().catch((e) => {
      this.#error ??= outputError(e, this.path);
    });
    if (this.#error !== null) throw this.#error;
  }
}
