/**
 * A manifest engine's `expect` (issue 10): settings its resolved config must show, under the
 * engine's own names (vLLM `max_num_seqs`, SGLang `max_running_requests`, llama.cpp `n_slots` and
 * `n_ctx_slot`, TensorRT-LLM `max_batch_size`). A dotted key (`speculative_config.method`) looks
 * inside nested values when no key has that exact name.
 *
 * Normalisation before comparing (both sides, recursively):
 * - strings are trimmed; "True"/"False"/"None" and "true"/"false"/"null" become true/false/null;
 * - numbers are compared as numbers, and a string that is exactly a decimal number ("256",
 *   " 0.90 ", "1e3") is that number: log values may stay text ("256") and a manifest may quote
 *   them, but "256 tokens", "0x100" or "" are never numbers;
 * - arrays compare element by element, objects key by key in any order.
 *
 * A present, different value is a violation (a hard gate, printed "[HARD GATE] ..."): `bench
 * rounds` makes that cell `hard_gate` (shown, never ranked, exit 1). An absent key is unverified,
 * and the config then cannot count as RESOLVED.
 * @module
 */
import type { ResolvedConfig, ResolvedStatus } from "./resolved_config.ts";

/** One expected setting the resolved config contradicts. */
export interface ExpectViolation {
  /**
   * The setting, as the manifest names it. Not called `key`: that is a secret-looking name
   * (CONTRACTS.md "Redaction"), and the scrubber would store it as `***`.
   */
  setting: string;
  /** The manifest's value, normalised. */
  expected: unknown;
  /** The resolved value, normalised. */
  actual: unknown;
  /** `[HARD GATE] setting: expected X, resolved Y`. */
  message: string;
}

/** The outcome of checking `expect` against a resolved config. */
export interface ExpectCheck {
  /** Settings present with a different value: each a hard-gate failure. */
  violations: ExpectViolation[];
  /** Expected keys absent from the resolved config. */
  unverified: string[];
  /** For unverified keys: the name this engine uses instead, when it is present. */
  hints: Record<string, string>;
  /** No violation (the hard gate passes); unverified keys do not fail it. */
  ok: boolean;
  /** The config is RESOLVED and every expected key was found. */
  canBeResolved: boolean;
  /** The status to report: RESOLVED only when canBeResolved, else SELF_REPORTED or UNPROVEN. */
  status: ResolvedStatus;
}

/** The same setting under each engine's own name (for hints only; keys are never translated). */
const EQUIVALENTS: string[][] = [
  ["max_num_seqs", "max_running_requests", "n_slots", "max_batch_size"],
  ["max_model_len", "context_length", "n_ctx_slot", "max_seq_len"],
  ["max_num_batched_tokens", "chunked_prefill_size", "n_batch", "max_num_tokens"],
  ["enable_prefix_caching", "disable_radix_cache"],
];

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A value normalised as the module describes, for comparing and printing. */
export function normaliseExpectValue(v: unknown): unknown {
  if (typeof v === "string") {
    const t = v.trim();
    if (t === "True" || t === "true") return true;
    if (t === "False" || t === "false") return false;
    if (t === "None" || t === "null") return null;
    if (DECIMAL.test(t)) return Number(t);
    return t;
  }
  if (typeof v === "number" || typeof v === "boolean" || v === null) return v;
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(normaliseExpectValue);
  if (typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      Object.defineProperty(out, k, { value: normaliseExpectValue(x), enumerable: true });
    }
    return out;
  }
  return String(v);
}

/** Whether two normalised values are equal (numbers as numbers, objects in any key order). */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") return a === b;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => same(x, (b as unknown[])[i]));
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && same((a as any)[k], (b as any)[k]));
}

/** Looks a key up: the exact name first, then a dotted path into nested objects. */
function lookup(config: Record<string, unknown>, key: string): { found: boolean; value?: unknown } {
  if (Object.hasOwn(config, key)) return { found: true, value: config[key] };
  if (!key.includes(".")) return { found: false };
  let cur: unknown = config;
  for (const part of key.split(".")) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur) || !Object.hasOwn(cur, part)) {
      return { found: false };
    }
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

const show = (v: unknown) => JSON.stringify(v) ?? String(v);

/** The line printed for a violation: `[HARD GATE] setting: expected X, resolved Y`. */
export function formatViolation(v: { setting: string; expected: unknown; actual: unknown }): string {
  return `[HARD GATE] ${v.setting}: expected ${show(v.expected)}, resolved ${show(v.actual)}`;
}

/**
 * Checks a manifest `expect` object against a resolved config. A non-object `expect` expects
 * nothing. Never throws.
 */
export function checkExpect(
  expect: Record<string, unknown>,
  resolved: Pick<ResolvedConfig, "status" | "config">,
): ExpectCheck {
  const config = resolved?.config && typeof resolved.config === "object" ? resolved.config : {};
  const wanted = expect !== null && typeof expect === "object" && !Array.isArray(expect) ? expect : {};
  const violations: ExpectViolation[] = [];
  const unverified: string[] = [];
  const hints: Record<string, string> = {};
  for (const [key, raw] of Object.entries(wanted)) {
    const got = lookup(config, key);
    if (!got.found) {
      unverified.push(key);
      const other = EQUIVALENTS.find((g) => g.includes(key))?.find((k) => k !== key && Object.hasOwn(config, k));
      if (other) hints[key] = `this engine's log names it ${other}`;
      continue;
    }
    const expected = normaliseExpectValue(raw), actual = normaliseExpectValue(got.value);
    if (!same(expected, actual)) violations.push({ setting: key, expected, actual, message: formatViolation({ setting: key, expected, actual }) });
  }
  const canBeResolved = resolved?.status === "RESOLVED" && unverified.length === 0;
  const status: ResolvedStatus = canBeResolved
    ? "RESOLVED"
    : resolved?.status === "SELF_REPORTED" ? "SELF_REPORTED" : "UNPROVEN";
  return { violations, unverified, hints, ok: violations.length === 0, canBeResolved, status };
}
