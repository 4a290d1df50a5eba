/**
 * What a rounds cell reads from its child `bench serve` (seed 001): the printed record, this
 * round's values (single mode: medians over the latest round's own request rows; load mode: the
 * capacity record's metrics), the cell status, the reference latency a load cell used, and each
 * engine's resolved-config summary over its rounds. Pure.
 * @module
 */
import { type CellMetric, roundsMedian } from "./summary.ts";
import type { ReportResolved } from "./markdown.ts";

/** `{bucket: {metric: value}}` of one cell. */
export type CellMetrics = Record<string, Record<string, CellMetric & { stat?: string | null }>>;

/** The JSON object `bench serve --json` printed, or null (a log line before it is tolerated). */
export function parseServeOutput(stdout: string): Record<string, unknown> | null {
  const text = (stdout ?? "").trim();
  if (!text) return null;
  const tryParse = (s: string) => {
    try {
      const v = JSON.parse(s);
      return v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : null;
    } catch {
      return undefined;
    }
  };
  const whole = tryParse(text);
  if (whole !== undefined) return whole;
  // One JSON object per line is what --json prints; take the last line that parses.
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].trimStart().startsWith("{")) continue;
    const v = tryParse(lines.slice(i).join("\n"));
    if (v !== undefined) return v;
  }
  return null;
}

/** Metrics read from rows, with their units. */
export const ROW_METRICS: readonly (readonly [string, string])[] = [["ttft_ms", "ms"], ["tpot_ms", "ms"], ["decode_tok_s", "tok/s"], ["e2e_ms", "ms"]];

/**
 * `[round, metrics]` for the latest round in `rows`: per bucket and `all`, the nearest-rank median over that
 * round's ok requests, and `failed_requests` (its failures, with n = the round's requests). An
 * extended record holds every earlier round too; only the latest is this cell's.
 */
export function roundMetricsFromRows(rows: readonly Record<string, unknown>[]): [number | null, CellMetrics] {
  const rounds = rows.map((r) => r.round).filter((x): x is number => typeof x === "number" && Number.isInteger(x));
  if (!rounds.length) return [null, {}];
  const k = Math.max(...rounds);
  const mine = rows.filter((r) => r.round === k);
  const out: CellMetrics = {};
  const buckets = [...new Set(mine.map((r) => String(r.bucket ?? "all")))].filter((b) => b !== "all").sort();
  for (const bucket of [...buckets, "all"]) {
    const sel = mine.filter((r) => bucket === "all" || String(r.bucket ?? "all") === bucket);
    const ok = sel.filter((r) => r.ok === true);
    const mets: Record<string, CellMetric & { stat?: string | null }> = {};
    for (const [name, unit] of ROW_METRICS) {
      const vals = ok.map((r) => r[name]).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
      const m = roundsMedian(vals);
      if (m !== null) mets[name] = { value: m, unit, stat: "median", n: vals.length };
    }
    mets.failed_requests = { value: sel.length - ok.length, unit: "requests", stat: "count", n: sel.length };
    out[bucket] = mets;
  }
  return [k, out];
}

const PLAIN_STATS = new Set(["", "median", "p50", "value", "threshold", "lower_bound"]);
const STAR_NAMES = new Set(["n_star", "rate_star_rps"]);

/** The top level of a capacity record's grid (`data.curve`), or null. */
function gridTop(record: Record<string, unknown>): number | null {
  const curve = (record.data as { curve?: unknown } | undefined)?.curve;
  if (!Array.isArray(curve)) return null;
  const levels = curve.map((l) => (l as { level?: unknown })?.level).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  return levels.length ? Math.max(...levels) : null;
}

function bucketOf(m: Record<string, unknown>): string {
  if (m.bucket !== undefined && m.bucket !== null) return String(m.bucket);
  const subject = String(m.subject ?? "");
  if (!subject) return "all";
  const last = subject.split("/").pop() as string;
  for (const sep of ["=", ":"]) {
    const i = last.indexOf(sep);
    if (i > 0 && last.slice(0, i).trim().toLowerCase() === "bucket") return last.slice(i + 1).trim();
  }
  return last;
}

/**
 * `{bucket: {metric: value}}` from a record's `metrics` list (load mode: the capacity record). A
 * stat other than the median is appended to the name (`ttft_ms_p95_at_n_star`); null values are
 * skipped. An N* (or max rate) marked `lower_bound`, or at the top of the record's grid (the SLO
 * held at every level tried), keeps its name and gets `lower_bound: true`.
 */
export function recordBucketMetrics(record: Record<string, unknown> | null): CellMetrics {
  const out: CellMetrics = {};
  if (!record || !Array.isArray(record.metrics)) return out;
  const top = gridTop(record);
  for (const m of record.metrics as Record<string, unknown>[]) {
    if (!m || typeof m !== "object" || typeof m.name !== "string" || !m.name) continue;
    const v = m.value;
    if (typeof v !== "number" || !Number.isFinite(v)) continue;
    const stat = typeof m.stat === "string" ? m.stat : "";
    const key = PLAIN_STATS.has(stat) ? m.name : `${m.name}_${stat}`;
    const entry: CellMetric & { stat?: string | null } = { value: v, unit: typeof m.unit === "string" ? m.unit : null, stat: stat || null, n: typeof m.n === "number" ? m.n : undefined };
    if (STAR_NAMES.has(m.name) && (stat === "lower_bound" || (top !== null && v >= top))) entry.lower_bound = true;
    (out[bucketOf(m)] ??= {})[key] = entry;
  }
  return out;
}

/**
 * `[status, detail]` of a measured cell: `serve_failed` (non-zero exit, no record, or every
 * request failed), `serve_no_metrics` (a record with nothing to compare) or `ok`.
 */
export function cellStatus(code: number | null, record: Record<string, unknown> | null, metrics: CellMetrics): [string, string | null] {
  if (code !== 0 || record === null) return ["serve_failed", code !== 0 ? `bench serve exited ${code ?? "by a signal"}` : "bench serve printed no record"];
  if (!Object.keys(metrics).length) return ["serve_no_metrics", "the record has no metric this summary can compare"];
  const failed = metrics.all?.failed_requests;
  if (failed && typeof failed.n === "number" && failed.n > 0 && failed.value >= failed.n) return ["serve_failed", `all ${failed.n} requests failed`];
  return ["ok", null];
}

/**
 * The reference e2e latency (ms) a load cell used: `data.e2e_ref_ms` of the record, else of the
 * measured record its capacity record cites (`readMeasured(id)`); null when none.
 */
export function referenceE2eMs(record: Record<string, unknown> | null, readMeasured: (id: string) => Record<string, unknown> | null): number | null {
  if (!record) return null;
  const data = (record.data && typeof record.data === "object" ? record.data : {}) as Record<string, unknown>;
  let x = data.e2e_ref_ms;
  if (x === undefined && typeof data.measurement === "string") {
    const m = readMeasured(data.measurement);
    x = (m?.data as Record<string, unknown> | undefined)?.e2e_ref_ms;
  }
  return typeof x === "number" && Number.isFinite(x) && x > 0 ? x : null;
}

/** What a cell keeps about its resolved config. */
export interface CellResolved {
  status: string;
  version: string | null;
  warnings: number;
  unknown_settings: string[];
  violations: string[];
  unverified: string[];
  self_reported: string[];
  file: string;
}

const RANK: Record<string, number> = { RESOLVED: 0, SELF_REPORTED: 1, UNPROVEN: 2 };

/** Per engine: the weakest resolved-config status over its rounds, and what varied. */
export function resolvedSummary(cells: readonly { label: string; resolved_config?: CellResolved | null }[], labels: readonly string[]): Record<string, ReportResolved & { rounds: number; unverified: string[]; files: string[] }> {
  const out: Record<string, ReportResolved & { rounds: number; unverified: string[]; files: string[] }> = {};
  for (const label of labels) {
    const mine = cells.filter((c) => c.label === label && c.resolved_config).map((c) => c.resolved_config as CellResolved);
    if (!mine.length) {
      out[label] = { status: "UNPROVEN", version: null, warnings: 0, unknown_settings: [], violations: [], self_reported: [], unverified: [], rounds: 0, files: [] };
      continue;
    }
    const worst = mine.reduce((a, b) => ((RANK[b.status] ?? 2) > (RANK[a.status] ?? 2) ? b : a));
    const union = (f: (r: CellResolved) => string[]) => [...new Set(mine.flatMap(f))].sort();
    out[label] = {
      status: worst.status,
      version: mine.find((r) => r.version)?.version ?? null,
      warnings: Math.max(...mine.map((r) => r.warnings)),
      unknown_settings: union((r) => r.unknown_settings),
      violations: union((r) => r.violations),
      unverified: union((r) => r.unverified),
      self_reported: union((r) => r.self_reported),
      rounds: mine.length,
      files: mine.map((r) => r.file),
    };
  }
  return out;
}
