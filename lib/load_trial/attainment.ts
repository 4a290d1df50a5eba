/**
 * The load-trial verdict (seed 004's contract): SLO attainment and scheduling validity over the
 * request rows of one trial. Pure.
 *
 * - Attainment: the share of the N requests that succeeded with TTFT ≤ the TTFT target and TPOT ≤
 *   the TPOT target. A failed request, or one never sent, is a miss; a request with no TPOT (one
 *   token) passes the TPOT part.
 * - Scheduling is valid when all N were sent, the median send lag is ≤ 5 ms and its p99 ≤ 50 ms
 *   (a p99 bound near 10 ms would be noise with a few hundred requests).
 * @module
 */
import { sendLagWithoutCpuWait } from "../metrics/level.ts";
import { nearestRank } from "../stats/mod.ts";

/** Median send-lag bound, ms. */
export const LAG_P50_LIMIT_MS = 5;
/** p99 send-lag bound, ms. */
export const LAG_P99_LIMIT_MS = 50;

/** The row fields the verdict reads. */
export interface TrialRow {
  ok: boolean;
  ttft_ms: number | null;
  tpot_ms: number | null;
  e2e_ms: number | null;
  send_lag_ms: number | null;
  /** The loop thread's wait for a CPU while the request waited for its deadline (absent or null: not read). */
  send_cpu_wait_ms?: number | null;
  error_kind?: string | null;
}

/** Percentiles of one metric (nearest rank), over ok requests. */
export interface TrialPercentiles {
  n: number;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
}

/** The verdict of one trial. */
export interface TrialVerdict {
  /** Met / N (N = requests asked, so unsent requests are misses). */
  attainment: number;
  /** Requests that met both targets. */
  met: number;
  /** Requests asked. */
  requested: number;
  target: number;
  /** attainment ≥ target. */
  attained: boolean;
  /** Scheduling validity and its numbers. */
  validity: { valid: boolean; sent: number; requested: number; lag_p50_ms: number | null; lag_p99_ms: number | null; lag_p50_limit_ms: number; lag_p99_limit_ms: number; reasons: string[] };
  /** Why requests missed: failed, ttft, tpot (a request may miss both targets). */
  misses: { failed: number; ttft: number; tpot: number; unsent: number };
  failures_by_kind: Record<string, number>;
  percentiles: {
    ttft_ms: TrialPercentiles;
    tpot_ms: TrialPercentiles;
    e2e_ms: TrialPercentiles;
    send_lag_ms: TrialPercentiles;
    /** The send lag less the loop thread's wait for a CPU (the lag ik's own work caused), or null where no wait was read. */
    send_lag_without_cpu_wait_ms: TrialPercentiles | null;
  };
}

/** Percentiles of each row's send lag less its CPU wait (rows with both), or null when no row has a wait. */
function lagLessWait(rows: readonly TrialRow[]): TrialPercentiles | null {
  const v: number[] = [];
  for (const r of rows) {
    const own = sendLagWithoutCpuWait(r);
    if (own !== null) v.push(own);
  }
  return v.length ? pct(v) : null;
}

function pct(values: number[]): TrialPercentiles {
  return {
    n: values.length, p50: nearestRank(values, 50), p90: nearestRank(values, 90), p95: nearestRank(values, 95), p99: nearestRank(values, 99),
    max: values.length ? Math.max(...values) : null,
  };
}

const nums = (rows: readonly TrialRow[], k: keyof TrialRow) => rows.map((r) => r[k]).filter((v): v is number => typeof v === "number" && Number.isFinite(v));

/**
 * Judges a trial.
 * @param rows the rows of the requests that were sent (failed ones included)
 * @param requested N, the requests the trial was asked to send
 * @param slo targets in ms
 */
export function judgeTrial(rows: readonly TrialRow[], requested: number, slo: { ttftMs: number; tpotMs: number }, target: number): TrialVerdict {
  let met = 0;
  const misses = { failed: 0, ttft: 0, tpot: 0, unsent: Math.max(0, requested - rows.length) };
  const byKind: Record<string, number> = {};
  for (const r of rows) {
    if (!r.ok || r.ttft_ms === null) {
      misses.failed++;
      const k = r.error_kind ?? "unknown";
      byKind[k] = (byKind[k] ?? 0) + 1;
      continue;
    }
    const ttftOk = r.ttft_ms <= slo.ttftMs;
    const tpotOk = r.tpot_ms === null || r.tpot_ms <= slo.tpotMs;
    if (!ttftOk) misses.ttft++;
    if (!tpotOk) misses.tpot++;
    if (ttftOk && tpotOk) met++;
  }
  const ok = rows.filter((r) => r.ok);
  const lags = nums(rows, "send_lag_ms");
  const p50 = nearestRank(lags, 50), p99 = nearestRank(lags, 99);
  const reasons: string[] = [];
  if (rows.length < requested) reasons.push(`only ${rows.length} of ${requested} requests were sent`);
  if (p50 === null) reasons.push("no send lag was measured");
  else {
    if (p50 > LAG_P50_LIMIT_MS) reasons.push(`median send lag ${p50.toFixed(2)} ms > ${LAG_P50_LIMIT_MS} ms`);
    if ((p99 ?? 0) > LAG_P99_LIMIT_MS) reasons.push(`p99 send lag ${p99!.toFixed(2)} ms > ${LAG_P99_LIMIT_MS} ms`);
  }
  const attainment = requested > 0 ? met / requested : 0;
  return {
    attainment, met, requested, target, attained: attainment >= target,
    validity: { valid: reasons.length === 0, sent: rows.length, requested, lag_p50_ms: p50, lag_p99_ms: p99, lag_p50_limit_ms: LAG_P50_LIMIT_MS, lag_p99_limit_ms: LAG_P99_LIMIT_MS, reasons },
    misses, failures_by_kind: byKind,
    percentiles: { ttft_ms: pct(nums(ok, "ttft_ms")), tpot_ms: pct(nums(ok, "tpot_ms")), e2e_ms: pct(nums(ok, "e2e_ms")), send_lag_ms: pct(lags), send_lag_without_cpu_wait_ms: lagLessWait(rows) },
  };
}
