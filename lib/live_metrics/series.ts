/**
 * One series of ik's live metrics: its labels, its value, and how the Prometheus text format writes
 * it. Counter, gauge and histogram children are the bound series that the hot path touches
 * (`inc`, `set`, `observe`: a few field writes, never a throw). Families and the registry that make
 * them are ./registry.ts.
 * @module
 */

/** Label names to values, as given by a caller (order does not matter). */
export type Labels = Readonly<Record<string, string>>;

/** One label of a series as remote write sends it. */
export interface Label {
  /** The label name (`__name__` for the metric name). */
  name: string;
  /** The label value. */
  value: string;
}

/** One series of a snapshot: its labels sorted by name (`__name__` included) and its value. */
export interface SeriesSample {
  /** Sorted by name, byte order; never mutated by the registry after creation (shared between snapshots). */
  labels: readonly Label[];
  /** The value at the snapshot's time (cumulative for `_bucket` and `_count`). */
  value: number;
}

/** Every series of a registry at one instant. */
export interface Snapshot {
  /** When it was taken, ms since the epoch (the samples' timestamp). */
  timestampMs: number;
  /** One entry per series: counters and gauges one each, a histogram `buckets + 3` per label set. */
  series: readonly SeriesSample[];
  /**
   * The last snapshot of the run: remote write ends each series with a stale marker 1 ms after
   * its sample (remote write 1.0: a sender MUST mark the series it will no longer write).
   */
  last?: boolean;
}

/** Options shared by every metric family. */
export interface MetricOptions {
  /** `ik_…` with the unit in the name; counters end in `_total`. */
  name: string;
  /** One line of help text (the `# HELP` line). */
  help: string;
  /** The label names every series of this family has (default none). */
  labelNames?: readonly string[];
  /** A gauge without labels whose value ik may never know (the server's own): no series until it is set, not a made-up 0. */
  unsetUntilKnown?: boolean;
}

/** Options of a histogram family. */
export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing, finite (`+Inf` is added); see ./buckets.ts. */
  buckets: readonly number[];
}

/** Orders labels by name, byte order (the order Prometheus and remote write expect). */
export const byName = (a: Label, b: Label) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A value as Prometheus text writes it (`+Inf`, `-Inf`, `NaN`, else the shortest round-trip form). */
export function formatPromValue(v: number): string {
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  if (Number.isNaN(v)) return "NaN";
  return String(v);
}

/** A label value escaped for the text format: `\` → `\\`, `"` → `\"`, newline → `\n`. */
export function escapeLabelValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : v;
}

/** Help text escaped for a `# HELP` line: `\` → `\\`, newline → `\n`. */
export function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** `{a="x",b="y"}` from labels already in order (empty string for none). */
export function labelText(labels: readonly Label[]): string {
  if (labels.length === 0) return "";
  return `{${labels.map((l) => `${l.name}="${escapeLabelValue(l.value)}"`).join(",")}}`;
}

/** The sorted label list of one emitted series: `__name__` plus the child's labels (plus `le`). */
export function seriesLabels(name: string, base: readonly Label[], extra?: Label): readonly Label[] {
  const all = [{ name: "__name__", value: name }, ...base];
  if (extra) all.push(extra);
  return Object.freeze(all.sort(byName).map((l) => Object.freeze(l)));
}

/** What a family's children share: labels checked and sorted once. */
export abstract class Child {
  /** Const and family labels, sorted by name (no `__name__`). */
  readonly base: readonly Label[];
  /** `{…}` of {@link base} for the text format. */
  readonly text: string;
  constructor(base: readonly Label[]) {
    this.base = base;
    this.text = labelText(base);
  }
}

/** One series of a counter: only goes up. */
export class CounterChild extends Child {
  #value = 0;
  /** The series' labels with `__name__`, for snapshots. */
  readonly series: readonly Label[];
  /** @internal made by {@link Counter.labels} */
  constructor(name: string, base: readonly Label[]) {
    super(base);
    this.series = seriesLabels(name, base);
  }
  /** Adds `by` (default 1); a negative, NaN or infinite `by` is ignored. */
  inc(by = 1): void {
    if (by >= 0 && by !== Infinity) this.#value += by;
  }
  /** The current value. */
  get(): number {
    return this.#value;
  }
}

/** One series of a gauge: any value. */
export class GaugeChild extends Child {
  #value = 0;
  /** The series' labels with `__name__`, for snapshots. */
  readonly series: readonly Label[];
  /** @internal made by {@link Gauge.labels} */
  constructor(name: string, base: readonly Label[]) {
    super(base);
    this.series = seriesLabels(name, base);
  }
  /** Sets the value (NaN is kept: Prometheus stores it as NaN). */
  set(v: number): void {
    this.#value = v;
  }
  /** Adds `by` (default 1); NaN is ignored. */
  inc(by = 1): void {
    if (!Number.isNaN(by)) this.#value += by;
  }
  /** Subtracts `by` (default 1); NaN is ignored. */
  dec(by = 1): void {
    if (!Number.isNaN(by)) this.#value -= by;
  }
  /** The current value. */
  get(): number {
    return this.#value;
  }
}

/** One series set of a histogram: per-bucket counts, the sum and the count. */
export class HistogramChild extends Child {
  readonly #bounds: readonly number[];
  /** Observations per bucket, NOT cumulative; the last slot is `+Inf`. */
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;
  /** Sorted labels of each `_bucket` series (one per bound, then `+Inf`), `_sum` and `_count`. */
  readonly bucketSeries: readonly (readonly Label[])[];
  /** The `_sum` series' labels. */
  readonly sumSeries: readonly Label[];
  /** The `_count` series' labels. */
  readonly countSeries: readonly Label[];
  /** @internal made by {@link Histogram.labels} */
  constructor(name: string, base: readonly Label[], bounds: readonly number[]) {
    super(base);
    this.#bounds = bounds;
    this.#counts = new Float64Array(bounds.length + 1);
    this.bucketSeries = [...bounds.map(formatPromValue), "+Inf"].map((le) =>
      seriesLabels(`${name}_bucket`, base, { name: "le", value: le })
    );
    this.sumSeries = seriesLabels(`${name}_sum`, base);
    this.countSeries = seriesLabels(`${name}_count`, base);
  }
  /** Records one observation (seconds for the latency histograms); NaN is ignored. */
  observe(v: number): void {
    if (Number.isNaN(v)) return;
    const b = this.#bounds;
    let i = 0;
    while (i < b.length && v > b[i]) i++;
    this.#counts[i]++;
    this.#sum += v;
    this.#count++;
  }
  /** Cumulative counts, one per bound and then `+Inf` (the last equals {@link count}). */
  cumulative(): number[] {
    const out: number[] = new Array(this.#counts.length);
    let run = 0;
    for (let i = 0; i < this.#counts.length; i++) {
      run += this.#counts[i];
      out[i] = run;
    }
    return out;
  }
  /** The sum of all observations. */
  sum(): number {
    return this.#sum;
  }
  /** How many observations were recorded. */
  count(): number {
    return this.#count;
  }
  /** The upper bounds (without `+Inf`). */
  bounds(): readonly number[] {
    return this.#bounds;
  }
}
