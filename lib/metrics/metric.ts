/** The metric entries of an evidence record (CONTRACTS.md / issue: name, value, unit, stat, n, ci95, subject). */

/** One metric of a record. */
export interface Metric {
  /** e.g. "ttft_ms", "decode_tok_s". */
  name: string;
  /** The value, or null when nothing was measured. */
  value: number | null;
  /** "ms", "tok/s", "req/s", "usd/1M tok", … */
  unit: string;
  /** "median", "p95", "p99", "mean", "value", … */
  stat: string;
  /** Observations behind the value. */
  n: number;
  /** 95% confidence interval, or null when none can be given. */
  ci95: [number, number] | null;
  /** What it describes: a bucket, "all", a level ("c=8", "rate=2"). */
  subject: string;
}

/** Builds a metric entry (an interval with a non-finite end becomes null). */
export function metric(
  name: string,
  value: number | null,
  unit: string,
  stat: string,
  opts: { n?: number; ci95?: readonly [number, number] | null; subject?: string } = {},
): Metric {
  const ci = opts.ci95 && Number.isFinite(opts.ci95[0]) && Number.isFinite(opts.ci95[1]) ? [opts.ci95[0], opts.ci95[1]] as [number, number] : null;
  return { name, value: value !== null && Number.isFinite(value) ? value : null, unit, stat, n: opts.n ?? 0, ci95: ci, subject: opts.subject ?? "all" };
}

/** The per-request speed metrics of single mode, with their units (seed 002). */
export const SPEED_METRICS: readonly (readonly [name: "ttft_ms" | "tpot_ms" | "decode_tok_s" | "e2e_ms", unit: string])[] = [
  ["ttft_ms", "ms"],
  ["tpot_ms", "ms"],
  ["decode_tok_s", "tok/s"],
  ["e2e_ms", "ms"],
];
