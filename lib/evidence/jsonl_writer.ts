/**
 * An append-only JSONL file kept open for a run: each line is handed to the kernel as soon as it
 * is written (one write per row, in order), so a crash loses nothing already measured and a load
 * level at thousands of requests per second does not open and close files per row.
 * @module
 */
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { scrubJsonLine } from "./scrub.ts";

/** An open JSONL appender. */
export class JsonlWriter {
  #fh: FileHandle;
  #chain: Promise<void> = Promise.resolve();
  #error: unknown = null;
  /** Lines written. */
  lines = 0;

  private constructor(fh: FileHandle, readonly path: string) {
    this.#fh = fh;
  }

  /** Opens (creating, 0600, parents 0700) a file for appending. */
  static async open(path: string): Promise<JsonlWriter> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    return new JsonlWriter(await open(path, "a", 0o600), path);
  }

  /**
   * Queues one line (written in call order); the first write error is raised by close(). The line
   * goes through the scrubber (secret-looking keys, this run's secret values).
   */
  write(value: unknown): void {
    const line = scrubJsonLine(value) + "\n";
    this.lines++;
    this.#chain = this.#chain.then(async () => {
      if (this.#error === null) await this.#fh.write(line);
    }).catch((e) => {
      this.#error ??= e;
    });
  }

  /** Waits for every queued line. */
  flush(): Promise<void> {
    return this.#chain;
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    await this.#chain;
    await this.#fh.close();
    if (this.#error !== null) throw this.#error;
  }
}
