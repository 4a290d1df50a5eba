/**
 * Pure statistics (a leaf module: no I/O).
 * @module
 */
export { median, nearestRank, nearestRankIndex, nearestRankSorted } from "./percentile.ts";
export { SeededRng, mixSeed } from "./prng.ts";
export { normalQuantile, tQuantile } from "./t_quantile.ts";
export { CI_METHOD_T_CLUSTER, CI_TAIL_COVERAGE, clusterBootstrapCi, DEFAULT_RESAMPLES, pairedRatioCi } from "./bootstrap.ts";
export type { BootstrapOptions, Interval } from "./bootstrap.ts";
export { CI_METHOD_ORDER_STATISTIC, orderStatisticCi } from "./quantile_ci.ts";
