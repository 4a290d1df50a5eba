/** Selftest checks: a measured value against the mock's known truth, with the tolerance printed. */

/** PASS/FAIL for checks; INFO for figures reported without a verdict (client headroom). */
export type CheckStatus = "PASS" | "FAIL" | "INFO";

/** One row of the selftest table. */
export interface Check {
  /** The group: a personality, "faults/<personality>" or "headroom". */
  group: string;
  /** What is checked, e.g. "ttft_ms median". */
  name: string;
  /** What was measured, as printed. */
  measured: string;
  /** What the mock was told to do, with the tolerance, as printed. */
  expected: string;
  /** The verdict. */
  status: CheckStatus;
}

const fmt = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(digits);

/** A numeric check: |measured - expected| within tolerance (asymmetric bounds allowed). */
export function near(
  group: string,
  name: string,
  measured: number | null | undefined,
  expected: number,
  tol: { below: number; above: number },
  unit = "ms",
): Check {
  const ok = measured !== null && measured !== undefined && Number.isFinite(measured) &&
    measured >= expected - tol.below && measured <= expected + tol.above;
  const band = tol.below === tol.above ? `± ${fmt(tol.above)}` : `-${fmt(tol.below)}/+${fmt(tol.above)}`;
  return { group, name, measured: `${fmt(measured)} ${unit}`, expected: `${fmt(expected)} ${band} ${unit}`, status: ok ? "PASS" : "FAIL" };
}

/** An exact-equality check on a printable value. */
export function equal(group: string, name: string, measured: unknown, expected: unknown): Check {
  const m = measured === undefined ? "n/a" : String(measured);
  const e = String(expected);
  return { group, name, measured: m, expected: e, status: m === e ? "PASS" : "FAIL" };
}

/** A figure reported without a verdict. */
export function info(group: string, name: string, measured: string, expected = ""): Check {
  return { group, name, measured, expected, status: "INFO" };
}

/** A check that could not be made (the step itself failed): always FAIL, with the reason. */
export function broken(group: string, name: string, reason: string): Check {
  return { group, name, measured: reason, expected: "(ran)", status: "FAIL" };
}
