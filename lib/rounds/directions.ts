/**
 * Which way is better for a metric in the rounds summary (seed 001's `higher_is_better`):
 * latencies, costs and failures are lower-is-better, rates and capacity higher-is-better, and
 * a metric neither rule knows is never ranked.
 * @module
 */

/** Metrics reported per engine but never ranked: counts, not speeds. */
export const COUNT_METRICS: readonly string[] = ["failed_requests"];

/** Stat suffixes a bench serve record appends to a metric name (`ttft_ms` + `_p95_at_n_star`). */
const STAT_SUFFIXES = ["_at_n_star", "_threshold", "_median", "_mean", "_p50", "_p90", "_p95", "_p99"];

/**
 * The metric's base name, lower-cased, with its stat suffixes stripped repeatedly.
 * @example baseMetric("ttft_ms_p95_at_n_star") // "ttft_ms"
 */
export function baseMetric(metric: string): string {
  let m = metric.toLowerCase();
  for (let stripped = true; stripped;) {
    stripped = false;
    for (const suffix of STAT_SUFFIXES) {
      if (m.endsWith(suffix) && m.length > suffix.length) {
        m = m.slice(0, -suffix.length);
        stripped = true;
      }
    }
  }
  return m;
}

/**
 * True for rates and capacity, false for latencies, costs and failures, null when unknown.
 * Latency markers are checked before rate markers, so `ttft_ms_p95_at_n_star` is a latency
 * although it mentions N*.
 * @example higherIsBetter("decode_tok_s") // true
 */
export function higherIsBetter(metric: string): boolean | null {
  const m = baseMetric(metric);
  const has = (...keys: string[]) => keys.some((k) => m.includes(k));
  if (has("usd", "cost", "fail", "error")) return false;
  if (has("ttft", "tpot", "itl", "e2e", "latency") || m.endsWith("_ms") || m.endsWith("_seconds")) return false;
  if (m === "n_star" || m === "rate_star" || m.startsWith("rate_star")) return true;
  if (has("tok_s", "tokens_per_s", "throughput", "goodput", "rps", "per_s", "per_hour")) return true;
  if (m.endsWith("_s")) return false;
  return null;
}

/** The direction used for ranking: null for the {@link COUNT_METRICS} and unknown metrics. */
export function rankingDirection(metric: string): boolean | null {
  return COUNT_METRICS.includes(metric) ? null : higherIsBetter(metric);
}
