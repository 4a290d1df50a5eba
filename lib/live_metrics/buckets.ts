/**
 * Histogram bucket bounds (upper bounds, seconds; `+Inf` is always added) for ik's live latency
 * histograms. Classic Prometheus histograms cost one series per bound per label set, so each list
 * is kept short while still resolving the figures a benchmark reports:
 * - a 1-2-5 progression per decade (±25 % resolution around each bound after interpolation by
 *   `histogram_quantile`), extended where LLM serving lives;
 * - the same bounds on every run, so dashboards and `rate()` sums across runs line up.
 * @module
 */

/**
 * Time to first token and end-to-end request latency, seconds: 5 ms (a local engine's cached
 * prefill) to 120 s (a long generation or a queue under overload; anything above lands in
 * `+Inf`, still counted in `_count` and `_sum`). 17 bounds.
 */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 20, 30, 60, 120,
]);

/**
 * Time per output token and inter-token latency, seconds: 1 ms (a small model on a fast GPU, or
 * tokens that arrive together in one SSE chunk) to 2 s (a stalled decode under preemption). The
 * 10–100 ms range, where most served models sit, has the finest steps. 16 bounds.
 */
export const TOKEN_GAP_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2,
]);

/**
 * Throws unless `bounds` is a non-empty, strictly increasing list of finite numbers (`+Inf` is
 * implicit and must not be listed).
 */
export function checkBuckets(bounds: readonly number[]): void {
  if (bounds.length === 0) throw new RangeError("histogram buckets: at least one bound is needed");
  for (let i = 0; i < bounds.length; i++) {
    if (!Number.isFinite(bounds[i])) throw new RangeError("histogram buckets: bounds must be finite (+Inf is implicit)");
    if (i > 0 && !(bounds[i] > bounds[i - 1])) throw new RangeError("histogram buckets: bounds must be strictly increasing");
  }
}
