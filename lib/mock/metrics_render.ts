/**
 * The metrics endpoints of each personality (CONTRACTS.md "Metrics endpoints per engine"),
 * with the engines' real metric names and labels, and what each answers with metrics off.
 * @module
 */
import type { MockMetrics } from "./metrics_state.ts";
import type { EngineName } from "./options.ts";
import { Exposition } from "./prometheus.ts";

/** The live state a scrape reads. */
export interface MetricsSnapshot {
  engine: EngineName;
  model: string;
  metricsOn: boolean;
  /** Requests generating now (the batch). */
  running: number;
  /** Requests queued now. */
  waiting: number;
  /** KV tokens reserved now. */
  kvUsed: number;
  /** KV capacity in tokens. */
  kvCapacity: number;
  /** Batch slots (reported as max_num_seqs and friends). */
  maxBatch: number;
}

/** A plain HTTP answer. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const PROM = { "content-type": "text/plain; version=0.0.4; charset=utf-8" };
const JSON_TYPE = { "content-type": "application/json" };
const BLOCK = 16;

function vllmText(s: MetricsSnapshot, m: MockMetrics): string {
  const l = { engine: "0", model_name: s.model };
  const e = new Exposition("python")
    .single("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", l, s.running)
    .single("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", l, s.waiting)
    .single("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", l, s.kvCapacity > 0 ? Math.min(1, s.kvUsed / s.kvCapacity) : 0)
    .single("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", l, 0)
    .single("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", l, m.promptTokens)
    .single("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", l, m.generationTokens)
    .family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const reason of ["stop", "length", "abort"] as const) e.sample("vllm:request_success_total", { ...l, finished_reason: reason }, m.finished[reason]);
  return e
    .single("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", l, m.specDrafts)
    .single("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", l, m.specDraftTokens)
    .single("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", l, m.specAccepted)
    .histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", l, m.ttft)
    .histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", l, m.itl)
    .histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", l, m.tpot)
    .histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", l, m.e2e)
    .histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", l, m.queue)
    .single("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", {
      block_size: String(BLOCK), cache_dtype: "auto", enable_prefix_caching: "True", engine: "0", gpu_memory_utilization: "0.9",
      num_cpu_blocks: "None", num_gpu_blocks: String(Math.floor(s.kvCapacity / BLOCK)),
    }, 1)
    .text();
}

function sglangText(s: MetricsSnapshot, m: MockMetrics): string {
  const sched = { engine_type: "unified", model_name: s.model, moe_ep_rank: "0", pp_rank: "0", tp_rank: "0" };
  const tok = { engine_type: "unified", model_name: s.model };
  const accept = m.specDrafts > 0 ? 1 + m.specAccepted / m.specDrafts : 0;
  return new Exposition("python")
    .single("sglang:num_running_reqs", "gauge", "The number of running requests.", sched, s.running)
    .single("sglang:num_used_tokens", "gauge", "The number of used tokens.", sched, s.kvUsed)
    .single("sglang:token_usage", "gauge", "The token usage.", sched, s.kvCapacity > 0 ? Math.min(1, s.kvUsed / s.kvCapacity) : 0)
    .single("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", sched, s.waiting)
    .single("sglang:max_total_num_tokens", "gauge", "Maximum total number of tokens in the KV cache pool.", sched, s.kvCapacity)
    .single("sglang:spec_accept_length", "gauge", "The average acceptance length of speculative decoding.", sched, accept)
    .single("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", tok, m.promptTokens)
    .single("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", tok, m.generationTokens)
    .single("sglang:cached_tokens_total", "counter", "Number of cached prompt tokens.", tok, 0)
    .single("sglang:num_requests_total", "counter", "Number of requests processed.", tok, m.finished.stop + m.finished.length + m.finished.abort)
    .single("sglang:num_aborted_requests_total", "counter", "Number of requests aborted.", tok, m.finished.abort)
    .histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", tok, m.ttft)
    .histogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tok, m.itl)
    .histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", tok, m.e2e)
    .text();
}

function llamacppText(s: MetricsSnapshot, m: MockMetrics): string {
  const perSecond = (n: number, sec: number) => (sec > 0 ? n / sec : 0);
  return new Exposition("cpp")
    .single("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.", {}, m.promptTokens)
    .single("llamacpp:prompt_seconds_total", "counter", "Prompt process time", {}, m.promptSeconds)
    .single("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.", {}, m.generationTokens)
    .single("llamacpp:tokens_predicted_seconds_total", "counter", "Predict process time", {}, m.predictedSeconds)
    .single("llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls", {}, m.decodeCalls)
    .single("llamacpp:n_tokens_max", "counter", "Largest observed n_tokens.", {}, m.maxTokens)
    .single("llamacpp:n_busy_slots_per_decode", "counter", "Average number of busy slots per llama_decode() call", {}, m.decodeCalls > 0 ? 1 : 0)
    .single("llamacpp:prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.", {}, perSecond(m.promptTokens, m.promptSeconds))
    .single("llamacpp:predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.", {}, perSecond(m.generationTokens, m.predictedSeconds))
    .single("llamacpp:requests_processing", "gauge", "Number of requests processing.", {}, s.running)
    .single("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", {}, s.waiting)
    .text();
}

function trtllmText(s: MetricsSnapshot, m: MockMetrics, pid: number): string {
  const l = { engine_type: "undefined", model_name: "undefined" };
  const g = { ...l, pid: String(pid) };
  const e = new Exposition("python").family("trtllm_request_success_total", "counter", "Count of successfully processed requests.");
  for (const reason of ["stop", "length"] as const) e.sample("trtllm_request_success_total", { ...l, finished_reason: reason }, m.finished[reason]);
  return e
    .histogram("trtllm_e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", l, m.e2e)
    .histogram("trtllm_time_to_first_token_seconds", "Histogram of time to first token in seconds.", l, m.ttft)
    .histogram("trtllm_time_per_output_token_seconds", "Histogram of time per output token in seconds.", l, m.tpot)
    .histogram("trtllm_request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", l, m.queue)
    .single("trtllm_prompt_tokens_total", "counter", "Cumulative number of prompt (input) tokens processed.", l, m.promptTokens)
    .single("trtllm_generation_tokens_total", "counter", "Cumulative number of generation (output) tokens produced.", l, m.generationTokens)
    .single("trtllm_kv_cache_hit_rate", "gauge", "KV cache hit rate", g, 0)
    .single("trtllm_kv_cache_utilization", "gauge", "KV cache utilization", g, s.kvCapacity > 0 ? Math.min(1, s.kvUsed / s.kvCapacity) : 0)
    .single("trtllm_num_requests_running", "gauge", "Number of active requests", g, s.running)
    .single("trtllm_num_requests_waiting", "gauge", "Number of queued requests", g, s.waiting)
    .single("trtllm_kv_cache_max_blocks", "gauge", "Maximum number of KV cache blocks", g, Math.floor(s.kvCapacity / 32))
    .single("trtllm_kv_cache_tokens_per_block", "gauge", "Tokens per KV cache block", g, 32)
    .text();
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

function trtllmIterations(s: MetricsSnapshot, m: MockMetrics): string {
  const maxBlocks = Math.floor(s.kvCapacity / 32);
  return JSON.stringify(m.drainIterations().map(({ iter, atMs, record: r }) => {
    const d = new Date(atMs);
    const used = Math.ceil(r.kvUsed / 32);
    return {
      cpuMemUsage: 0,
      gpuMemUsage: 23622320128,
      inflightBatchingStats: {
        avgNumDecodedTokensPerIter: r.tokensPerIter, microBatchId: 0, numContextRequests: r.newActive, numCtxTokens: r.ctxTokens,
        numGenRequests: r.active - r.newActive, numPausedRequests: 0, numScheduledRequests: r.active,
      },
      iter,
      iterLatencyMS: r.latencyMs,
      kvCacheStats: {
        allocNewBlocks: 0, allocTotalBlocks: used, cacheHitRate: 0, freeNumBlocks: Math.max(0, maxBlocks - used), maxNumBlocks: maxBlocks,
        missedBlocks: 0, reusedBlocks: 0, tokensPerBlock: 32, usedNumBlocks: used,
      },
      maxBatchSizeRuntime: s.maxBatch, maxBatchSizeStatic: s.maxBatch, maxNumActiveRequests: s.maxBatch, maxNumTokensRuntime: 8192,
      newActiveRequestsQueueLatencyMS: 0, numActiveRequests: r.active, numCompletedRequests: r.completed, numNewActiveRequests: r.newActive,
      numQueuedRequests: r.queued, pinnedMemUsage: 0, staticBatchingStats: null,
      timestamp: `${pad(d.getMonth() + 1)}-${pad(d.getDate())}-${d.getFullYear()} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`,
    };
  }));
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
        const body = { error: { code: 501, message: "This server does not support metrics endpoint. Start it with `--metrics`", type: "not_supported_error" } };
        return { status: 501, headers: JSON_TYPE, body: JSON.stringify(body) };
      }
      return { status: 200, headers: { ...PROM, "process-start-time-unix": String(Math.floor(m.startedAtS)) }, body: llamacppText(s, m) };
    case "trtllm":
      if (path === "/metrics") return { status: 200, headers: JSON_TYPE, body: s.metricsOn ? trtllmIterations(s, m) : "[]" };
      return path === "/prometheus/metrics" && s.metricsOn ? prom(trtllmText(s, m, pid)) : null;
    case "openai":
      return null;
  }
}
