/**
 * `ik merge`: a sharded load run's slices joined into one measured and one capacity record.
 * @module
 */
export { findSlices, type Found, type Slice, type StagingLeft } from "./slices.ts";
export { checkGroup, type Group } from "./consistency.ts";
export { type Merged, type MergedLevel, mergeLevels, type ShardStats, SKEW_LIMIT_MS } from "./merge_levels.ts";
export { type MergeOutcome, writeMerged } from "./merged_records.ts";
