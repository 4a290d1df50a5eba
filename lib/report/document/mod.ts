/**
 * `ik report`'s content, the shared document model: what a report says (doc.ts), built from a
 * record, a rounds run, a points run or a store root (the *_doc.ts builders, fed by inputs.ts).
 * lib/report/markdown/ and lib/report/html/ render the same document, so the two forms cannot
 * drift apart.
 * @module
 */
export { buildReport, bundleBlocks, STORE_SECTIONS_MAX } from "./build_report.ts";
export { CDF_MAX_POINTS, CDF_PERCENTILES, cdfSeries, cdfTable } from "./cdf.ts";
export { docCharts, num, withCi } from "./doc.ts";
export type { Block, ChartPoint, ChartSeries, ChartSpec, ReportDoc } from "./doc.ts";
export { loadReportInput } from "./inputs.ts";
export type { PointInput, PointsInput, RecordBundle, ReportInput, RoundsInput } from "./inputs.ts";
export { capacityNStar, curveCharts, curveLevels, nStarOf, sloOf } from "./load_doc.ts";
export { capacityCurveLevels, capacityCurveTable } from "./capacity_curve.ts";
export type { CurveLevel, SloTargets } from "./load_doc.ts";
export { pointLevels, pointsBlocks } from "./points_doc.ts";
export { genericRecordBlocks, identityFacts, singleRecordBlocks } from "./record_doc.ts";
export { roundsBlocks } from "./rounds_doc.ts";
