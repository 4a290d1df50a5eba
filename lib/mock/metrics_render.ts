/**
 * The metrics endpoints of each personality (CONTRACTS.md "Metrics endpoints per engine"):
 * which path serves what, trtllm's drained JSON iteration stats, and what each engine answers
 * when started without metrics.
 * @module
 */
import { llamacppText, type MetricsSnapshot, sglangText, vllmText } from "./metrics_exposition.ts";
import type { MockMetrics } from "./metrics_state.ts";
import { Exposition } from "./prometheus.ts";

export type { MetricsSnapshot } from "./metrics_exposition.ts";

/** A plain HTTP answer. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const PROM = { "content-type": "text/plain; version=0.0.4; charset=utf-8" };
const JSON_TYPE = { "content-type": "application/json" };

/** trtllm-serve's `/prometheus/metrics`; `pid` labels the multiprocess gauges. */
function trtllmText(s: MetricsSnapshot, m: MockMetrics, pid: number): string {
  const l = { engine_type: "undefined", model_name: "undefined" };
  const g = { ...l, pid: String(pid) };
  const e = new Exposition("python").family(
    "trtllm_request_success_total",
    "counter",
    "Count of successfully processed requests.",
  );
  for (const reason of ["stop", "length"] as const) {
    e.sample("trtllm_request_success_total", { ...l, finished_reason: reason }, m.finished[reason]);
  }
  return e
    .histogram(
      "trtllm_e2e_request_latency_seconds",
      "Histogram of end to end request latency in seconds.",
      l,
      m.e2e,
    )
    .histogram(
      "trtllm_time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      l,
      m.ttft,
    )
    .histogram(
      "trtllm_time_per_output_token_seconds",
      "Histogram of time per output token in seconds.",
      l,
      m.tpot,
    )
    .histogram(
      "trtllm_request_queue_time_seconds",
      "Histogram of time spent in WAITING phase for request.",
      l,
      m.queue,
    )
    .single(
      "trtllm_prompt_tokens_total",
      "counter",
      "Cumulative number of prompt (input) tokens processed.",
      l,
      m.promptTokens,
    )
    .single(
      "trtllm_generation_tokens_total",
      "counter",
      "Cumulative number of generation (output) tokens produced.",
      l,
      m.generationTokens,
    )
    .single("trtllm_kv_cache_hit_rate", "gauge", "KV cache hit rate", g, m.cacheHitRate())
    .single(
      "trtllm_kv_cache_utilization",
      "gauge",
      "KV cache utilization",
      g,
      s.kvCapacity > 0 ? Math.min(1, s.kvUsed / s.kvCapacity) : 0,
    )
    .single("trtllm_num_requests_running", "gauge", "Number of active requests", g, s.running)
    .single("trtllm_num_requests_waiting", "gauge", "Number of queued requests", g, s.waiting)
    .single(
      "trtllm_kv_cache_max_blocks",
      "gauge",
      "Maximum number of KV cache blocks",
      g,
      Math.floor(s.kvCapacity / 32),
    )
    .single("trtllm_kv_cache_tokens_per_block", "gauge", "Tokens per KV cache block", g, 32)
    .text();
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

function trtllmIterations(s: MetricsSnapshot, m: MockMetrics): string {
  const maxBlocks = Math.floor(s.kvCapacity / 32);
  return JSON.stringify(
    m.drainIterations().map(({ iter, atMs, record: r }) => {
      const d = new Date(atMs);
      const used = Math.ceil(r.kvUsed / 32);
      return {
        cpuMemUsage: 0,
        gpuMemUsage: 23622320128,
        inflightBatchingStats: {
          avgNumDecodedTokensPerIter: r.tokensPerIter,
          microBatchId: 0,
          numContextRequests: r.newActive,
          numCtxTokens: r.ctxTokens,
          numGenRequests: r.active - r.newActive,
          numPausedRequests: 0,
          numScheduledRequests: r.active,
        },
        iter,
        iterLatencyMS: r.latencyMs,
        kvCacheStats: {
          allocNewBlocks: 0,
          allocTotalBlocks: used,
          cacheHitRate: 0,
          freeNumBlocks: Math.max(0, maxBlocks - used),
          maxNumBlocks: maxBlocks,
          missedBlocks: 0,
          reusedBlocks: 0,
          tokensPerBlock: 32,
          usedNumBlocks: used,
        },
        maxBatchSizeRuntime: s.maxBatch,
        maxBatchSizeStatic: s.maxBatch,
        maxNumActiveRequests: s.maxBatch,
        maxNumTokensRuntime: 8192,
        newActiveRequestsQueueLatencyMS: 0,
        numActiveRequests: r.active,
        numCompletedRequests: r.completed,
        numNewActiveRequests: r.newActive,
        numQueuedRequests: r.queued,
        pinnedMemUsage: 0,
        staticBatchingStats: null,
        timestamp: `${pad(d.getMonth() + 1)}-${pad(d.getDate())}-${d.getFullYear()} ${pad(d.getHours())}:${
          pad(d.getMinutes())
        }:${pad(d.getSeconds())}`,
      };
    }),
  );
}

/**
 * Answers a metrics path for the personality, or null when this engine serves nothing there (404).
 * @param pid the process id trtllm's multiprocess gauges carry as a label
 */
export function metricsAnswer(path: string, s: MetricsSnapshot, m: MockMetrics, pid = 0): HttpAnswer | null {
  const prom = (body: string): HttpAnswer => ({ status: 200, headers: PROM, body });
  switch (s.engine) {
    case "vllm":
      return path === "/metrics" ? prom(vllmText(s, m)) : null;
    case "sglang":
      return path === "/metrics" && s.metricsOn ? prom(sglangText(s, m)) : null;
    case "llamacpp":
      if (path !== "/metrics") return null;
      if (!s.metricsOn) {
        const body = {
          error: {
            code: 501,
            message: "This server does not support metrics endpoint. Start it with `--metrics`",
            type: "not_supported_error",
          },
        };
        return { status: 501, headers: JSON_TYPE, body: JSON.stringify(body) };
      }
      return {
        status: 200,
        headers: { ...PROM, "process-start-time-unix": String(Math.floor(m.startedAtS)) },
        body: llamacppText(s, m),
      };
    case "trtllm":
      if (path === "/metrics") {
        return { status: 200, headers: JSON_TYPE, body: s.metricsOn ? trtllmIterations(s, m) : "[]" };
      }
      return path === "/prometheus/metrics" && s.metricsOn ? prom(trtllmText(s, m, pid)) : null;
    case "openai":
      return null;
  }
}
