/**
 * Empirical CDFs for the report: the chart series (thinned to a few hundred points, so a load
 * level of 10^5 requests still gives a small page) and the table of percentiles that says the
 * same in numbers. Percentiles are nearest-rank over every value, not over the thinned points.
 * @module
 */
import { nearestRank } from "../../stats/mod.ts";
import { type Block, type ChartSeries, num } from "./doc.ts";

/** Points a CDF series keeps at most. */
export const CDF_MAX_POINTS = 400;

/** The percentiles the CDF table shows. */
export const CDF_PERCENTILES: readonly number[] = [10, 50, 90, 95, 99];

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * A CDF series of the finite values, or null when there are none: point i is (the i-th smallest
 * value, (i + 1) / n); at most `maxPoints` of them, always the first and the last.
 */
export function cdfSeries(name: string, values: readonly unknown[], maxPoints = CDF_MAX_POINTS): ChartSeries | null {
  const xs = values.filter(finite).sort((a, b) => a - b);
  const n = xs.length;
  if (!n) return null;
  const keep = Math.max(2, maxPoints);
  const idx = n <= keep ? xs.map((_, i) => i) : Array.from({ length: keep }, (_, k) => Math.round((k * (n - 1)) / (keep - 1)));
  return { name, n, points: [...new Set(idx)].map((i) => ({ x: xs[i], y: (i + 1) / n })) };
}

/** A table: per series, n and the {@link CDF_PERCENTILES} and max of its values (unit in the head). */
export function cdfTable(groups: readonly { name: string; values: readonly unknown[] }[], unit: string, first = "series"): Block {
  const rows = groups.map((g) => {
    const xs = g.values.filter(finite);
    return [g.name, String(xs.length), ...CDF_PERCENTILES.map((p) => num(nearestRank(xs, p))), num(xs.length ? xs.reduce((m, x) => (x > m ? x : m), -Infinity) : null)];
  });
  return { kind: "table", head: [first, "n", ...CDF_PERCENTILES.map((p) => `p${p} ${unit}`), `max ${unit}`], rows };
}
