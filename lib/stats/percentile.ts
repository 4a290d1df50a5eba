/**
 * The one percentile definition ik uses for its own statistics: nearest rank, always an observed
 * value, as the seeds define it ("Percentiles are nearest-rank (always an observed value), the
 * same convention the bootstrap uses, so a point estimate and its CI agree"). The median is the
 * 50th percentile by the same rule, so for an even count it is the lower of the two middle values,
 * never their mean: bench serve, compare, rounds, report, merge and selftest all agree on it.
 * Only the vLLM export (lib/export/vllm_stats.ts) computes numpy's linear interpolation, and only
 * in vLLM's own keys, because that is what vLLM writes.
 * @module
 */

/** Index of the nearest-rank p-th percentile among n sorted values (n > 0): ceil(p/100·n) − 1, clamped. */
export function nearestRankIndex(n: number, p: number): number {
  return Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
}

/**
 * Nearest-rank percentile of values already sorted ascending (the first `n` of them); null when none.
 * @param n how many leading entries count (default all), so a scratch buffer can be reused
 */
export function nearestRankSorted(sorted: ArrayLike<number>, p: number, n: number = sorted.length): number | null {
  return n > 0 ? sorted[nearestRankIndex(n, p)] : null;
}

/**
 * Nearest-rank percentile of an unsorted list; null when empty.
 * @example nearestRank([1, 2, 3, 4], 50) === 2
 */
export function nearestRank(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[nearestRankIndex(s.length, p)];
}

/**
 * The median: the nearest-rank 50th percentile (an observed value; the lower middle one for an
 * even count), or null when empty.
 * @example median([4, 1, 3, 2]) === 2
 */
export function median(xs: readonly number[]): number | null {
  return nearestRank(xs, 50);
}
