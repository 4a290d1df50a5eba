/**
 * Number and text formatting for the rounds report: three significant digits the way the seed's
 * `{x:.3g}` prints them, and table cells that cannot break a Markdown row or a terminal.
 * @module
 */
import { escapeTerminalLine } from "../report/escape.ts";

/**
 * A number like C's `%.<digits>g`: `digits` significant digits, trailing zeros dropped, exponent
 * form below 1e-4 or from 10^digits on (`1e-05`, `1e+03`).
 * @example formatG(1.1500001) // "1.15"
 */
export function formatG(x: number, digits = 3): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return "0";
  const [mant, expText] = x.toExponential(digits - 1).split("e");
  const exp = Number(expText);
  const strip = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (exp < -4 || exp >= digits) {
    const e = Math.abs(exp);
    return `${strip(mant)}e${exp < 0 ? "-" : "+"}${e < 10 ? "0" + e : e}`;
  }
  return strip(x.toFixed(Math.max(0, digits - 1 - exp)));
}

/**
 * A report number (the seed's `_fmt`): `n/a` for none, three significant digits below 1000,
 * whole numbers from 1000 on, and text as it is.
 * @example formatValue(1234.6) // "1235"
 */
export function formatValue(x: number | string | null | undefined, digits = 3): string {
  if (x === null || x === undefined) return "n/a";
  if (typeof x === "string") return x;
  return Math.abs(x) < 1000 || !Number.isFinite(x) ? formatG(x, digits) : x.toFixed(0);
}

/** Text for one Markdown table cell: on one line, control characters visible, `|` escaped. */
export function tableCell(text: unknown): string {
  return escapeTerminalLine(String(text ?? "")).replace(/\r/g, "").replace(/\|/g, "\\|");
}

/** JSON with sorted keys and `", "` / `": "` separators, as the seed prints a value in prose. */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}: ${sortedJson(o[k])}`).join(", ")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * Words joined into one shell-quoted line (the inverse of `shellSplit`): a word with anything but
 * `A-Za-z0-9_-.,:/=@%+` is single-quoted.
 * @example shellJoin(["--extra-body", '{"a": 1}']) // `--extra-body '{"a": 1}'`
 */
export function shellJoin(words: readonly string[]): string {
  return words.map((w) => /^[A-Za-z0-9_\-.,:/=@%+]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`).join(" ");
}
