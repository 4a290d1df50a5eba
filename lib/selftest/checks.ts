/** Selftest checks: a measured value against the mock's known truth, with the tolerance printed. */
import { median as statsMedian } from "../stats/mod.ts";

/**
 * PASS/FAIL for checks; INFO for figures reported without a verdict; BUSY when the host was too
 * busy to judge a timing check (the mock itself ran late against its own configured clock): it
 * is neither a pass nor a failure, and makes the whole verdict inconclusive (exit 69).
 */
export type CheckStatus = "PASS" | "FAIL" | "INFO" | "BUSY";

/** One row of the selftest table (and of `--json`: numbers as numbers, strings for people). */
export interface Check {
  /** The group: a personality, "<personality>/<run>", "faults/<personality>" or "headroom". */
  group: string;
  /** What is checked, e.g. "ttft lag vs mock first_ms (median)". */
  name: string;
  /** What was measured, as printed. */
  measured: string;
  /** What the mock was told to do, with the tolerance, as printed. */
  expected: string;
  /** The verdict. */
  status: CheckStatus;
  /** The measured number, or null when there is none (not measured, or not a number). */
  value: number | null;
  /** Unit of `value`, `expected_value` and `tolerance` ("ms", "%", "tokens", ...), or null. */
  unit: string | null;
  /** The expected number, or null when the check is not numeric. */
  expected_value: number | null;
  /** The accepted band around `expected_value` (value may be `expected - below … expected + above`). */
  tolerance: { below: number; above: number } | null;
}

/** Formats a number for the table ("n/a" when missing). */
export const fmt = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(digits);

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A numeric check: measured within [expected - below, expected + above]. */
export function near(
  group: string,
  name: string,
  measured: number | null | undefined,
  expected: number,
  tol: { below: number; above: number },
  unit = "ms",
  digits = 1,
): Check {
  const v = num(measured);
  const ok = v !== null && v >= expected - tol.below && v <= expected + tol.above;
  const band = tol.below === tol.above
    ? `± ${fmt(tol.above, digits)}`
    : `-${fmt(tol.below, digits)}/+${fmt(tol.above, digits)}`;
  return {
    group,
    name,
    measured: `${fmt(v, digits)} ${unit}`,
    expected: `${fmt(expected, digits)} ${band} ${unit}`,
    status: ok ? "PASS" : "FAIL",
    value: v,
    unit,
    expected_value: expected,
    tolerance: { below: tol.below, above: tol.above },
  };
}

/** An upper bound: measured ≤ limit (e.g. a lag p99). */
export function atMost(
  group: string,
  name: string,
  measured: number | null | undefined,
  limit: number,
  unit = "ms",
  digits = 2,
): Check {
  const v = num(measured);
  return {
    group,
    name,
    measured: `${fmt(v, digits)} ${unit}`,
    expected: `≤ ${fmt(limit, digits)} ${unit}`,
    status: v !== null && v <= limit ? "PASS" : "FAIL",
    value: v,
    unit,
    expected_value: limit,
    tolerance: null,
  };
}

/** An exact-equality check on a printable value (numbers also land in `value`). */
export function equal(
  group: string,
  name: string,
  measured: unknown,
  expected: unknown,
  unit: string | null = null,
): Check {
  const m = measured === undefined || measured === null ? "n/a" : String(measured);
  const e = String(expected);
  return {
    group,
    name,
    measured: m,
    expected: e,
    status: m === e ? "PASS" : "FAIL",
    value: num(measured),
    unit,
    expected_value: num(expected),
    tolerance: num(expected) === null ? null : { below: 0, above: 0 },
  };
}

/** A figure reported without a verdict. */
export function info(
  group: string,
  name: string,
  measured: string,
  expected = "",
  value: number | null = null,
  unit: string | null = null,
): Check {
  return {
    group,
    name,
    measured,
    expected,
    status: "INFO",
    value,
    unit,
    expected_value: null,
    tolerance: null,
  };
}

/** A check that could not be made (the step itself failed): always FAIL, with the reason. */
export function broken(group: string, name: string, reason: string): Check {
  return {
    group,
    name,
    measured: reason,
    expected: "(ran)",
    status: "FAIL",
    value: null,
    unit: null,
    expected_value: null,
    tolerance: null,
  };
}

/** The same check, inconclusive: a FAIL measured on a host too busy to judge becomes BUSY. */
export function whenBusy(c: Check, why: string): Check {
  return c.status === "FAIL" ? { ...c, status: "BUSY", expected: `${c.expected} (${why})` } : c;
}

/** Median of the finite values: lib/stats' one definition (nearest rank, an observed value), as everywhere in ik. */
export function median(values: readonly number[]): number | null {
  return statsMedian(values.filter((x) => Number.isFinite(x)));
}
