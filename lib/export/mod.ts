/**
 * `ik export`: an evidence record as files other tools read: `vllm bench serve` result files
 * (load records), CSV (one row per level or bucket) and JSONL (the per-request rows).
 * @module
 */
export { csvCell, csvExportFiles, flatten, toCsv } from "./csv_export.ts";
export { jsonlExportFiles } from "./jsonl_export.ts";
export { type ExportLevel, type ExportSource, loadExportSource } from "./record_source.ts";
export { type ExportFile, exportMeta, vllmExportFiles } from "./vllm_export.ts";
export { pyJson, pyJsonString, vllmFloatKey, vllmJson } from "./py_json.ts";
export { EXPORT_PERCENTILES, IK_NOTES, levelDuration, peakStats, type VllmExportMeta, vllmDate, vllmError, vllmLevelResult } from "./vllm_level_file.ts";
export { linearPercentile, linearPercentileSorted, meanOf, medianSorted, pairwiseSum, stdOf, vllmBlock } from "./vllm_stats.ts";
