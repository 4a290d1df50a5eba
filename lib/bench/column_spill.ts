/**
 * Where a load level's columns park their full chunks (metrics/column.ts, {@link ChunkSpill}): one
 * file in the run's folder, unlinked as soon as it is open, so it never shows in the store and a
 * killed run leaves nothing behind; the kernel frees it when the level closes it (or the process
 * ends). Only numbers go there (TTFT, TPOT, e2e, ITL, send lag), never text or a key.
 *
 * A chunk is copied and written in the background: the event loop that stamps tokens never waits
 * for the disk (a slow or network disk would otherwise block it for the write). The copy is kept
 * until its write has completed; a chunk whose write fails (a full or read-only disk) is kept in
 * memory for good, and no later chunk is tried: the run goes on as without a spill, and the
 * journal, which writes to the same disk, is what reports the full disk (exit 74). A chunk is read
 * back from its copy while its write is in flight, from the file after.
 * @module
 */
import { closeSync, openSync, readSync, unlinkSync, write } from "node:fs";
import type { ChunkSpill } from "../metrics/mod.ts";

let opened = 0;

/** node:fs `write` with a position: how a spill writes (a test may hand in one that fails). */
export type PositionalWrite = (
  fd: number,
  buf: Uint8Array,
  offset: number,
  length: number,
  position: number,
  done: (e: Error | null, written: number) => void,
) => void;

/** A {@link ChunkSpill} over one unlinked file. */
export class FileSpill implements ChunkSpill {
  #fd: number | null;
  /** The file's path while it could not be unlinked (removed on close), else null. */
  #path: string | null;
  /** Bytes handed out so far: the next chunk's offset in the file, and its handle. */
  #end = 0;
  /** A write has failed: no later chunk is parked (those parked before are still read back). */
  #refused = false;
  /** Copies of chunks whose write is in flight, or failed (then kept here for good), by handle. */
  readonly #held = new Map<number, Uint8Array>();
  /** Writes in flight, and who waits for them all to settle. */
  #inFlight = 0;
  #waiters: (() => void)[] = [];
  readonly #write: PositionalWrite;

  private constructor(fd: number, path: string | null, writeAt: PositionalWrite) {
    this.#fd = fd;
    this.#path = path;
    this.#write = writeAt;
  }

  /**
   * Opens a spill file in `dir` (owner-only), or returns null where none can be made there (the
   * columns then keep their values in memory).
   * @param dir the run's folder
   * @param tag a name part that tells levels (and shards) apart, made of letters, digits, `.` and `-`
   * @param writeAt how chunks are written (default node:fs `write`)
   */
  static open(dir: string, tag: string, writeAt: PositionalWrite = write): FileSpill | null {
    const path = `${dir}/.columns-${tag.replace(/[^A-Za-z0-9.-]/g, "_")}-${process.pid}-${++opened}`;
    let fd: number;
    try {
      fd = openSync(path, "wx+", 0o600);
    } catch {
      return null;
    }
    try {
      unlinkSync(path);
      return new FileSpill(fd, null, writeAt);
    } catch {
      return new FileSpill(fd, path, writeAt);
    }
  }

  /** Bytes parked so far (written, in flight, or kept after a failed write). */
  get bytes(): number {
    return this.#end;
  }

  /** Bytes kept in memory: chunks whose write is in flight or failed. */
  get heldBytes(): number {
    let n = 0;
    for (const b of this.#held.values()) n += b.byteLength;
    return n;
  }

  /**
   * Copies the chunk and starts its write; the handle is its offset in the file. Null once a
   * write has failed, or after close (the column then keeps the chunk itself).
   */
  park(bytes: Uint8Array): number | null {
    const fd = this.#fd;
    if (fd === null || this.#refused) return null;
    const at = this.#end;
    const copy = bytes.slice();
    this.#end = at + copy.byteLength;
    this.#held.set(at, copy);
    this.#inFlight++;
    const wrote = (done: number) => (e: Error | null, n: number) => {
      if (e === null && n > 0 && done + n < copy.byteLength) {
        this.#write(fd, copy, done + n, copy.byteLength - done - n, at + done + n, wrote(done + n));
        return;
      }
      if (e === null && n > 0) this.#held.delete(at);
      else this.#refused = true; // the copy stays in #held: the values are still there to read
      if (--this.#inFlight === 0) for (const w of this.#waiters.splice(0)) w();
    };
    this.#write(fd, copy, 0, copy.byteLength, at, wrote(0));
    return at;
  }

  /** Resolves when no write is in flight (then every parked chunk can be read back). */
  settled(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }

  /**
   * Reads back the chunk parked under `handle`: from memory while its write is in flight or after
   * it failed, else from the file. Throws, naming what failed, when it cannot.
   */
  read(handle: number, into: Uint8Array): void {
    const held = this.#held.get(handle);
    if (held !== undefined) {
      into.set(held.subarray(0, into.byteLength));
      return;
    }
    const fd = this.#fd;
    if (fd === null) throw new Error("ik: a level's parked column values cannot be read back: its spill file is already closed");
    for (let done = 0; done < into.byteLength;) {
      const n = readSync(fd, into, done, into.byteLength - done, handle + done);
      if (n <= 0) throw new Error(`ik: a level's parked column values cannot be read back: the spill file ended at byte ${handle + done} of ${this.#end}`);
      done += n;
    }
  }

  /**
   * Closes the file once its writes have settled (the kernel frees it); parks after this return
   * null. Safe to call twice.
   */
  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd === null) return;
    await this.settled();
    if (this.#fd === null) return;
    this.#fd = null;
    this.#held.clear();
    try {
      closeSync(fd);
    } catch { /* nothing kept in it is still needed */ }
    if (this.#path !== null) {
      try {
        unlinkSync(this.#path);
      } catch { /* already gone */ }
      this.#path = null;
    }
  }
}
