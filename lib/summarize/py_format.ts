/**
 * Number formatting as the seed's tables print it (Python's `f"{x:{w}.{nd}f}"`): fixed decimals,
 * right-aligned to a width, `-` for a missing value, ties rounded half to even as Python does.
 * @module
 */

/** The IEEE-754 parts of a finite double: |x| = mantissa × 2^exp2 exactly, and its sign bit. */
function exactParts(x: number): { negative: boolean; mantissa: bigint; exp2: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0), lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased) mantissa |= 1n << 52n;
  return { negative: hi >>> 31 === 1, mantissa, exp2: (biased || 1) - 1075 };
}

/**
 * Fixed-point with `nd` decimals, like Python's `.{nd}f` (`inf`, `nan` for non-finite values): the
 * exact binary value of `x` correctly rounded, half to even only on an exact tie. A value that only
 * looks like a tie (89.45 is 89.4500000000000028… as a double) rounds as its true value does
 * (`89.5` at 1 decimal), which a tie test on `x * 10 ** nd` would get wrong: that product is rounded
 * to a double before the test sees it. `-0.0` and a negative value rounding to zero keep their sign,
 * as in Python.
 */
export function fixed(x: number, nd: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const { negative, mantissa, exp2 } = exactParts(x);
  const scale = 10n ** BigInt(nd);
  // |x| × 10^nd = num / den exactly
  const num = exp2 >= 0 ? (mantissa << BigInt(exp2)) * scale : mantissa * scale;
  const den = exp2 >= 0 ? 1n : 1n << BigInt(-exp2);
  let q = num / den;
  const twice = (num % den) * 2n;
  if (twice > den || (twice === den && q % 2n === 1n)) q += 1n;
  let digits = q.toString();
  if (nd > 0) {
    digits = digits.padStart(nd + 1, "0");
    digits = `${digits.slice(0, -nd)}.${digits.slice(-nd)}`;
  }
  return (negative ? "-" : "") + digits;
}

/**
 * A table cell: `x` with `nd` decimals right-aligned to `w`, or `-` when x is null.
 * @param x the value
 * @param nd decimals
 * @param w minimum width
 */
export function fmt(x: number | null | undefined, nd = 1, w = 0): string {
  return (x === null || x === undefined ? "-" : fixed(x, nd)).padStart(w);
}

/** Left-aligns `s` to width `w` (Python's `:<w`). */
export function left(s: string | number, w: number): string {
  return String(s).padEnd(w);
}

/** Right-aligns `s` to width `w` (Python's `:>w`). */
export function right(s: string | number, w: number): string {
  return String(s).padStart(w);
}
