/**
 * vLLM's result JSON for one `ik bench vllm` run, with the keys `vllm bench serve --save-result`
 * writes for the same options (vLLM's `vllm/benchmarks/serve.py`, `main_async` and `benchmark()`):
 * setup keys, `--metadata` pairs, traffic keys, the generation results, one percentile block per
 * `--percentile-metrics` metric with the `--metric-percentiles`, vLLM's goodput (a request is good
 * when every `--goodput` SLO holds: ttft, tpot with 0 for one-token answers, e2el), and without
 * `--save-detailed` the per-request arrays removed as vLLM removes them (latencies and
 * queue_times stay). The per-request values come from the existing exporter (lib/export
 * `vllmLevelResult`: ik's rows in vLLM's units); blocks use vLLM's numpy statistics.
 * String-valued `ik_*` keys (vLLM's metadata slot) say how ik measured.
 * @module
 */
import type { ExportLevel, Obj } from "../export/record_source.ts";
import { type VllmExportMeta, vllmLevelResult } from "../export/vllm_level_file.ts";
import { vllmBlock } from "../export/vllm_stats.ts";
import { pyFloatRepr } from "../export/py_json.ts";

/** The metrics vLLM can give percentile blocks. */
export const PERCENTILE_METRICS = ["ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"] as const;

/** The arrays vLLM removes without --save-detailed. */
export const DETAILED_KEYS = ["input_lens", "output_lens", "start_times", "ttfts", "itls", "generated_texts", "errors"] as const;

/** vLLM's goodput SLOs, ms. */
export interface Goodput {
  ttft?: number;
  tpot?: number;
  e2el?: number;
}

/** The run's options as the file states them. */
export interface VllmFileOptions {
  /** vLLM's --backend (also written as endpoint_type). */
  backend: string;
  /** --label, or null (vLLM writes null). */
  label: string | null;
  modelId: string;
  tokenizerId: string;
  numPrompts: number;
  metadata: readonly [string, string][];
  /** Infinity for inf. */
  requestRate: number;
  burstiness: number;
  maxConcurrency: number | null;
  percentileMetrics: readonly string[];
  percentiles: readonly number[];
  /** null without --goodput. */
  goodput: Goodput | null;
  detailed: boolean;
  /** vLLM's `date` ("%Y%m%d-%H%M%S"). */
  date: string;
}

const nums = (v: unknown): number[] => (Array.isArray(v) ? v.map(Number) : []);

/** The result object, keys in vLLM's order. */
export function vllmResultFile(meta: VllmExportMeta, lv: ExportLevel, o: VllmFileOptions): Obj {
  const full = vllmLevelResult(meta, lv);
  const ok = lv.rows.map((r) => r.ok === true);
  const ttfts = nums(full.ttfts), lat = nums(full.latencies), outs = nums(full.output_lens), queue = nums(full.queue_times);
  const itls = (Array.isArray(full.itls) ? full.itls : []) as number[][];
  const duration = Number(full.duration) || 0;
  const idx = ok.flatMap((g, i) => (g ? [i] : []));
  const tpotOf = (i: number) => (outs[i] > 1 ? (lat[i] - ttfts[i]) / (outs[i] - 1) : 0);
  let goodput: number | null = null;
  if (o.goodput) {
    const g = o.goodput;
    const good = idx.filter((i) => (g.ttft === undefined || g.ttft / 1000 >= ttfts[i]) && (g.tpot === undefined || g.tpot / 1000 >= tpotOf(i)) && (g.e2el === undefined || g.e2el / 1000 >= lat[i])).length;
    goodput = duration > 0 ? good / duration : 0;
  }
  const out: Obj = {
    date: o.date, endpoint_type: o.backend, backend: o.backend, label: o.label, model_id: o.modelId, tokenizer_id: o.tokenizerId, num_prompts: o.numPrompts,
  };
  for (const [k, v] of o.metadata) out[k] = v;
  out.ik_evidence_id = meta.evidenceId;
  out.ik_arrivals = arrivalsNote(o);
  out.ik_percentiles = String(full.ik_percentiles);
  out.ik_timings = String(full.ik_timings);
  out.ik_duration = String(full.ik_duration);
  if (typeof full.ik_interrupted === "string") out.ik_interrupted = full.ik_interrupted;
  if (typeof full.ik_input_lens === "string") out.ik_input_lens = full.ik_input_lens;
  out.request_rate = Number.isFinite(o.requestRate) ? o.requestRate : "inf";
  out.burstiness = o.burstiness;
  out.max_concurrency = o.maxConcurrency;
  for (const k of ["duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput"]) out[k] = full[k];
  out.request_goodput = goodput;
  for (const k of ["output_throughput", "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times", "generated_texts", "errors", "max_output_tokens_per_s", "max_concurrent_requests", "rtfx"]) out[k] = full[k];
  const values: Record<string, () => number[]> = {
    ttft: () => idx.map((i) => ttfts[i]),
    tpot: () => idx.filter((i) => outs[i] > 1).map(tpotOf),
    itl: () => idx.flatMap((i) => itls[i] ?? []),
    e2el: () => idx.map((i) => lat[i]),
    client_queue_time: () => idx.map((i) => queue[i]),
    e2el_including_client_queue: () => idx.map((i) => lat[i] + queue[i]),
  };
  for (const m of PERCENTILE_METRICS) {
    if (!o.percentileMetrics.includes(m)) continue;
    // vLLM has these two blocks only with --max-concurrency (and the second only at a finite rate).
    if (m === "client_queue_time" && o.maxConcurrency === null) continue;
    if (m === "e2el_including_client_queue" && (o.maxConcurrency === null || !Number.isFinite(o.requestRate))) continue;
    const block = vllmBlock(values[m](), m, o.percentiles);
    // vLLM writes mean, median, std, then the percentiles.
    for (const [k, v] of Object.entries(block)) out[k] = v;
  }
  if (!o.detailed) for (const k of DETAILED_KEYS) delete out[k];
  return out;
}

function arrivalsNote(o: VllmFileOptions): string {
  const arrivals = Number.isFinite(o.requestRate)
    ? `${o.numPrompts} open-loop arrivals from ik's seeded ${o.burstiness === 1 ? "Poisson" : `gamma (burstiness ${o.burstiness})`} process, rescaled to end at num_prompts / request_rate as vLLM's are`
    : `all ${o.numPrompts} requests due at time 0 (request_rate inf)`;
  return o.maxConcurrency === null ? arrivals : `${arrivals}, at most ${o.maxConcurrency} in flight (a held request waits for a slot; queue_times hold that wait)`;
}

/** vLLM's default result file name: `{label|backend}-{rate}qps[-concurrency{N}]-{model basename}-{date}.json`. */
export function defaultResultName(o: Pick<VllmFileOptions, "label" | "backend" | "requestRate" | "maxConcurrency" | "modelId" | "date">): string {
  const rate = Number.isFinite(o.requestRate) ? pyFloat(o.requestRate) : "inf";
  const conc = o.maxConcurrency !== null ? `-concurrency${o.maxConcurrency}` : "";
  return `${o.label || o.backend}-${rate}qps${conc}-${o.modelId.split("/").pop()}-${o.date}.json`;
}

/** Python's str() of a float: `4.0`, `0.5`, `1e-05`, `inf`. */
export function pyFloat(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  return pyFloatRepr(x);
}
