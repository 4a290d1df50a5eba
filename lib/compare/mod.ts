/**
 * `ik compare`: two single-mode records paired round by round (ratio B / A with a paired
 * bootstrap CI per bucket and metric), and the record loading `ik report` shares.
 * @module
 */
export { COMPARE_DEFINITIONS, compareRecords, readRatio } from "./compare_records.ts";
export type { CompareFailure, CompareOptions, CompareRow, CompareSide, Comparison, MedianBasis } from "./compare_records.ts";
export { assertComparable, differenceNotes, recordMode, roundOrderNote, sideFacts } from "./comparable.ts";
export { renderComparison } from "./compare_text.ts";
export { loadRecordRef, parseJsonl, readCheckedRecord, readRequestRows } from "./record_ref.ts";
export type { LoadedRecord } from "./record_ref.ts";
export { assertKnownSchema, OLDEST_RECORD_SCHEMA, recordSchemaProblem } from "./record_schema.ts";
export { requestSetDifference, requestSetOf } from "./request_set_diff.ts";
export { ALL_BUCKET, COMPARE_METRICS, roundMedians } from "./round_medians.ts";
export type { RoundMedians } from "./round_medians.ts";
