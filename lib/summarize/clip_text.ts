/**
 * Bounding what an error line echoes from a file: a person sees every error as one line
 * (CONTRACTS.md), so a value or a header read from a file that is not what it should be (a
 * 43 MB one-line JSON given as a TSV) is shown cut, never whole.
 * @module
 */

/** How many characters of one echoed value an error line shows. */
export const CLIP_CHARS = 40;
/** How many items of an echoed list an error line shows. */
export const CLIP_ITEMS = 6;

/**
 * A value as an error line shows it: at most `max` characters, a longer one cut with
 * `…(N chars)` naming its full length.
 */
export function clipText(s: string, max: number = CLIP_CHARS): string {
  if (s.length <= max) return s;
  // never split a surrogate pair
  let cut = max;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return `${s.slice(0, cut)}…(${s.length} chars)`;
}

/**
 * A list as an error line shows it: the first `items` entries, each clipped by {@link clipText},
 * joined with ", ", then `… N more` for the rest.
 */
export function clipList(xs: readonly string[], items: number = CLIP_ITEMS, max: number = CLIP_CHARS): string {
  const shown = xs.slice(0, items).map((x) => clipText(x, max)).join(", ");
  return xs.length > items ? `${shown}, … ${xs.length - items} more` : shown;
}
