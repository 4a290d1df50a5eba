/**
 * A distribution-free confidence interval for a quantile of independent observations: the
 * order statistics whose ranks bracket n·p by z·√(n·p·(1−p)) (the normal approximation to the
 * binomial count of values below the quantile). It is what a bootstrap over requests estimates,
 * at the cost of one sort, so it scales to load levels of 10^5–10^6 requests.
 * @module
 */
import { normalQuantile } from "./t_quantile.ts";

/**
 * The interval for the p-th percentile of an ascending array, or null for fewer than 20 values
 * (too few for the approximation: report no interval rather than a wrong one).
 * @param sorted ascending values
 * @param p percentile in (0, 100)
 */
export function orderStatisticCi(sorted: ArrayLike<number>, p: number, level = 0.95): [number, number] | null {
  const n = sorted.length;
  if (n < 20) return null;
  const q = p / 100;
  const z = normalQuantile(1 - (1 - level) / 2);
  const half = z * Math.sqrt(n * q * (1 - q));
  const lo = Math.max(0, Math.floor(n * q - half) - 1);
  const hi = Math.min(n - 1, Math.ceil(n * q + half));
  return [sorted[lo], sorted[hi]];
}

/** How {@link orderStatisticCi} intervals are described in records. */
export const CI_METHOD_ORDER_STATISTIC =
  "order-statistic 95% CI (binomial ranks n·p ± 1.96·√(n·p·(1−p))), requests treated as independent";
