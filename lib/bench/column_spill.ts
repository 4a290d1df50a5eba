/**
 * Where a load level's columns park their full chunks (metrics/column.ts, {@link ChunkSpill}): one
 * file in the run's folder, unlinked as soon as it is open, so it never shows in the store and a
 * killed run leaves nothing behind; the kernel frees it when the level closes it (or the process
 * ends). Only numbers go there (TTFT, TPOT, e2e, ITL, send lag), never text or a key.
 *
 * A chunk that cannot be written (a full or read-only disk) stays in the column's memory and no
 * later chunk is tried: the run goes on as without a spill, and the journal, which writes to the
 * same disk, is what reports the full disk (exit 74).
 * @module
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import type { ChunkSpill } from "../metrics/mod.ts";

let opened = 0;

/** A {@link ChunkSpill} over one unlinked file. */
export class FileSpill implements ChunkSpill {
  #fd: number | null;
  /** The file's path while it could not be unlinked (removed on close), else null. */
  #path: string | null;
  /** Bytes written so far: the next chunk's offset, and its handle. */
  #end = 0;
  /** A write has failed: no later chunk is parked (those parked before are still read back). */
  #refused = false;

  private constructor(fd: number, path: string | null) {
    this.#fd = fd;
    this.#path = path;
  }

  /**
   * Opens a spill file in `dir` (owner-only), or returns null where none can be made there (the
   * columns then keep their values in memory).
   * @param dir the run's folder
   * @param tag a name part that tells levels (and shards) apart, made of letters, digits, `.` and `-`
   */
  static open(dir: string, tag: string): FileSpill | null {
    const path = `${dir}/.columns-${tag.replace(/[^A-Za-z0-9.-]/g, "_")}-${process.pid}-${++opened}`;
    let fd: number;
    try {
      fd = openSync(path, "wx+", 0o600);
    } catch {
      return null;
    }
    try {
      unlinkSync(path);
      return new FileSpill(fd, null);
    } catch {
      return new FileSpill(fd, path);
    }
  }

  /** Bytes parked so far. */
  get bytes(): number {
    return this.#end;
  }

  /** Appends the chunk; its offset in the file is its handle. Null when the write fails, and for every chunk after that. */
  park(bytes: Uint8Array): number | null {
    const fd = this.#fd;
    if (fd === null || this.#refused) return null;
    const at = this.#end;
    try {
      for (let done = 0; done < bytes.byteLength;) done += writeSync(fd, bytes, done, bytes.byteLength - done, at + done);
    } catch {
      this.#refused = true;
      return null;
    }
    this.#end = at + bytes.byteLength;
    return at;
  }

  /** Reads back the chunk parked at `handle`; throws, naming what failed, when it cannot. */
  read(handle: number, into: Uint8Array): void {
    const fd = this.#fd;
    if (fd === null) throw new Error("ik: a level's parked column values cannot be read back: its spill file is already closed");
    for (let done = 0; done < into.byteLength;) {
      const n = readSync(fd, into, done, into.byteLength - done, handle + done);
      if (n <= 0) throw new Error(`ik: a level's parked column values cannot be read back: the spill file ended at byte ${handle + done} of ${this.#end}`);
      done += n;
    }
  }

  /** Closes the file (the kernel frees it); later parks return null. Safe to call twice. */
  close(): void {
    const fd = this.#fd;
    if (fd === null) return;
    this.#fd = null;
    try {
      closeSync(fd);
    } catch { /* nothing was kept in it that is still needed */ }
    if (this.#path !== null) {
      try {
        unlinkSync(this.#path);
      } catch { /* already gone */ }
      this.#path = null;
    }
  }
}
