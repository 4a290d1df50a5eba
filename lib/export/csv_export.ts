/**
 * `ik export --format csv`: one row per load level, per bucket of a single-mode record, or per
 * turn index of a conversations record, for spreadsheets. The values are the record's own (ik's nearest-rank percentiles; a column says
 * so); nested fields flatten to `a_b` columns, a two-element interval to `_lo` / `_hi`.
 * @module
 */
import type { ExportFile } from "./vllm_export.ts";
import type { ExportSource, Obj } from "./record_source.ts";

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});

/** Flattens nested objects into `prefix_key` cells. */
export function flatten(v: unknown, prefix: string, out: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(v)) {
    if (v.length === 2 && v.every((x) => typeof x === "number" || x === null)) {
      out[`${prefix}_lo`] = v[0];
      out[`${prefix}_hi`] = v[1];
    } else out[prefix] = JSON.stringify(v);
  } else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) flatten(x, prefix ? `${prefix}_${k}` : k, out);
  } else if (v === null && /(^|_)ci95/.test(prefix)) {
    // an interval that could not be computed keeps the columns of one that could
    out[`${prefix}_lo`] = null;
    out[`${prefix}_hi`] = null;
  } else out[prefix] = v;
  return out;
}

/** One CSV cell (RFC 4180 quoting; null and undefined are empty). */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  const s = typeof v === "string" ? v : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Rows to CSV text; the columns are every key, in first-seen order. */
export function toCsv(rows: readonly Record<string, unknown>[]): string {
  const cols: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) if (!seen.has(k)) (seen.add(k), cols.push(k));
  return [cols.map(csvCell).join(","), ...rows.map((r) => cols.map((c) => csvCell(r[c])).join(","))].join("\r\n") + "\r\n";
}

/** The CSV file of a record. */
export function csvExportFiles(src: ExportSource): ExportFile[] {
  const data = obj(src.record.data);
  const label = data.label ?? null;
  let rows: Record<string, unknown>[];
  if (src.mode === "load") {
    rows = src.levels.map((lv) => {
      const { summary, event_loop_lag_ms: _lag, server, ...rest } = lv.entry;
      const row: Record<string, unknown> = {
        evidence_id: src.evidenceId, label, level_kind: data.level_kind ?? null, open_loop: data.open_loop ?? null, percentile_method: "nearest rank (ik)",
      };
      flatten(rest, "", row);
      flatten(summary, "", row);
      const means = obj(obj(server).means);
      row.server_running_mean = means.running ?? null;
      row.server_waiting_mean = means.waiting ?? null;
      return row;
    });
  } else if (src.mode === "conversations") {
    // One row per turn index (data.turns), with the run's throughput repeated on each.
    const complete = src.record.complete === true;
    const tp = obj(data.throughput);
    rows = (Array.isArray(data.turns) ? data.turns : []).map((t) =>
      flatten(t, "", {
        evidence_id: src.evidenceId, label, complete, percentile_method: "nearest rank (ik)",
        run_duration_s: tp.duration_s ?? null, run_requests_per_s: tp.requests_per_s ?? null, run_output_tok_s: tp.output_tok_s ?? null,
      })
    );
  } else {
    // An interrupted run's buckets cover only the rounds that finished: every row says whether the record is complete.
    const complete = src.record.complete === true;
    rows = Object.entries(obj(data.buckets)).map(([bucket, stats]) =>
      flatten(stats, "", { evidence_id: src.evidenceId, label, bucket, complete, percentile_method: "nearest rank (ik); CIs over rounds" })
    );
  }
  return [{ name: `${src.evidenceId}.csv`, text: toCsv(rows) }];
}
