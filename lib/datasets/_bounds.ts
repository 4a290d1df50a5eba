/**
 * Bounds on the numbers a dataset row gives: token lengths (at most MAX_PROMPT_TOKENS, the
 * `prompts synth` cap, as safe integers: a prompt built to 1e11 tokens would need unbounded memory)
 * and trace times (finite, 0 or more, and at most about 317 years: room for seconds since the epoch).
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { isTokenCount, MAX_PROMPT_TOKENS } from "../prompts/limits.ts";

/** The largest trace time ik takes, in seconds (1e10 s, about 317 years). */
export const MAX_TRACE_SECONDS = 1e10;

/**
 * A row's token length: a whole number `min..MAX_PROMPT_TOKENS`.
 * @throws IkError (65) naming `where`, the field and the value
 */
export function tokenLength(v: unknown, min: number, field: string, where: string, hint?: string): number {
  if (isTokenCount(v, min)) return v;
  const got = typeof v === "number" ? String(v) : JSON.stringify(v)?.slice(0, 40) ?? "nothing";
  throw dataError(where, `'${field}' must be a whole number of tokens, ${min}..${MAX_PROMPT_TOKENS} (got ${got})`, hint);
}

/**
 * A row's time in `unit` (seconds or ms): finite, 0 up to MAX_TRACE_SECONDS (in that unit).
 * @throws IkError (65) naming `where`, the field and the value
 */
export function traceTime(v: unknown, field: string, unit: "s" | "ms", where: string, hint?: string): number {
  const max = unit === "ms" ? MAX_TRACE_SECONDS * 1000 : MAX_TRACE_SECONDS;
  if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= max) return v;
  const got = typeof v === "number" ? String(v) : JSON.stringify(v)?.slice(0, 40) ?? "nothing";
  throw dataError(where, `'${field}' must be a time in ${unit === "ms" ? "milliseconds" : "seconds"}, 0..${max} (got ${got})`, hint);
}
