/**
 * Pure statistics (a leaf module: no I/O).
 * @module
 */
export { nearestRank } from "./percentile.ts";
