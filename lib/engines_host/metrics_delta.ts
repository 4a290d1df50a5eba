/**
 * What an engine's own metrics say about one cell: the Prometheus text scraped before and after
 * the measurement (issue 10, cell step 6), reduced to the delta of every counter and the
 * before/after values of every gauge, keyed by series (`name{label="v",…}`, labels sorted).
 *
 * Counters are samples whose name ends in `_total`, whose family is declared `# TYPE … counter`,
 * and the `_sum`/`_count` of histograms and summaries. Histogram `_bucket` lines are left out (one
 * series per bucket would swamp the record; `_sum`/`_count` give the mean). `_created` samples
 * (the creation timestamps Python clients expose as gauges beside counters and histograms) are left
 * out too. Gauges are samples declared `gauge`, and untyped ones that are not counters, and the
 * few that an engine declares `counter` but that are not monotonic ({@link NOT_COUNTERS}).
 * @module
 */
import { parsePrometheusText, type PromSample } from "../scrape/prometheus_text.ts";

/** One counter series across the cell. */
export interface CounterDelta {
  /** The value before (null when the series appeared only after). */
  before: number | null;
  /** The value after (null when the series was gone after). */
  after: number | null;
  /** after − before; after alone when the series is new or was reset; null when gone or not finite. */
  delta: number | null;
  /** True when after < before: the counter restarted, so delta is `after` (from zero). */
  reset?: boolean;
}

/** One gauge series across the cell. */
export interface GaugeChange {
  /** The value before (null when absent). */
  before: number | null;
  /** The value after (null when absent). */
  after: number | null;
}

/** The delta of a cell. */
export interface MetricsDelta {
  /** False when either text is missing (the scrape was not available); counters and gauges are then empty. */
  available: boolean;
  /** Counter series → before, after, delta. */
  counters: Record<string, CounterDelta>;
  /** Gauge series → before, after. */
  gauges: Record<string, GaugeChange>;
  /** Resets, series that appeared or vanished, unreadable lines, a missing scrape. */
  notes: string[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** The series key: the metric name and its labels sorted by name, `name{a="1",b="2"}` (no braces when none). */
export function seriesKey(name: string, labels: Record<string, string>): string {
  const keys = Object.keys(labels).sort();
  if (!keys.length) return name;
  return `${name}{${keys.map((k) => `${k}="${escapeLabel(labels[k])}"`).join(",")}}`;
}

type Kind = "counter" | "gauge" | null;

/**
 * Metrics an engine declares `counter` that are not counts of events, read as gauges: llama.cpp's
 * `n_busy_slots_per_decode` is an average (busy slots over decode calls), typed counter by older
 * builds (wire-formats.md §3.5; build b10587 types it gauge), and a fall in it is no restart;
 * `n_tokens_max` ("Largest observed n_tokens", typed counter) is a high-water mark, whose
 * difference over a cell means nothing.
 */
const NOT_COUNTERS = new Set(["llamacpp:n_busy_slots_per_decode", "llamacpp:n_tokens_max"]);

/** Classifies a sample name given the `# TYPE` declarations (null: left out). */
function classify(name: string, types: Record<string, string>): Kind {
  if (NOT_COUNTERS.has(name)) return "gauge";
  const declared = types[name];
  if (declared === "counter") return "counter"; // `# TYPE x_total counter` (Prometheus text)
  if (name.endsWith("_created") && isCreatedOf(name, types)) return null;
  if (declared === "gauge") return "gauge";
  for (const suffix of ["_sum", "_count", "_bucket", "_created", "_gsum", "_gcount"]) {
    if (!name.endsWith(suffix)) continue;
    const t = types[name.slice(0, -suffix.length)];
    if (t === "histogram" || t === "summary") return suffix === "_sum" || suffix === "_count" ? "counter" : null;
    if (t === "gaugehistogram") return suffix === "_gsum" || suffix === "_gcount" ? "gauge" : null;
  }
  if (name.endsWith("_total")) return "counter"; // `# TYPE x counter` (OpenMetrics), or undeclared
  if (declared === undefined || declared === "untyped" || declared === "unknown") {
    return name.endsWith("_bucket") ? null : "gauge";
  }
  return null; // declared as something else (info, stateset…): nothing to compare
}

/** Whether `X_created` is the creation timestamp of a counter `X`/`X_total` or histogram/summary `X`. */
function isCreatedOf(name: string, types: Record<string, string>): boolean {
  const fam = name.slice(0, -"_created".length);
  const t = types[fam] ?? types[fam + "_total"];
  return t === "counter" || t === "histogram" || t === "summary" || t === "gaugehistogram";
}

function tidy(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(12)) : x;
}

interface Side {
  counters: Map<string, number>;
  gauges: Map<string, number>;
}

function collect(text: string, which: string, notes: string[]): Side {
  const p = parsePrometheusText(text);
  if (p.badLines) notes.push(`${which}: ${p.badLines} unreadable line(s), first: ${JSON.stringify(p.firstBad ?? "")}`);
  if (p.truncated) notes.push(`${which}: the exposition was over the size cap; the rest was not read`);
  const side: Side = { counters: new Map(), gauges: new Map() };
  const dup = new Set<string>();
  for (const s of p.samples as PromSample[]) {
    const kind = classify(s.name, p.types);
    if (kind === null) continue;
    const key = seriesKey(s.name, s.labels);
    const map = kind === "counter" ? side.counters : side.gauges;
    if (map.has(key)) dup.add(key);
    map.set(key, s.value);
  }
  if (dup.size) notes.push(`${which}: ${dup.size} series listed more than once (the last value kept), e.g. ${[...dup][0]}`);
  return side;
}

/**
 * The delta between two scrapes of one engine. A null (or non-string) text means that scrape was
 * not available: the result is `available: false` with a note, never an exception.
 *
 * @example
 * const d = metricsDelta(beforeText, afterText);
 * d.counters['vllm:generation_tokens_total{engine="0",model_name="m"}'].delta // tokens generated in the cell
 */
export function metricsDelta(before: string | null | undefined, after: string | null | undefined): MetricsDelta {
  const out: MetricsDelta = { available: false, counters: {}, gauges: {}, notes: [] };
  const miss = [typeof before !== "string" ? "before" : null, typeof after !== "string" ? "after" : null]
    .filter((x) => x !== null);
  if (miss.length) {
    out.notes.push(`metrics scrape not available (${miss.join(" and ")}): no delta`);
    return out;
  }
  out.available = true;
  const b = collect(before as string, "before", out.notes);
  const a = collect(after as string, "after", out.notes);
  const resets: string[] = [], fresh: string[] = [], gone: string[] = [];
  const ckeys = [...new Set([...b.counters.keys(), ...a.counters.keys()])].sort();
  for (const k of ckeys) {
    const x = b.counters.get(k) ?? null, y = a.counters.get(k) ?? null;
    let entry: CounterDelta;
    if (y === null) {
      entry = { before: x, after: null, delta: null };
      gone.push(k);
    } else if (x === null) {
      entry = { before: null, after: y, delta: tidy(y) };
      fresh.push(k);
    } else if (y < x) {
      entry = { before: x, after: y, delta: tidy(y), reset: true };
      resets.push(k);
    } else {
      const d = y - x;
      entry = { before: x, after: y, delta: Number.isFinite(d) ? tidy(d) : null };
    }
    out.counters[k] = entry;
  }
  const gkeys = [...new Set([...b.gauges.keys(), ...a.gauges.keys()])].sort();
  for (const k of gkeys) out.gauges[k] = { before: b.gauges.get(k) ?? null, after: a.gauges.get(k) ?? null };
  const list = (xs: string[]) => xs.slice(0, 3).join(", ") + (xs.length > 3 ? `, … (${xs.length} in all)` : "");
  if (resets.length) {
    out.notes.push(`counter reset (after < before; the engine restarted?): ${list(resets)}; delta taken from zero`);
  }
  if (fresh.length) out.notes.push(`${fresh.length} counter series appeared during the cell (delta from zero): ${list(fresh)}`);
  if (gone.length) out.notes.push(`${gone.length} counter series vanished during the cell (no delta): ${list(gone)}`);
  return out;
}
