/** Percentiles by nearest rank: always an observed value, as the seeds' point estimates and bootstrap use. */

/**
 * Nearest-rank percentile of an unsorted list; null when empty.
 * @example nearestRank([1, 2, 3, 4], 50) === 2
 */
export function nearestRank(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
