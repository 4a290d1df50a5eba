/**
 * Where each engine exports "the server's own view" (CONTRACTS.md "Metrics endpoints per engine",
 * wire-formats.md §1.5, §2.5, §3.5, §4.3): the metrics path and the metric names of four gauges.
 *
 * | gauge | vllm | sglang | llamacpp | trtllm |
 * |---|---|---|---|---|
 * | path | `/metrics` | `/metrics` (`--enable-metrics`) | `/metrics` (`--metrics`, else 501) | `/prometheus/metrics` ONLY |
 * | running | `vllm:num_requests_running` | `sglang:num_running_reqs` | `llamacpp:requests_processing` | `trtllm_num_requests_running` |
 * | waiting | `vllm:num_requests_waiting` | `sglang:num_queue_reqs` | `llamacpp:requests_deferred` | `trtllm_num_requests_waiting` |
 * | kv_cache_usage (0–1) | `vllm:kv_cache_usage_perc`, older `vllm:gpu_cache_usage_perc` | `sglang:token_usage` | `llamacpp:kv_cache_usage_ratio` (older builds only) | `trtllm_kv_cache_utilization` |
 * | preemptions_total | `vllm:num_preemptions_total` (counter) | `sglang:num_retracted_requests_total` (counter), older `sglang:num_retractions_sum` (histogram of retractions per finished request: its sum) | — | — |
 *
 * trtllm's `/metrics` is a JSON list that every read drains: it is never requested. `generic` reads
 * `/metrics` and takes the first of all the engines' names that is present.
 *
 * Aggregation over label sets (several models, DP engines, ranks, trtllm `pid`s): running, waiting
 * and preemptions are SUMMED over every label set of the chosen name; kv_cache_usage, a fraction,
 * is the MEAN over label sets (a sum of fractions could pass 1). First, series that are one value
 * reported by several processes of one engine are collapsed to their largest: vLLM's series that
 * differ only in `pid` (with `--api-server-count` > 1 a gauge declared without a multiprocess mode,
 * as `vllm:kv_cache_usage_perc` was until vLLM PR #28792, comes once per API server, the real value
 * in one and 0 in the others), and SGLang's that differ only in `tp_rank` (with
 * `--enable-metrics-for-all-schedulers` every tensor-parallel rank reports the same batch).
 * {@link GaugeSource} says which name was used, how many label sets it combined and how. NaN
 * samples are left out.
 * @module
 */
import type { EngineKind } from "../engines/profiles.ts";
import type { PromSample } from "./prometheus_text.ts";

/** The gauges a scrape reports. */
export type GaugeName = "running" | "waiting" | "kv_cache_usage" | "preemptions_total";

/** Every gauge, in report order. */
export const GAUGE_NAMES: readonly GaugeName[] = [
  "running",
  "waiting",
  "kv_cache_usage",
  "preemptions_total",
];

/** One value per gauge; null when the server does not export it. */
export type GaugeValues = Record<GaugeName, number | null>;

/** How a gauge's label sets are combined. */
export type GaugeAggregation = "sum" | "mean";

/** How each gauge's label sets are combined (see the module notes). */
export const GAUGE_AGGREGATION: Readonly<Record<GaugeName, GaugeAggregation>> = {
  running: "sum",
  waiting: "sum",
  kv_cache_usage: "mean",
  preemptions_total: "sum",
};

/** One engine's metrics endpoint and metric names. */
export interface EngineMetricsSpec {
  /** The engine kind. */
  kind: EngineKind;
  /** Path at the server root (before any prefix is added by rootUrl). */
  path: string;
  /** For each gauge, candidate metric names, first present wins (empty: the engine has none). */
  names: Readonly<Record<GaugeName, readonly string[]>>;
  /** Why a status means "not available" on this engine, e.g. 501 → "llama.cpp started without --metrics". */
  hints: Readonly<Record<number, string>>;
}

const VLLM: EngineMetricsSpec["names"] = {
  running: ["vllm:num_requests_running"],
  waiting: ["vllm:num_requests_waiting"],
  kv_cache_usage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
  preemptions_total: ["vllm:num_preemptions_total"],
};
// `sglang_` spellings: some releases are reported to export `_` instead of `:`; harmless to try.
// `sglang:num_requests_running` / `_waiting`: the names of SGLang's first metrics (PR #1853, 2024-11).
const SGLANG: EngineMetricsSpec["names"] = {
  running: ["sglang:num_running_reqs", "sglang_num_running_reqs", "sglang:num_requests_running"],
  waiting: ["sglang:num_queue_reqs", "sglang_num_queue_reqs", "sglang:num_requests_waiting"],
  kv_cache_usage: ["sglang:token_usage", "sglang_token_usage"],
  // The counter, where SGLang has it, counts a retraction as it happens; the histogram's sum only
  // as each retracted request finishes.
  preemptions_total: [
    "sglang:num_retracted_requests_total",
    "sglang_num_retracted_requests_total",
    "sglang:num_retractions_sum",
    "sglang_num_retractions_sum",
  ],
};
const LLAMACPP: EngineMetricsSpec["names"] = {
  running: ["llamacpp:requests_processing"],
  waiting: ["llamacpp:requests_deferred"],
  kv_cache_usage: ["llamacpp:kv_cache_usage_ratio"],
  preemptions_total: [],
};
const TRTLLM: EngineMetricsSpec["names"] = {
  running: ["trtllm_num_requests_running"],
  waiting: ["trtllm_num_requests_waiting"],
  kv_cache_usage: ["trtllm_kv_cache_utilization"],
  preemptions_total: [],
};
const ALL = [VLLM, SGLANG, LLAMACPP, TRTLLM];
const GENERIC = Object.fromEntries(
  GAUGE_NAMES.map((g) => [g, ALL.flatMap((n) => n[g])]),
) as unknown as EngineMetricsSpec["names"];

const AUTH = "the metrics endpoint wants an API key, or refused the one sent";

/** Each engine kind's metrics endpoint and names. */
export const ENGINE_METRICS: Readonly<Record<EngineKind, EngineMetricsSpec>> = {
  vllm: {
    kind: "vllm",
    path: "/metrics",
    names: VLLM,
    hints: { 404: "no /metrics here: a router or path prefix in front of vLLM?", 401: AUTH, 403: AUTH },
  },
  sglang: {
    kind: "sglang",
    path: "/metrics",
    names: SGLANG,
    hints: { 404: "SGLang started without --enable-metrics", 401: AUTH, 403: AUTH },
  },
  llamacpp: {
    kind: "llamacpp",
    path: "/metrics",
    names: LLAMACPP,
    hints: { 501: "llama.cpp started without --metrics", 404: "no /metrics here", 401: AUTH, 403: AUTH },
  },
  trtllm: {
    kind: "trtllm",
    path: "/prometheus/metrics",
    names: TRTLLM,
    hints: {
      404: "trtllm-serve without return_perf_metrics: true (and enable_iter_perf_stats for the gauges)",
      401: AUTH,
      403: AUTH,
    },
  },
  generic: {
    kind: "generic",
    path: "/metrics",
    names: GENERIC,
    hints: {
      404: "the server has no /metrics",
      501: "the server does not serve metrics",
      401: AUTH,
      403: AUTH,
    },
  },
};

/** Which metric a gauge came from. */
export interface GaugeSource {
  /** The metric name used. */
  metric: string;
  /** How many label sets were combined (after the copies of one value were collapsed). */
  series: number;
  /** How they were combined. */
  agg: GaugeAggregation;
}

/** Gauge values read from one exposition. */
export interface GaugeReading {
  /** The value of each gauge, null when not exported. */
  values: GaugeValues;
  /** Gauges the exposition does not have. */
  missing: GaugeName[];
  /** For each gauge found, the metric and label sets it came from. */
  sources: Partial<Record<GaugeName, GaugeSource>>;
  /**
   * The preemption counter per label set (key: its labels), or null when not exported: a counter
   * that restarts is seen per series (one DP engine restarting is not the whole sum falling).
   */
  preemptionSeries: Map<string, number> | null;
}

/** The metrics spec of an engine kind (unknown kinds read as `generic`). */
export function metricsSpec(kind: EngineKind): EngineMetricsSpec {
  return ENGINE_METRICS[kind] ?? ENGINE_METRICS.generic;
}

/** The label whose series are copies of one engine's value (see the module notes), by metric name. */
function replicaLabel(metric: string): string | null {
  if (metric.startsWith("vllm:")) return "pid";
  if (metric.startsWith("sglang:") || metric.startsWith("sglang_")) return "tp_rank";
  return null;
}

/**
 * One value per label set (keyed by its labels, the metric's replica label left out), series that
 * differ only in that label collapsed to their largest.
 */
function seriesOf(metric: string, samples: readonly PromSample[]): Map<string, number> {
  const replica = replicaLabel(metric);
  const groups = new Map<string, number>();
  for (const s of samples) {
    const key = JSON.stringify(Object.keys(s.labels).filter((k) => k !== replica).sort().map((k) => [k, s.labels[k]]));
    const prev = groups.get(key);
    groups.set(key, prev === undefined ? s.value : Math.max(prev, s.value));
  }
  return groups;
}

/**
 * Reads the four gauges from parsed samples, by the engine's names (first name present wins),
 * summing or averaging over label sets as {@link GAUGE_AGGREGATION} says.
 */
export function gaugesFromSamples(samples: readonly PromSample[], kind: EngineKind): GaugeReading {
  const byName = new Map<string, PromSample[]>();
  for (const s of samples) {
    if (Number.isNaN(s.value)) continue;
    const list = byName.get(s.name);
    if (list) list.push(s);
    else byName.set(s.name, [s]);
  }
  const spec = metricsSpec(kind);
  const out: GaugeReading = {
    values: { running: null, waiting: null, kv_cache_usage: null, preemptions_total: null },
    missing: [],
    sources: {},
    preemptionSeries: null,
  };
  for (const g of GAUGE_NAMES) {
    const metric = spec.names[g].find((n) => byName.has(n));
    if (metric === undefined) {
      out.missing.push(g);
      continue;
    }
    const series = seriesOf(metric, byName.get(metric)!);
    if (g === "preemptions_total") out.preemptionSeries = series;
    const vs = [...series.values()];
    const sum = vs.reduce((a, b) => a + b, 0);
    const agg = GAUGE_AGGREGATION[g];
    out.values[g] = agg === "sum" ? sum : sum / vs.length;
    out.sources[g] = { metric, series: vs.length, agg };
  }
  return out;
}
