/**
 * Number formatting as the seed's tables print it (Python's `f"{x:{w}.{nd}f}"`): fixed decimals,
 * right-aligned to a width, `-` for a missing value, ties rounded half to even as Python does.
 * @module
 */

/** Fixed-point with `nd` decimals, like Python's `.{nd}f` (`inf`, `nan` for non-finite values). */
export function fixed(x: number, nd: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const s = x.toFixed(nd);
  // toFixed rounds an exact tie away from zero; Python rounds it to even
  const scaled = Math.abs(x) * 10 ** nd;
  if (nd <= 6 && Number.isInteger(scaled * 2) && !Number.isInteger(scaled) && Math.floor(scaled) % 2 === 0) {
    const down = (Math.sign(x) * Math.floor(scaled)) / 10 ** nd;
    return (x < 0 && Math.floor(scaled) === 0 ? "-" : "") + down.toFixed(nd);
  }
  return s;
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
