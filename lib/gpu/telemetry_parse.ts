/**
 * One GPU telemetry reading per GPU, parsed from either source the sampler polls: the CSV of
 * {@link TELEMETRY_QUERY} (nvidia-smi) or dcgm-exporter's Prometheus text. Pure: no I/O, never
 * throws. A cell that is not a number (`[N/A]`, `[Not Supported]`, `[Unknown Error]`, empty, a DCGM
 * blank sentinel) is null, never 0.
 * @module
 */
import { parsePrometheusText } from "../scrape/prometheus_text.ts";

/** One GPU at one poll. */
export interface GpuReading {
  /** What identifies the GPU across polls: its UUID, else `index:N` (nvidia-smi) or `Hostname/gpu` (DCGM). */
  key: string;
  /** The GPU index (nvidia-smi `index`, DCGM `gpu` label); null when not a whole number. */
  index: number | null;
  /** `GPU-…` UUID; null when not reported. */
  uuid: string | null;
  /** Model name (DCGM `modelName`); null for nvidia-smi, whose telemetry query does not ask for it. */
  name: string | null;
  /** Board power draw, W. */
  powerW: number | null;
  /** GPU utilisation, %. */
  utilPct: number | null;
  /** Memory (framebuffer) used, MiB. */
  memoryUsedMib: number | null;
  /** SM clock, MHz. */
  smClockMhz: number | null;
  /** DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ since boot (DCGM only; null for nvidia-smi). */
  energyMj: number | null;
  /** The power cell as written when it was not a number (for notes), e.g. `[N/A]`. */
  powerRaw?: string;
  /** True when DCGM reported the GPU only through MIG instance series (GPU_I_ID), folded here. */
  mig?: boolean;
}

/** What a parser found. */
export interface TelemetryParse {
  /** One reading per GPU, in the order first seen. */
  gpus: GpuReading[];
  /** Non-blank lines (CSV) or samples (DCGM) that could not be read. */
  badLines: number;
  /** The first bad line, cut to 120 characters. */
  firstBad?: string;
}

/**
 * The nvidia-smi query the sampler runs: one CSV line per GPU, no header, no units. `power.draw` is
 * the board's draw (nvidia-smi's help: on Ampere and newer a 1-s average, older GPUs an instant
 * reading); `clocks.sm` is the current SM clock.
 */
export const TELEMETRY_QUERY = [
  "nvidia-smi",
  "--query-gpu=index,uuid,power.draw,utilization.gpu,memory.used,clocks.sm",
  "--format=csv,noheader,nounits",
];

/** The dcgm-exporter metrics the sampler reads (gauges in W, %, MiB, MHz; the energy counter in mJ). */
export const DCGM_METRICS = {
  power: "DCGM_FI_DEV_POWER_USAGE",
  util: "DCGM_FI_DEV_GPU_UTIL",
  memoryUsed: "DCGM_FI_DEV_FB_USED",
  smClock: "DCGM_FI_DEV_SM_CLOCK",
  energy: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
} as const;

/**
 * DCGM's blank values start here: DCGM_FP64_BLANK is 2^47 and the INT64 blanks are near 2^63; an
 * exporter may print them for a field with no value yet ("not supported", "not found"). No real
 * reading of these fields comes near it.
 */
export const DCGM_BLANK_MIN = 2 ** 47;

const NUMBER_CELL = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(?:W|%|MiB|MHz)?$/i;

/**
 * One nvidia-smi CSV cell as a non-negative number, or null: `[N/A]`, `[Not Supported]`,
 * `[Unknown Error]`, `N/A`, empty and anything else that is not a number are null (never 0). A
 * trailing unit (`W`, `%`, `MiB`, `MHz`, from a query run without `nounits`) is accepted.
 */
export function telemetryCell(cell: string | undefined): number | null {
  if (cell === undefined) return null;
  const m = NUMBER_CELL.exec(cell.trim());
  if (!m) return null;
  const v = Number(m[1]);
  return Number.isFinite(v) && v >= 0 ? v : null;
}

function textCell(cell: string | undefined): string | null {
  const t = cell?.trim() ?? "";
  return t === "" || /^\[.*\]$/.test(t) || /^n\/a$/i.test(t) ? null : t;
}

/**
 * Parses the output of {@link TELEMETRY_QUERY}: `index, uuid, power.draw, utilization.gpu,
 * memory.used, clocks.sm` per line. A line whose first field is not a whole number (a header, an
 * error message) is skipped and counted in `badLines`.
 */
export function parseTelemetryCsv(text: string): TelemetryParse {
  const out: TelemetryParse = { gpus: [], badLines: 0 };
  if (typeof text !== "string") return out;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const f = line.split(",").map((s) => s.trim());
    const index = /^\d+$/.test(f[0]) ? Number(f[0]) : NaN;
    if (f.length < 6 || !Number.isInteger(index)) {
      out.badLines++;
      out.firstBad ??= line.slice(0, 120);
      continue;
    }
    const uuid = textCell(f[1]);
    const powerW = telemetryCell(f[2]);
    const g: GpuReading = {
      key: uuid ?? `index:${index}`,
      index,
      uuid,
      name: null,
      powerW,
      utilPct: telemetryCell(f[3]),
      memoryUsedMib: telemetryCell(f[4]),
      smClockMhz: telemetryCell(f[5]),
      energyMj: null,
    };
    if (powerW === null) g.powerRaw = f[2] || "(empty)";
    out.gpus.push(g);
  }
  return out;
}

/** A DCGM value, or null when it is NaN, infinite, negative or a blank sentinel. */
function dcgmValue(v: number): number | null {
  return Number.isFinite(v) && v >= 0 && v < DCGM_BLANK_MIN ? v : null;
}

type Field = "powerW" | "utilPct" | "memoryUsedMib" | "smClockMhz" | "energyMj";

const FIELD_OF: Record<string, Field> = {
  [DCGM_METRICS.power]: "powerW",
  [DCGM_METRICS.util]: "utilPct",
  [DCGM_METRICS.memoryUsed]: "memoryUsedMib",
  [DCGM_METRICS.smClock]: "smClockMhz",
  [DCGM_METRICS.energy]: "energyMj",
  [DCGM_METRICS.energy + "_total"]: "energyMj",
};

interface Series {
  /** Value of the series without GPU_I_ID (the device's own), first one seen. */
  device?: number | null;
  /** Values of MIG instance series by GPU_I_ID, first one per instance. */
  instances: Map<string, number | null>;
}

interface Pending {
  reading: GpuReading;
  fields: Partial<Record<Field, Series>>;
}

/**
 * Parses dcgm-exporter's Prometheus text into one reading per GPU (keyed by the `UUID` label, else
 * `Hostname`/`gpu`). When one GPU has several series of a metric: the one without `GPU_I_ID` wins
 * (further copies, e.g. one per Kubernetes pod, are duplicates and are not added). A GPU seen only
 * through MIG instance series (`GPU_I_ID`): memory used is summed over its instances, utilisation
 * is their mean, and power, SM clock and the energy counter (board-level values repeated on each
 * instance) are taken once.
 */
export function parseDcgmText(text: string): TelemetryParse {
  const parsed = parsePrometheusText(text);
  const out: TelemetryParse = { gpus: [], badLines: parsed.badLines };
  if (parsed.firstBad !== undefined) out.firstBad = parsed.firstBad;
  const byKey = new Map<string, Pending>();
  for (const s of parsed.samples) {
    const field = FIELD_OF[s.name];
    if (!field) continue;
    const uuid = s.labels.UUID ?? s.labels.uuid ?? null;
    const gpuLabel = s.labels.gpu ?? "";
    if (!uuid && gpuLabel === "") {
      out.badLines++;
      out.firstBad ??= `${s.name} without a UUID or gpu label`;
      continue;
    }
    const key = uuid || `${s.labels.Hostname ?? ""}/${gpuLabel}`;
    let p = byKey.get(key);
    if (!p) {
      p = {
        reading: {
          key,
          index: /^\d+$/.test(gpuLabel) ? Number(gpuLabel) : null,
          uuid: uuid || null,
          name: s.labels.modelName || null,
          powerW: null,
          utilPct: null,
          memoryUsedMib: null,
          smClockMhz: null,
          energyMj: null,
        },
        fields: {},
      };
      byKey.set(key, p);
    }
    const series: Series = (p.fields[field] ??= { instances: new Map() });
    const v = dcgmValue(s.value);
    const gi = s.labels.GPU_I_ID;
    if (gi === undefined) {
      if (series.device === undefined) series.device = v;
    } else if (!series.instances.has(gi)) series.instances.set(gi, v);
  }
  for (const { reading, fields } of byKey.values()) {
    for (const [field, series] of Object.entries(fields) as [Field, Series][]) {
      if (series.device !== undefined) {
        reading[field] = series.device;
        continue;
      }
      reading.mig = true;
      const vals = [...series.instances.values()].filter((v): v is number => v !== null);
      if (!vals.length) continue;
      if (field === "memoryUsedMib") reading[field] = vals.reduce((a, b) => a + b, 0);
      else if (field === "utilPct") reading[field] = vals.reduce((a, b) => a + b, 0) / vals.length;
      else reading[field] = vals[0];
    }
    if (reading.powerW === null) reading.powerRaw = fields.powerW ? "blank" : "not exported";
    out.gpus.push(reading);
  }
  return out;
}
