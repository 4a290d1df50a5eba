/**
 * A response's text, built from its token events' small pieces without holding a rope node per
 * piece. `s += piece` keeps every piece alive as its own string under a chain of rope nodes until
 * the string is read: at 1,000 streams of 256 tokens that was half a million strings (about 12 MB
 * of live heap, which the collector then lets the heap grow to twice). Here pieces wait in a short
 * list and are joined into one flat segment every {@link PIECES_PER_SEGMENT}, so a stream holds
 * one flat string per 64 pieces, and the cost stays linear in the text's length.
 * @module
 */

/** Pieces joined into one flat segment at a time. */
export const PIECES_PER_SEGMENT = 64;

/** An append-only text made of many small pieces. */
export class TextParts {
  // Made on the first append: most responses have no reasoning and no tool calls.
  private segments: string[] | null = null;
  private pieces: string[] | null = null;
  /** UTF-16 length of the whole text so far. */
  length = 0;

  /** Appends one piece (an empty one changes nothing). */
  append(piece: string): void {
    if (piece.length === 0) return;
    const pieces = this.pieces ??= [];
    pieces.push(piece);
    this.length += piece.length;
    if (pieces.length === PIECES_PER_SEGMENT) {
      (this.segments ??= []).push(pieces.join(""));
      this.pieces = [];
    }
  }

  /** The whole text, as one string. */
  toString(): string {
    const pieces = this.pieces ?? [];
    if (this.segments === null) return pieces.length === 1 ? pieces[0] : pieces.join("");
    return pieces.length === 0 && this.segments.length === 1 ? this.segments[0] : this.segments.join("") + pieces.join("");
  }
}
