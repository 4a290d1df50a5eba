/**
 * The content of an `ik report`, apart from how it is drawn: headings, paragraphs, fact lists,
 * tables and charts. Builders (record_doc.ts, load_doc.ts, rounds_doc.ts, points_doc.ts,
 * store_doc.ts) turn records into blocks; lib/report/markdown/ and lib/report/html/ turn blocks into text.
 * All text in a block is plain (unescaped): each renderer escapes for its own format.
 * @module
 */
import { formatValue } from "../../rounds/format.ts";

/** One point of a chart. */
export interface ChartPoint {
  x: number;
  y: number;
  /** Shown beside the point and in its tooltip (a level name). */
  label?: string;
}

/** One line of a chart. */
export interface ChartSeries {
  name: string;
  points: ChartPoint[];
  /** Observations behind the series (a CDF is drawn from fewer points than it has values). */
  n?: number;
}

/** A chart: a latency–throughput curve (points joined, labelled) or a CDF (a step line). */
export interface ChartSpec {
  kind: "curve" | "cdf";
  title: string;
  x: { label: string };
  y: { label: string };
  series: ChartSeries[];
  /** Horizontal lines (the SLO). */
  hlines?: { y: number; label: string }[];
  /** Marked points (N*). */
  marks?: { x: number; y: number; label: string }[];
}

/** One piece of a report. */
export type Block =
  | { kind: "heading"; level: 2 | 3 | 4; text: string }
  | { kind: "para"; text: string; tone?: "warn" | "note" }
  | { kind: "facts"; items: [label: string, value: string][] }
  | { kind: "list"; items: string[] }
  | { kind: "table"; head: string[]; rows: string[][]; caption?: string }
  | { kind: "chart"; chart: ChartSpec };

/** A whole report. */
export interface ReportDoc {
  title: string;
  blocks: Block[];
}

/** The charts in a report, in order. */
export function docCharts(doc: ReportDoc): ChartSpec[] {
  return doc.blocks.flatMap((b) => (b.kind === "chart" ? [b.chart] : []));
}

/** A number for a table: three significant digits, whole from 1000 on, `-` for none. */
export function num(x: unknown, digits = 3): string {
  return typeof x === "number" && Number.isFinite(x) ? formatValue(x, digits) : "-";
}

/**
 * `value [lo, hi]`, or just the value when there is no interval. Digits grow (3 to 6) until the
 * bounds of a narrow interval print apart, so `10 [10, 10]` becomes `10.01 [10, 10.02]`.
 */
export function withCi(value: unknown, ci: unknown): string {
  const v = num(value);
  if (v === "-" || !Array.isArray(ci) || ci.length !== 2 || typeof ci[0] !== "number" || typeof ci[1] !== "number") return v;
  let d = 3;
  while (d < 6 && ci[0] !== ci[1] && num(ci[0], d) === num(ci[1], d)) d++;
  return `${num(value, d)} [${num(ci[0], d)}, ${num(ci[1], d)}]`;
}

/** A plain object view of an unknown value ({} for anything else). */
export function obj(v: unknown): Record<string, any> {
  return v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, any> : {};
}

/** The strings in an unknown list (anything else dropped). */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x) => x !== null && x !== undefined).map((x) => (typeof x === "string" ? x : JSON.stringify(x))) : [];
}

/** Text of an unknown field: strings as they are, other values as JSON, `-` for none. */
export function text(v: unknown): string {
  if (v === null || v === undefined || v === "") return "-";
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
}
