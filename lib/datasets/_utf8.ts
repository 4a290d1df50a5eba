/**
 * Where a byte chunk stops being UTF-8, so a dataset that is not UTF-8 is refused naming its line.
 * @module
 */

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
