/**
 * The streamed token ids of one response, kept in a typed column (see {@link IdColumn}).
 * @module
 */

import { reservedRows, trimmed } from "./_event_log.ts";

/** The largest id a 32-bit row holds. */
const MAX_U32 = 0xffffffff;

/**
 * The token ids a response streamed, in order: 32-bit rows, reserved on the first id for the
 * tokens the request asked for (its max_tokens, up to `MAX_RESERVED_EVENTS`: `reservedRows`).
 *
 * A `number[]` grown by `push` allocates a chain of ever larger element stores: at 256 tokens
 * ~10 KB a request that outlive the young collections (the request lives seconds), so the collector
 * promotes them and frees them only with a full collection (issue 21: ~5 MB of peak RSS at 1,000
 * streams). One reserved column of 4 bytes an id is 1 KB at 256 tokens, and outside the collected
 * heap. An id that is not an integer in 0..2^32-1 (a hostile or odd server) widens the column once to
 * doubles, so every id is kept exactly as it was read.
 */
export class IdColumn {
  private col: Uint32Array | Float64Array | null = null;
  private readonly reserve: number;
  /** Ids written. */
  length = 0;

  /** @param expected ids the request may bring (its max_tokens), if known */
  constructor(expected?: number | null) {
    this.reserve = reservedRows(expected);
  }

  /** Bytes the column holds now (its reservation, not only the ids written; 0 before the first id). */
  get bytesHeld(): number {
    return this.col?.byteLength ?? 0;
  }

  /** Appends one id. */
  push(id: number): void {
    let col = this.col ??= new Uint32Array(this.reserve);
    if (this.length === col.length) col = this.grow();
    if (col instanceof Uint32Array && !(id >= 0 && id <= MAX_U32 && Number.isInteger(id))) col = this.widened();
    col[this.length++] = id;
  }

  /** The ids in order (the caller owns the column; the column writes no more). */
  values(): Uint32Array | Float64Array {
    return this.col === null ? new Uint32Array(0) : trimmed(this.col, this.length);
  }

  private grow(): Uint32Array | Float64Array {
    const old = this.col as Uint32Array | Float64Array;
    const col = old instanceof Uint32Array ? new Uint32Array(old.length * 2) : new Float64Array(old.length * 2);
    col.set(old);
    return (this.col = col);
  }

  private widened(): Float64Array {
    return (this.col = Float64Array.from(this.col as Uint32Array));
  }
}
