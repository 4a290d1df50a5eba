/**
 * Decoding UTF-8 chunk by chunk while naming the line of the first byte that is not UTF-8, for
 * every streamed text ik reads (prompt sets, dataset files): a file that is not UTF-8 is refused as
 * `file:line` (65), not as a bare decoder message.
 * @module
 */
import { dataError } from "../cli/errors.ts";

/**
 * The offset of the first byte of `b` that cannot be UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or `b.length` when none is (a sequence cut at the end may go
 * on in the next chunk). Continuation bytes at the start are skipped: they may end a sequence the
 * chunk before began.
 */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length && i < 3 && (b[i] & 0xc0) === 0x80) i++;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number, lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      if (i + k >= b.length) return b.length;
      const x = b[i + k];
      if (x < (k === 1 ? lo : 0x80) || x > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return b.length;
}

/** Newline bytes (0x0A) in `b` before `end`. */
export function newlinesBefore(b: Uint8Array, end: number): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1 && i < end; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * A fatal UTF-8 decoder that counts the lines it has decoded, so the first byte that is not UTF-8
 * is named by its line.
 *
 * @example
 * ```ts
 * const d = new Utf8LineDecoder("set.jsonl", "save the prompt set as UTF-8");
 * for (const chunk of chunks) lines.push(d.decode(chunk));
 * lines.push(d.decode());
 * ```
 */
export class Utf8LineDecoder {
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  readonly #name: string;
  readonly #hint: string;
  // Newlines decoded before the current chunk.
  #lines = 0;

  /**
   * @param name the file named in the error (`name:line`)
   * @param hint what to do, the error's last part
   */
  constructor(name: string, hint: string) {
    this.#name = name;
    this.#hint = hint;
  }

  /**
   * The text of the next chunk (streaming), or with no chunk the end of the input.
   * @throws IkError data (65) `name:line: not UTF-8 text …` at the first byte that is not UTF-8 (a
   *   sequence the previous chunk left open is named by the line it is on)
   */
  decode(bytes?: Uint8Array): string {
    let text: string;
    try {
      text = bytes ? this.#decoder.decode(bytes, { stream: true }) : this.#decoder.decode();
    } catch {
      // Nothing wrong inside the chunk itself: the sequence the last chunk left open is the fault,
      // on the line being decoded (no newline of this chunk comes before it).
      const at = bytes ? firstInvalidUtf8(bytes) : 0;
      const line = this.#lines + 1 + (bytes && at < bytes.length ? newlinesBefore(bytes, at) : 0);
      throw dataError(`${this.#name}:${line}`, "not UTF-8 text (a byte sequence that is not UTF-8)", this.#hint);
    }
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.#lines++;
    return text;
  }
}
