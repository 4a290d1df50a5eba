/**
 * ik's live metrics registry: counters, gauges and classic histograms with label sets, rendered as
 * Prometheus text exposition 0.0.4 ({@link MetricsRegistry.render}, for a `/metrics` page) and
 * taken as a {@link Snapshot} of every series (for remote write, ./remote_write.ts).
 *
 * Names: `ik_` first, the unit in the name (`ik_ttft_seconds`, `ik_output_tokens_total`), and
 * counters end in `_total`. Every label name and value goes through ./label_guard.ts once, when its
 * label set is first used (endpoints are named by their HMAC tag, never by a URL). The hot path
 * (`inc`, `set`, `observe` on a bound child from `labels()`) is a few field writes and never throws;
 * a bad increment (negative, NaN) is ignored, and so is a NaN observation.
 * @module
 */
import { checkBuckets } from "./buckets.ts";
import { assertSafeLabel, labelNameProblem, LabelRefusedError } from "./label_guard.ts";
import {
  byName,
  type Child,
  CounterChild,
  escapeHelp,
  escapeLabelValue,
  formatPromValue,
  GaugeChild,
  HistogramChild,
  type HistogramOptions,
  type Label,
  type Labels,
  type MetricOptions,
  type SeriesSample,
  type Snapshot,
} from "./series.ts";

/** Options of a registry. */
export interface RegistryOptions {
  /** Labels added to every series (a run id, the endpoint's HMAC tag); guarded like any label. */
  constLabels?: Labels;
}

const METRIC_NAME = /^ik_[a-zA-Z0-9_]+$/;
const HISTOGRAM_SUFFIXES = ["_bucket", "_sum", "_count"];

/** A metric family: its name, help, label names and the series made so far. */
abstract class Family<C extends Child> {
  /** The metric name. */
  readonly name: string;
  /** The help line. */
  readonly help: string;
  /** The label names each series has, as declared. */
  readonly labelNames: readonly string[];
  /** `counter`, `gauge` or `histogram`. */
  abstract readonly type: string;
  readonly #constLabels: readonly Label[];
  readonly #children = new Map<string, C>();
  #unlabelled: C | null = null;

  constructor(opts: MetricOptions, constLabels: readonly Label[]) {
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = Object.freeze([...(opts.labelNames ?? [])]);
    this.#constLabels = constLabels;
    const seen = new Set(constLabels.map((l) => l.name));
    for (const n of this.labelNames) {
      const why = labelNameProblem(n);
      if (why) throw new LabelRefusedError(`${this.name}: ${why}`);
      if (seen.has(n)) {
        throw new TypeError(`${this.name}: label name ${n} is given twice (or is also a const label)`);
      }
      seen.add(n);
    }
  }

  protected abstract make(base: readonly Label[]): C;

  /** Makes the one series of a family without labels at once (it exists from the start, at 0). */
  protected init(): void {
    if (this.labelNames.length === 0) this.#unlabelled = this.labels({});
  }

  /**
   * The series for these label values (every declared label, no other), made on first use: its
   * labels are guarded then (throws {@link LabelRefusedError} or a TypeError for a missing or
   * unknown label). Keep the returned child for the hot path.
   */
  labels(values: Labels = {}): C {
    if (this.labelNames.length === 0 && this.#unlabelled) {
      if (Object.keys(values).length > 0) throw new TypeError(`${this.name}: has no labels`);
      return this.#unlabelled;
    }
    const vals = this.labelNames.map((n) => values[n]);
    const key = JSON.stringify(vals);
    const hit = this.#children.get(key);
    if (hit) return hit;
    for (const k of Object.keys(values)) {
      if (!this.labelNames.includes(k)) throw new TypeError(`${this.name}: unknown label ${k}`);
    }
    const base: Label[] = [...this.#constLabels];
    this.labelNames.forEach((n, i) => {
      if (typeof vals[i] !== "string") {
        throw new TypeError(`${this.name}: label ${n} is missing (or not a string)`);
      }
      assertSafeLabel(n, vals[i]);
      base.push({ name: n, value: vals[i] });
    });
    const child = this.make(Object.freeze(base.sort(byName).map((l) => Object.freeze(l))));
    this.#children.set(key, child);
    return child;
  }

  /** How many label sets have a series so far. */
  get size(): number {
    return this.#children.size;
  }

  /** Every series made so far, sorted by their label text (a stable order for render and snapshot). */
  children(): C[] {
    return [...this.#children.values()].sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  }

  /** The `# HELP` and `# TYPE` lines, then the samples. */
  abstract render(out: string[]): void;
  /** Appends this family's series to a snapshot. */
  abstract collect(out: SeriesSample[]): void;
  /** How many series a snapshot of this family holds now. */
  abstract seriesCount(): number;

  protected header(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
  }
}

/** A counter family (monotonic; the name ends in `_total`). */
export class Counter extends Family<CounterChild> {
  /** Always `counter`. */
  readonly type = "counter";
  /** @internal made by {@link MetricsRegistry.counter} */
  constructor(opts: MetricOptions, constLabels: readonly Label[]) {
    super(opts, constLabels);
    this.init();
  }
  protected make(base: readonly Label[]): CounterChild {
    return new CounterChild(this.name, base);
  }
  /** Adds `by` (default 1) to the series of `labels` (see {@link Family.labels}). */
  inc(labels: Labels = {}, by = 1): void {
    this.labels(labels).inc(by);
  }
  /** @inheritdoc */
  render(out: string[]): void {
    this.header(out);
    for (const c of this.children()) out.push(`${this.name}${c.text} ${formatPromValue(c.get())}`);
  }
  /** @inheritdoc */
  collect(out: SeriesSample[]): void {
    for (const c of this.children()) out.push({ labels: c.series, value: c.get() });
  }
  /** @inheritdoc */
  seriesCount(): number {
    return this.size;
  }
}

/** A gauge family (any value: in-flight requests, the offered rate). */
export class Gauge extends Family<GaugeChild> {
  /** Always `gauge`. */
  readonly type = "gauge";
  /** @internal made by {@link MetricsRegistry.gauge} */
  constructor(opts: MetricOptions, constLabels: readonly Label[]) {
    super(opts, constLabels);
    if (!opts.unsetUntilKnown) this.init();
  }
  protected make(base: readonly Label[]): GaugeChild {
    return new GaugeChild(this.name, base);
  }
  /** Sets the series of `labels` to `v`. */
  set(labels: Labels, v: number): void {
    this.labels(labels).set(v);
  }
  /** @inheritdoc */
  render(out: string[]): void {
    this.header(out);
    for (const c of this.children()) out.push(`${this.name}${c.text} ${formatPromValue(c.get())}`);
  }
  /** @inheritdoc */
  collect(out: SeriesSample[]): void {
    for (const c of this.children()) out.push({ labels: c.series, value: c.get() });
  }
  /** @inheritdoc */
  seriesCount(): number {
    return this.size;
  }
}

/** A classic histogram family: `_bucket{le=…}` (cumulative, up to `+Inf`), `_sum` and `_count`. */
export class Histogram extends Family<HistogramChild> {
  /** Always `histogram`. */
  readonly type = "histogram";
  /** The upper bounds (without `+Inf`). */
  readonly buckets: readonly number[];
  /** @internal made by {@link MetricsRegistry.histogram} */
  constructor(opts: HistogramOptions, constLabels: readonly Label[]) {
    super(opts, constLabels);
    checkBuckets(opts.buckets);
    this.buckets = Object.freeze([...opts.buckets]);
    this.init();
  }
  protected make(base: readonly Label[]): HistogramChild {
    return new HistogramChild(this.name, base, this.buckets);
  }
  /** Records `v` in the series of `labels`. */
  observe(labels: Labels, v: number): void {
    this.labels(labels).observe(v);
  }
  /** @inheritdoc */
  render(out: string[]): void {
    this.header(out);
    for (const c of this.children()) {
      const cum = c.cumulative();
      const les = [...this.buckets.map(formatPromValue), "+Inf"];
      const pre = c.base.map((l) => `${l.name}="${escapeLabelValue(l.value)}",`).join("");
      for (let i = 0; i < les.length; i++) {
        out.push(`${this.name}_bucket{${pre}le="${les[i]}"} ${formatPromValue(cum[i])}`);
      }
      out.push(
        `${this.name}_sum${c.text} ${formatPromValue(c.sum())}`,
        `${this.name}_count${c.text} ${formatPromValue(c.count())}`,
      );
    }
  }
  /** @inheritdoc */
  collect(out: SeriesSample[]): void {
    for (const c of this.children()) {
      const cum = c.cumulative();
      for (let i = 0; i < cum.length; i++) out.push({ labels: c.bucketSeries[i], value: cum[i] });
      out.push({ labels: c.sumSeries, value: c.sum() }, { labels: c.countSeries, value: c.count() });
    }
  }
  /** @inheritdoc */
  seriesCount(): number {
    return this.size * (this.buckets.length + 3);
  }
}

/**
 * The registry: make families with {@link counter}, {@link gauge} and {@link histogram} (a name
 * may be registered once), then {@link render} or {@link snapshot} them.
 * @example
 * const reg = new MetricsRegistry({ constLabels: { endpoint: tag } });
 * const ttft = reg.histogram({ name: "ik_ttft_seconds", help: "Time to first token.", labelNames: ["level"], buckets: LATENCY_BUCKETS_SECONDS });
 * const l1 = ttft.labels({ level: "1" }); l1.observe(0.123);
 * reg.render(); // Prometheus text 0.0.4
 */
export class MetricsRegistry {
  readonly #families: Family<Child>[] = [];
  /** Every name a family emits (`x`, or `x_bucket`, `x_sum`, `x_count`), to refuse clashes. */
  readonly #names = new Set<string>();
  readonly #constLabels: readonly Label[];

  /** Const labels are guarded here (throws {@link LabelRefusedError}). */
  constructor(opts: RegistryOptions = {}) {
    const cl: Label[] = [];
    for (const [n, v] of Object.entries(opts.constLabels ?? {})) {
      assertSafeLabel(n, v);
      cl.push({ name: n, value: v });
    }
    this.#constLabels = Object.freeze(cl.sort(byName).map((l) => Object.freeze(l)));
  }

  #claim(name: string, kind: "counter" | "gauge" | "histogram"): void {
    if (!METRIC_NAME.test(name)) {
      throw new TypeError(
        `live metrics: metric name ${JSON.stringify(name.slice(0, 60))} must match ik_[a-zA-Z0-9_]+`,
      );
    }
    if (kind === "counter" && !name.endsWith("_total")) {
      throw new TypeError(`live metrics: counter ${name} must end in _total`);
    }
    if (kind !== "counter" && name.endsWith("_total")) {
      throw new TypeError(`live metrics: ${kind} ${name} must not end in _total`);
    }
    if (kind === "histogram" && HISTOGRAM_SUFFIXES.some((s) => name.endsWith(s))) {
      throw new TypeError(`live metrics: histogram ${name} must not end in _bucket, _sum or _count`);
    }
    const emitted = kind === "histogram" ? [name, ...HISTOGRAM_SUFFIXES.map((s) => name + s)] : [name];
    for (const e of emitted) {
      if (this.#names.has(e)) throw new TypeError(`live metrics: ${e} is already registered`);
    }
    for (const e of emitted) this.#names.add(e);
  }

  /** A new counter family (throws on a bad or taken name, or a refused label name). */
  counter(opts: MetricOptions): Counter {
    this.#claim(opts.name, "counter");
    const f = new Counter(opts, this.#constLabels);
    this.#families.push(f);
    return f;
  }

  /** A new gauge family (throws on a bad or taken name, or a refused label name). */
  gauge(opts: MetricOptions): Gauge {
    this.#claim(opts.name, "gauge");
    const f = new Gauge(opts, this.#constLabels);
    this.#families.push(f);
    return f;
  }

  /** A new histogram family (throws on a bad or taken name, bad buckets, or a refused label name). */
  histogram(opts: HistogramOptions): Histogram {
    checkBuckets(opts.buckets);
    this.#claim(opts.name, "histogram");
    const f = new Histogram(opts, this.#constLabels);
    this.#families.push(f);
    return f;
  }

  /**
   * Prometheus text exposition 0.0.4 (serve it as `text/plain; version=0.0.4; charset=utf-8`):
   * families in registration order, each with `# HELP` and `# TYPE`, series sorted by labels,
   * labels by name (`le` last), a final newline.
   */
  render(): string {
    const out: string[] = [];
    for (const f of this.#families) f.render(out);
    return out.length === 0 ? "" : out.join("\n") + "\n";
  }

  /** Every series now, labels sorted by name with `__name__`, stamped `timestampMs` (default now). */
  snapshot(timestampMs: number = Date.now()): Snapshot {
    const series: SeriesSample[] = [];
    for (const f of this.#families) f.collect(series);
    return { timestampMs, series };
  }

  /** How many series a snapshot holds now. */
  seriesCount(): number {
    let n = 0;
    for (const f of this.#families) n += f.seriesCount();
    return n;
  }
}

/** The Content-Type of {@link MetricsRegistry.render}'s text. */
export const PROM_TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
