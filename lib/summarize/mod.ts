/**
 * `ik summarize vllm` (seed 003): a unit of `vllm bench serve` result files, container logs,
 * sample manifests and boots, reduced to README tables, FLAGS and a pre-registered DECISION.
 * @module
 */
export { type SpreadLine, type SpreadResult, abSpread } from "./ab_spread.ts";
export { type BootCheck, checkBoots } from "./boots.ts";
export { type CellInput, type CellOutcome, type CellRow, summarizeCell } from "./cell.ts";
export { type ContainerLog, type ContainerRec, parseContainerLog } from "./container_log.ts";
export { type Decision, decide, type Verdict } from "./decision.ts";
export { JsonTextError, parseJsonValues } from "./lenient_json.ts";
export { fixed, fmt } from "./py_format.ts";
export { renderUnit } from "./report_text.ts";
export { type ClientRow, requestRows, type RowsLayout } from "./request_rows.ts";
export { parseRuns, type RunRow } from "./runs_table.ts";
export { parseSamples, type Sample } from "./sample_manifest.ts";
export { type CategoryStats, categoryTables, MT_BENCH, parseQuestions, promptSha16 } from "./specbench.ts";
export { parseTsv, type TsvTable } from "./tsv.ts";
export { type CategoryTable, type ReadText, summarizeUnit, type UnitOptions, type UnitSummary } from "./unit.ts";
export { pickNumber, readVllmResult, type VllmResult } from "./vllm_result.ts";

/** The JSON object `--json` prints and `--json-out` writes. */
export function unitJson(s: import("./unit.ts").UnitSummary): Record<string, unknown> {
  return {
    runs: s.runs,
    boots: s.boots,
    config: Object.fromEntries(s.config),
    spreads: (s.spread?.datasets ?? []).flatMap((d) => d.lines.filter((l) => l.spread_pct !== null).map((l) => ({ dataset: l.dataset, conc: l.conc, mean_out_tps: l.mean, spread_pct: l.spread_pct }))),
    spread_bad: s.spread?.bad ?? [],
    categories: Object.fromEntries(s.categories.map((c) => [c.tag, { verified: c.verified, by: c.by, groups: c.groups }])),
    flags: s.flags,
    decision: s.decision?.text ?? null,
    verdict: s.decision?.verdict ?? null,
    warnings: s.warnings,
  };
}
