/**
 * Prometheus text exposition, as prometheus_client (Python) and llama.cpp (C++) write it.
 * @module
 */

/** Label names and values; rendered sorted by name, as the Python client does. */
export type Labels = Record<string, string>;

/** How numbers are printed: Python floats ("3.0", "1.7e+09") or C++ ostream defaults ("3", "1.25e+06"). */
export type NumberStyle = "python" | "cpp";

function exponent(s: string): string {
  // JS writes 1.5e+9; both Python and C++ pad the exponent to two digits.
  return s.replace(/e([+-])(\d)$/, "e$10$2");
}

/** Formats a sample value in the given style. */
export function formatValue(v: number, style: NumberStyle): string {
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN";
  if (style === "python") {
    if (Number.isInteger(v)) return Math.abs(v) < 1e16 ? `${v}.0` : exponent(v.toExponential());
    return exponent(String(v));
  }
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return String(v);
  const s = v.toPrecision(6);
  if (s.includes("e")) {
    const [m, e] = s.split("e");
    return exponent(`${m.includes(".") ? m.replace(/\.?0+$/, "") : m}e${e}`);
  }
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

function labelText(labels: Labels): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return "";
  return "{" +
    keys.map((k) => `${k}="${labels[k].replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
      .join(",") +
    "}";
}

/** A cumulative histogram of observations. */
export class Histogram {
  readonly bounds: readonly number[];
  readonly counts: number[];
  sum = 0;
  count = 0;

  /** @param bounds upper bucket bounds, ascending (+Inf is implied) */
  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = bounds.map(() => 0);
  }

  /** Adds one observation. */
  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) if (v <= this.bounds[i]) this.counts[i]++;
  }
}

/** Builds one exposition document, family by family. */
export class Exposition {
  readonly #lines: string[] = [];
  readonly #style: NumberStyle;

  /** @param style how numbers are printed */
  constructor(style: NumberStyle = "python") {
    this.#style = style;
  }

  /** A family header. */
  family(name: string, type: "gauge" | "counter" | "histogram", help: string): this {
    this.#lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }

  /** One sample line. */
  sample(name: string, labels: Labels, value: number): this {
    this.#lines.push(`${name}${labelText(labels)} ${formatValue(value, this.#style)}`);
    return this;
  }

  /** A one-sample gauge or counter family. */
  single(name: string, type: "gauge" | "counter", help: string, labels: Labels, value: number): this {
    return this.family(name, type, help).sample(name, labels, value);
  }

  /** A histogram family: buckets, count, sum. */
  histogram(name: string, help: string, labels: Labels, h: Histogram): this {
    this.family(name, "histogram", help);
    h.bounds.forEach((b, i) =>
      this.sample(`${name}_bucket`, { ...labels, le: formatValue(b, "python") }, h.counts[i])
    );
    this.sample(`${name}_bucket`, { ...labels, le: "+Inf" }, h.count);
    this.sample(`${name}_count`, labels, h.count);
    return this.sample(`${name}_sum`, labels, h.sum);
  }

  /** The document, newline-terminated. */
  text(): string {
    return this.#lines.join("\n") + "\n";
  }
}
