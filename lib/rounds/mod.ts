/**
 * The pure parts of `ik bench rounds` (seed 001): the Williams order, the manifest, the summary
 * over rounds, the adaptive stop and the Markdown report. No I/O.
 * @module
 */
export { carryoverCounts, checkBalance, defaultRounds, DESIGN_NAME, roundOrders, williamsPeriod, williamsSquare } from "./williams.ts";
export type { BalanceReport, RoundDesign } from "./williams.ts";
export {
  checkManifest, DEFAULT_HOST, DEFAULT_READY_CHECK, ENGINE_FIELDS, engineKindFromName, formatProblem, MANIFEST_KINDS, manifestError,
  parseManifest,
} from "./manifest.ts";
export type { EngineSpec, ManifestProblem, RoundsEngineKind, RoundsManifest } from "./manifest.ts";
export { defaultMetricsPath, metricsPathOf, selectEngines } from "./engine_select.ts";
export { baseMetric, COUNT_METRICS, higherIsBetter, rankingDirection } from "./directions.ts";
export { NOT_COMPARABLE_STATUSES, roundsMedian, STATUSES_OK, summarize, summaryDefinitions } from "./summary.ts";
export { engineKindFromLaunch, resolveEngineKind } from "./engine_kind.ts";
export type { KindSource, KnownKind } from "./engine_kind.ts";
export { checkServedModel, engineExitedDetail, failureCount, hardGateDetail, maxFailFrom, tooManyFailures } from "./cell_checks.ts";
export { MIN_PAIRS_FOR_VERDICT, readRatio, referenceVerdict } from "./verdict.ts";
export type { RatioReading } from "./verdict.ts";
export type { CellMetric, FailureRow, RoundsSummary, SummarizeOptions, SummaryCell, SummaryRow } from "./summary.ts";
export {
  ADAPTIVE_BUCKET, ADAPTIVE_MAX_ROUNDS, ADAPTIVE_METRIC, adaptiveCheck, adaptivePlan, adaptiveStep, ciHalfWidths, planRounds,
} from "./adaptive.ts";
export type { AdaptiveCheck, AdaptivePlan, HalfWidth } from "./adaptive.ts";
export { formatG, formatValue, sortedJson, tableCell } from "./format.ts";
export { roundsMarkdown } from "./markdown.ts";
export type { ReportCell, ReportPlan, ReportResolved } from "./markdown.ts";
