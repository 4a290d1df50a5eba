/**
 * Pure metrics: per-request rows in, bucket tables, load-level summaries, SLO, N* and cost out.
 * @module
 */
export { type Metric, metric, SPEED_METRICS } from "./metric.ts";
export { CHUNK_VALUES, type ChunkSpill, Column, type Percentiles, percentiles, rankSorted } from "./column.ts";
export { COST_FORMULA, hasSlo, meetsSlo, nStar, type Slo, type SloCheck, sloChecks, sloFromRecord, sloRecord, type SloRecord, type SloRow, usdPer1mTokens } from "./slo.ts";
export { type CensoredValue, failureAdjusted, LevelAccumulator, type LevelRow, type LevelSummary, sendLagWithoutCpuWait } from "./level.ts";
export { type BucketFigure, bucketMetrics, P99_MIN_REQUESTS, roundRows, type SingleRow } from "./bucket.ts";
export { ACHIEVED_FRACTION, type AchievedInput, notAchieved, type OfferedInput, offeredRate, scheduleRate } from "./achieved.ts";
