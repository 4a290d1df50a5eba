/**
 * The statistics `vllm bench serve` writes, computed its way (numpy defaults): the mean, the
 * population standard deviation, and percentiles by linear interpolation between order
 * statistics (`numpy.percentile`'s default method, rank p/100 × (n − 1)). ik's own tables use
 * nearest rank; a vLLM-format file must carry vLLM's convention, so dashboards compare like with
 * like. An empty list counts as [0], as vLLM's `values or 0` does.
 * @module
 */

/** The p-th percentile (0..100) of `sorted` (ascending) by linear interpolation; null when empty. */
export function linearPercentileSorted(sorted: ArrayLike<number>, p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank), hi = Math.min(n - 1, lo + 1);
  const frac = rank - lo;
  // numpy's lerp form: exact at both ends, so p0 and p100 are the min and max
  const a = sorted[lo], b = sorted[hi];
  return frac >= 0.5 ? b - (b - a) * (1 - frac) : a + (b - a) * frac;
}

/** The p-th percentile of unsorted values by linear interpolation; null when empty. */
export function linearPercentile(values: readonly number[], p: number): number | null {
  return linearPercentileSorted(Float64Array.from(values).sort(), p);
}

/**
 * A float sum in numpy's order (pairwise summation: eight running partial sums over blocks of
 * up to 128 values, halves above that), so means and deviations match numpy to the last bit.
 */
export function pairwiseSum(x: ArrayLike<number>, start = 0, n = x.length - start): number {
  if (n < 8) {
    let s = -0;
    for (let i = start; i < start + n; i++) s += x[i];
    return s;
  }
  if (n <= 128) {
    const r = [x[start], x[start + 1], x[start + 2], x[start + 3], x[start + 4], x[start + 5], x[start + 6], x[start + 7]];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let k = 0; k < 8; k++) r[k] += x[start + i + k];
    let s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) s += x[start + i];
    return s;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return pairwiseSum(x, start, half) + pairwiseSum(x, start + half, n - half);
}

/** Arithmetic mean as numpy computes it; null when empty. */
export function meanOf(values: ArrayLike<number>): number | null {
  return values.length ? pairwiseSum(values) / values.length : null;
}

/** Population standard deviation (numpy's default ddof = 0, numpy's order of operations); null when empty. */
export function stdOf(values: ArrayLike<number>): number | null {
  const m = meanOf(values);
  if (m === null) return null;
  const sq = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) sq[i] = (values[i] - m) * (values[i] - m);
  return Math.sqrt(pairwiseSum(sq) / values.length);
}

/** numpy.median: the middle value, or the mean of the two middle values; null when empty. */
export function medianSorted(sorted: ArrayLike<number>): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const k = n >> 1;
  return n % 2 ? sorted[k] : (sorted[k - 1] + sorted[k]) / 2;
}

/** vLLM's name of a percentile key: `99` for 99, `99.9` for 99.9 (Python's str of the number). */
export function percentileWord(p: number): string {
  return String(p);
}

/**
 * One vLLM percentile block for metric `name`, in ms: `mean_{name}_ms`, `median_{name}_ms`,
 * `std_{name}_ms` and `p{P}_{name}_ms` for each P.
 * @param secondsValues the per-request (or pooled) values, in seconds
 */
export function vllmBlock(secondsValues: readonly number[], name: string, percentiles: readonly number[]): Record<string, number> {
  const v = secondsValues.length ? secondsValues : [0];
  const sorted = Float64Array.from(v).sort();
  const out: Record<string, number> = {
    [`mean_${name}_ms`]: meanOf(v)! * 1000,
    [`median_${name}_ms`]: medianSorted(sorted)! * 1000,
    [`std_${name}_ms`]: stdOf(v)! * 1000,
  };
  for (const p of percentiles) out[`p${percentileWord(p)}_${name}_ms`] = linearPercentileSorted(sorted, p)! * 1000;
  return out;
}
