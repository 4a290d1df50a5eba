/**
 * Single-user summaries (seed 002): per bucket and `all`, the median and p95 of each speed metric
 * over every ok request, with 95% CIs by a t-scaled cluster bootstrap over rounds (requests in one
 * round share the server's state); and one row per round.
 * @module
 */
import { clusterBootstrapCi, nearestRank } from "../stats/mod.ts";
import { type Metric, metric, SPEED_METRICS } from "./metric.ts";

/** The row fields single mode reads. */
export interface SingleRow {
  ok: boolean;
  bucket: string | null;
  round: number;
  ttft_ms: number | null;
  tpot_ms: number | null;
  decode_tok_s: number | null;
  e2e_ms: number | null;
}

/** One metric's figures in the per-bucket table. */
export interface BucketFigure {
  median: number | null;
  p95: number | null;
  ci95_median: [number, number] | null;
  ci95_p95: [number, number] | null;
  /** Where the bucket has at least {@link P99_MIN_REQUESTS} values (nearest rank: with fewer than 100 values it is their maximum). */
  p99?: number | null;
  ci95_p99?: [number, number] | null;
  n: number;
  rounds: number;
}

/** A bucket reports p99 and requests/s from this many ok requests (a peer's users read them; issue 21). With fewer than 100 values the nearest-rank p99 is their maximum. */
export const P99_MIN_REQUESTS = 20;

/**
 * Evidence metrics per bucket and `all`, and the same figures as a table.
 * @param buckets bucket names in report order (`all` is appended)
 */
export function bucketMetrics(
  rows: readonly SingleRow[],
  buckets: readonly string[],
  opts: { resamples?: number; seed?: number } = {},
): { metrics: Metric[]; table: Record<string, Record<string, BucketFigure | null | number>> } {
  const metrics: Metric[] = [];
  const table: Record<string, Record<string, BucketFigure | null | number>> = {};
  for (const subject of [...buckets, "all"]) {
    const sel = rows.filter((r) => r.ok && (subject === "all" || r.bucket === subject));
    const entry: Record<string, BucketFigure | null | number> = { n_requests: sel.length };
    table[subject] = entry;
    for (const [name, unit] of SPEED_METRICS) {
      const have = sel.filter((r) => r[name] !== null);
      const values = have.map((r) => r[name] as number);
      const units = have.map((r) => r.round);
      if (!values.length) {
        metrics.push(metric(name, null, unit, "median", { n: 0, subject }));
        entry[name] = null;
        continue;
      }
      const tail = values.length >= P99_MIN_REQUESTS;
      const ci = clusterBootstrapCi(values, units, tail ? [50, 95, 99] : [50, 95], opts);
      metrics.push(metric(name, ci[50].value, unit, "median", { n: values.length, ci95: ci[50].ci, subject }));
      metrics.push(metric(name, ci[95].value, unit, "p95", { n: values.length, ci95: ci[95].ci, subject }));
      const fig: BucketFigure = { median: ci[50].value, p95: ci[95].value, ci95_median: ci[50].ci, ci95_p95: ci[95].ci, n: values.length, rounds: new Set(units).size };
      if (tail) {
        metrics.push(metric(name, ci[99].value, unit, "p99", { n: values.length, ci95: ci[99].ci, subject }));
        fig.p99 = ci[99].value;
        fig.ci95_p99 = ci[99].ci;
      }
      entry[name] = fig;
    }
    // One user's request rate: ok requests over the time the server spent on them, one at a time.
    const e2e = sel.map((r) => r.e2e_ms).filter((v): v is number => typeof v === "number" && v > 0);
    if (e2e.length >= P99_MIN_REQUESTS) {
      const rps = e2e.length / (e2e.reduce((a, b) => a + b, 0) / 1000);
      metrics.push(metric("requests_per_s", rps, "req/s", "mean", { n: e2e.length, subject }));
      entry.requests_per_s = rps;
    }
  }
  return { metrics, table };
}

/** One row per round: medians over that round's ok requests (the seed's round row shape). */
export function roundRows(
  rows: readonly SingleRow[],
  wall: ReadonlyMap<number, readonly [tStart: number, tEnd: number]>,
): Record<string, number | null>[] {
  return [...wall.entries()].sort(([a], [b]) => a - b).map(([r, [t0, t1]]) => {
    const sel = rows.filter((x) => x.round === r && x.ok);
    const med = (k: keyof SingleRow) => nearestRank(sel.map((x) => x[k]).filter((v): v is number => typeof v === "number"), 50);
    return {
      index: r,
      t_start: t0,
      t_end: t1,
      n_requests: sel.length,
      n_failed: rows.filter((x) => x.round === r && !x.ok).length,
      decode_tok_s: med("decode_tok_s"),
      ttft_ms: med("ttft_ms"),
      tpot_ms: med("tpot_ms"),
      total_ms: med("e2e_ms"),
    };
  });
}
