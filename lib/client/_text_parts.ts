/**
 * A response's text, built from its token events' small pieces (see {@link TextParts}).
 * @module
 */

/** Pieces joined into one flat segment at a time (the string mode). */
export const PIECES_PER_SEGMENT = 64;
/** Bytes a text buffer starts with (a 256-token answer of English fits). */
export const TEXT_BUFFER_BYTES = 2048;
/** The largest buffer given back to the pool; a larger one is left to the collector. */
const MAX_POOLED_BYTES = 16 * 1024;
/** The most bytes the pool keeps in all (it holds no more buffers than texts were read at once). */
const MAX_POOL_BYTES = 8 * 1024 * 1024;

const encoder = new TextEncoder();
// ignoreBOM: a text that begins with U+FEFF keeps it (a plain decoder would drop it).
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const pool: Uint8Array[] = [];
let poolBytes = 0;

/** Buffers waiting in the pool (for tests and benchmarks). */
export function pooledTextBuffers(): number {
  return pool.length;
}

/** Bytes of the buffers waiting in the pool (for tests and benchmarks). */
export function pooledTextBytes(): number {
  return poolBytes;
}

/**
 * An append-only text made of many small pieces.
 *
 * While it streams, the text is kept as UTF-8 bytes in one buffer from a process-wide pool, and
 * decoded once when read: no piece string outlives its event. Kept as strings, every piece and
 * segment of a request lives long enough to be promoted by the collector (a request lives seconds,
 * young collections come every ~100 ms), and promoted garbage is freed only by a full collection:
 * ~8 KB a request at 256 tokens, ~3 MB of peak RSS per KB at 1,000 streams (issue 21). The buffer goes
 * back to the pool when the text is read, so a closed loop reuses the same buffers request after
 * request; a buffer outgrown while streaming is left to the collector, so the pool never holds more
 * buffers than texts were read at once (and never more than 8 MB).
 *
 * A piece that is not well-formed UTF-16 (a lone surrogate: a server that split a surrogate pair
 * across events as `\ud83d` escapes) turns the text into strings for good, so every code unit is kept
 * exactly: pieces joined into one flat segment every {@link PIECES_PER_SEGMENT} (a string per piece
 * under a rope would keep every piece alive until the end).
 */
export class TextParts {
  /** UTF-8 of the text so far (the bytes mode), or null. */
  private bytes: Uint8Array | null = null;
  private used = 0;
  /** The string mode: flat segments, and the pieces since the last one. */
  private segments: string[] | null = null;
  private pieces: string[] | null = null;
  /** Strings for good: once read, or after a piece that is not well-formed. */
  private strings = false;
  /** UTF-16 length of the whole text so far. */
  length = 0;

  /** Appends one piece (an empty one changes nothing). */
  append(piece: string): void {
    const len = piece.length;
    if (len === 0) return;
    this.length += len;
    if (!this.strings) {
      let b = this.bytes;
      if (b === null || b.length - this.used < len * 3) b = this.room(len * 3);
      let n = this.used, i = 0;
      for (; i < len; i++) {
        const c = piece.charCodeAt(i);
        if (c >= 0x80) break;
        b[n++] = c;
      }
      if (i === len) {
        this.used = n;
        return;
      }
      if (piece.isWellFormed()) {
        this.used = n + encoder.encodeInto(i === 0 ? piece : piece.slice(i), b.subarray(n)).written;
        return;
      }
      // The ASCII head written above is dropped with the rest of this piece: the piece goes whole.
      this.toStrings();
    }
    const pieces = this.pieces ??= [];
    pieces.push(piece);
    if (pieces.length === PIECES_PER_SEGMENT) {
      (this.segments ??= []).push(pieces.join(""));
      this.pieces = [];
    }
  }

  /**
   * Appends `src[start, end)` when it is all ASCII and the text is still bytes (a piece read
   * straight from a response's bytes: no string is made of it); false, with nothing appended,
   * otherwise (the caller appends the piece as a string).
   */
  appendAscii(src: Uint8Array, start: number, end: number): boolean {
    const len = end - start;
    if (this.strings) return false;
    if (len <= 0) return len === 0;
    let b = this.bytes;
    if (b === null || b.length - this.used < len) b = this.room(len);
    let n = this.used;
    for (let i = start; i < end; i++) {
      const c = src[i];
      if (c >= 0x80) return false;
      b[n++] = c;
    }
    this.used = n;
    this.length += len;
    return true;
  }

  /** The whole text, as one string (its buffer goes back to the pool). */
  toString(): string {
    if (!this.strings) this.toStrings();
    const pieces = this.pieces ?? [];
    if (this.segments === null) return pieces.length === 1 ? pieces[0] : pieces.join("");
    if (pieces.length === 0 && this.segments.length === 1) return this.segments[0];
    const whole = this.segments.join("") + pieces.join("");
    this.segments = [whole];
    this.pieces = null;
    return whole;
  }

  /** A buffer with at least `need` bytes free after what is written. */
  private room(need: number): Uint8Array {
    const old = this.bytes;
    if (old === null) {
      const top = pool.length > 0 ? pool[pool.length - 1] : null;
      if (top !== null && top.length >= need) {
        pool.pop();
        poolBytes -= top.length;
        return (this.bytes = top);
      }
      return (this.bytes = new Uint8Array(Math.max(TEXT_BUFFER_BYTES, need)));
    }
    // The outgrown buffer is not pooled: each text gives back at most the one it ends with.
    const b = new Uint8Array(Math.max(old.length * 2, this.used + need));
    b.set(old.subarray(0, this.used));
    return (this.bytes = b);
  }

  /** Decodes the bytes into the string mode's first segment and gives the buffer back. */
  private toStrings(): void {
    this.strings = true;
    const b = this.bytes;
    if (b === null) return;
    if (this.used > 0) this.segments = [decoder.decode(b.subarray(0, this.used))];
    this.bytes = null;
    this.used = 0;
    release(b);
  }
}

/** Gives a buffer back to the pool, unless it is too large or the pool is full. */
function release(b: Uint8Array): void {
  if (b.length > MAX_POOLED_BYTES || poolBytes + b.length > MAX_POOL_BYTES) return;
  pool.push(b);
  poolBytes += b.length;
}
