/**
 * Strict JSON (RFC 8259, exactly what JSON.parse accepts) read over UTF-8 bytes without building
 * anything: the grammar's pieces (whitespace, strings with their escapes, numbers, literals, any
 * value skipped) for a reader that only needs to know where a few fields are. Anything outside the
 * grammar, or past {@link MAX_DEPTH}, throws {@link Decline}: the caller falls back to JSON.parse.
 * @module
 */

/** Nesting followed inside a skipped value; deeper is declined. */
export const MAX_DEPTH = 32;

/** Byte values of JSON's punctuation, digits and number letters. */
export const QUOTE = 34, BACKSLASH = 92, COMMA = 44, COLON = 58;
export const LBRACE = 123, RBRACE = 125, LBRACKET = 91, RBRACKET = 93;
export const MINUS = 45, PLUS = 43, DOT = 46, ZERO = 48, NINE = 57, LOWER_E = 101, UPPER_E = 69;

/** Hex digit values (or -1), for validating `\uXXXX`. */
const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) HEX[65 + c] = HEX[97 + c] = 10 + c;
/** The letters a one-character escape may use: `\" \\ \/ \b \f \n \r \t`. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of [34, 92, 47, 98, 102, 110, 114, 116]) SIMPLE_ESCAPE[c] = 1;

/** Declines the event: the caller parses it the general way. */
export class Decline {
  static readonly it = new Decline();
}

/** The grammar's pieces over `b[..end)`; a subclass sets both before it reads. */
export class JsonBytes {
  protected b: Uint8Array = EMPTY;
  protected end = 0;
  /** The start of the last string {@link str} read, and whether it had an escape. */
  protected sStart = 0;
  protected sEscaped = false;

  protected decline(): never {
    throw Decline.it;
  }

  /** Skips JSON whitespace (space, tab, LF, CR). */
  protected ws(i: number): number {
    const b = this.b, end = this.end;
    while (i < end) {
      const c = b[i];
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      i++;
    }
    return i;
  }

  /** Expects byte `c` at `i` (after whitespace); returns the index after it. */
  protected expect(i: number, c: number): number {
    i = this.ws(i);
    if (i >= this.end || this.b[i] !== c) this.decline();
    return i + 1;
  }

  /** Reads a string whose opening quote is at `i`; returns the index after the closing quote. */
  protected str(i: number): number {
    const b = this.b, end = this.end;
    if (i >= end || b[i] !== QUOTE) this.decline();
    i++;
    this.sStart = i;
    let escaped = false;
    while (i < end) {
      const c = b[i];
      if (c === QUOTE) {
        this.sEscaped = escaped;
        return i + 1;
      }
      if (c < 32) this.decline(); // a raw control character: JSON.parse refuses it
      if (c === BACKSLASH) {
        escaped = true;
        const n = b[i + 1];
        if (i + 1 >= end) this.decline();
        if (n === 117) {
          if (i + 5 >= end || HEX[b[i + 2]] < 0 || HEX[b[i + 3]] < 0 || HEX[b[i + 4]] < 0 || HEX[b[i + 5]] < 0) this.decline();
          i += 6;
        } else if (SIMPLE_ESCAPE[n] === 1) {
          i += 2;
        } else this.decline();
      } else i++;
    }
    return this.decline();
  }

  /** Reads a number at `i` (the JSON grammar exactly); returns the index after it. */
  protected num(i: number): number {
    const b = this.b, end = this.end;
    if (b[i] === MINUS) i++;
    if (i >= end) this.decline();
    if (b[i] === ZERO) i++;
    else if (b[i] > ZERO && b[i] <= NINE) {
      while (i < end && b[i] >= ZERO && b[i] <= NINE) i++;
    } else this.decline();
    if (i < end && b[i] === DOT) {
      i++;
      const from = i;
      while (i < end && b[i] >= ZERO && b[i] <= NINE) i++;
      if (i === from) this.decline();
    }
    if (i < end && (b[i] === LOWER_E || b[i] === UPPER_E)) {
      i++;
      if (i < end && (b[i] === PLUS || b[i] === MINUS)) i++;
      const from = i;
      while (i < end && b[i] >= ZERO && b[i] <= NINE) i++;
      if (i === from) this.decline();
    }
    return i;
  }

  /** Reads `word` (true, false, null) at `i`. */
  protected lit(i: number, word: number[]): number {
    for (let k = 0; k < word.length; k++) if (i + k >= this.end || this.b[i + k] !== word[k]) this.decline();
    return i + word.length;
  }

  /** True when a `null` starts at `i`. */
  protected isNull(i: number): boolean {
    const b = this.b;
    return i + 3 < this.end && b[i] === 110 && b[i + 1] === 117 && b[i + 2] === 108 && b[i + 3] === 108;
  }

  /** Skips any JSON value starting at `i` (after whitespace), validating it. */
  protected skip(i: number, depth: number): number {
    i = this.ws(i);
    if (i >= this.end) this.decline();
    const c = this.b[i];
    if (c === QUOTE) return this.str(i);
    if (c === LBRACE || c === LBRACKET) {
      if (depth >= MAX_DEPTH) this.decline();
      const close = c === LBRACE ? RBRACE : RBRACKET;
      i = this.ws(i + 1);
      if (i < this.end && this.b[i] === close) return i + 1;
      for (;;) {
        if (c === LBRACE) {
          i = this.expect(this.str(this.ws(i)), COLON);
        }
        i = this.ws(this.skip(i, depth + 1));
        if (!this.more(i, close)) return i + 1;
        i++;
      }
    }
    if (c === 116) return this.lit(i, TRUE);
    if (c === 102) return this.lit(i, FALSE);
    if (c === 110) return this.lit(i, NULL);
    return this.num(i);
  }

  /**
   * After a member or an element, at `i` (whitespace skipped): true at a comma (more follow), false
   * at `close` (the object or list ends); anything else is declined.
   */
  protected more(i: number, close: number): boolean {
    if (i >= this.end) this.decline();
    const c = this.b[i];
    if (c === COMMA) return true;
    if (c !== close) this.decline();
    return false;
  }

  /** Whether the last key read (by {@link str}) is `k`; a key written with an escape is declined. */
  protected keyIs(k: Uint8Array, keyEnd: number): boolean {
    const s = this.sStart, n = keyEnd - 1 - s;
    if (n !== k.length) return false;
    const b = this.b;
    for (let j = 0; j < n; j++) if (b[s + j] !== k[j]) return false;
    return true;
  }
}

export const EMPTY = new Uint8Array(0);
const TRUE = [116, 114, 117, 101];
const FALSE = [102, 97, 108, 115, 101];
const NULL = [110, 117, 108, 108];
