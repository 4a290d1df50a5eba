/**
 * Prometheus text for each engine's metrics endpoint, with the engines' real metric names, types
 * and labels (wire-formats.md §1.5, §2.5, §3.5); trtllm's is in metrics_render.ts.
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

const BLOCK = 16;

/** vLLM's `/metrics`. */
export function vllmText(s: MetricsSnapshot, m: MockMetrics): string {
  const l = { engine: "0", model_name: s.model };
  const e = new Exposition("python")
    .single(
      "vllm:num_requests_running",
      "gauge",
      "Number of requests in model execution batches.",
      l,
      s.running,
    )
    .single("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", l, s.waiting)
    .single(
      "vllm:kv_cache_usage_perc",
      "gauge",
      "KV-cache usage. 1 means 100 percent usage.",
      l,
      s.kvCapacity > 0 ? Math.min(1, s.kvUsed / s.kvCapacity) : 0,
    )
    .family(
      "vllm:engine_sleep_state",
      "gauge",
      "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
    )
    .sample("vllm:engine_sleep_state", { ...l, sleep_state: "awake" }, 1)
    .sample("vllm:engine_sleep_state", { ...l, sleep_state: "weights_offloaded" }, 0)
    .sample("vllm:engine_sleep_state", { ...l, sleep_state: "discard_all" }, 0)
    .single(
      "vllm:prefix_cache_queries_total",
      "counter",
      "Prefix cache queries, in terms of number of queried tokens.",
      l,
      m.promptTokens,
    )
    .single(
      "vllm:prefix_cache_hits_total",
      "counter",
      "Prefix cache hits, in terms of number of cached tokens.",
      l,
      m.cachedTokens,
    )
    .single("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", l, 0)
    .single("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", l, m.promptTokens)
    .single(
      "vllm:generation_tokens_total",
      "counter",
      "Number of generation tokens processed.",
      l,
      m.generationTokens,
    )
    .family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const reason of ["stop", "length", "abort"] as const) {
    e.sample("vllm:request_success_total", { ...l, finished_reason: reason }, m.finished[reason]);
  }
  return e
    .histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", l, m.promptLen)
    .histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", l, m.generationLen)
    .single(
      "vllm:spec_decode_num_drafts_total",
      "counter",
      "Number of spec decoding drafts.",
      l,
      m.specDrafts,
    )
    .single(
      "vllm:spec_decode_num_draft_tokens_total",
      "counter",
      "Number of draft tokens.",
      l,
      m.specDraftTokens,
    )
    .single(
      "vllm:spec_decode_num_accepted_tokens_total",
      "counter",
      "Number of accepted tokens.",
      l,
      m.specAccepted,
    )
    .histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", l, m.ttft)
    .histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", l, m.itl)
    .histogram(
      "vllm:request_time_per_output_token_seconds",
      "Histogram of time_per_output_token_seconds per request.",
      l,
      m.tpot,
    )
    .histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", l, m.e2e)
    .histogram(
      "vllm:request_queue_time_seconds",
      "Histogram of time spent in WAITING phase for request.",
      l,
      m.queue,
    )
    .histogram(
      "vllm:request_prefill_time_seconds",
      "Histogram of time spent in PREFILL phase for request.",
      l,
      m.prefill,
    )
    .histogram(
      "vllm:request_decode_time_seconds",
      "Histogram of time spent in DECODE phase for request.",
      l,
      m.decode,
    )
    .single("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", {
      block_size: String(BLOCK),
      cache_dtype: "auto",
      enable_prefix_caching: "True",
      engine: "0",
      gpu_memory_utilization: "0.9",
      num_cpu_blocks: "None",
      num_gpu_blocks: String(Math.floor(s.kvCapacity / BLOCK)),
    }, 1)
    .text();
}

/** SGLang's `/metrics` (with --enable-metrics). */
export function sglangText(s: MetricsSnapshot, m: MockMetrics): string {
  const sched = { engine_type: "unified", model_name: s.model, moe_ep_rank: "0", pp_rank: "0", tp_rank: "0" };
  const tok = { engine_type: "unified", model_name: s.model };
  const accept = m.specDrafts > 0 ? 1 + m.specAccepted / m.specDrafts : 0;
  return new Exposition("python")
    .single("sglang:num_running_reqs", "gauge", "The number of running requests.", sched, s.running)
    .single(
      "sglang:gen_throughput",
      "gauge",
      "The generation throughput (token/s).",
      sched,
      m.predictedSeconds > 0 ? m.generationTokens / m.predictedSeconds : 0,
    )
    .single("sglang:num_used_tokens", "gauge", "The number of used tokens.", sched, s.kvUsed)
    .single(
      "sglang:num_grammar_queue_reqs",
      "gauge",
      "The number of requests in the grammar waiting queue.",
      sched,
      0,
    )
    .single("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", sched, m.cacheHitRate())
    .single(
      "sglang:token_usage",
      "gauge",
      "The token usage.",
      sched,
      s.kvCapacity > 0 ? Math.min(1, s.kvUsed / s.kvCapacity) : 0,
    )
    .single(
      "sglang:num_queue_reqs",
      "gauge",
      "The number of requests in the waiting queue.",
      sched,
      s.waiting,
    )
    .single(
      "sglang:max_total_num_tokens",
      "gauge",
      "Maximum total number of tokens in the KV cache pool.",
      sched,
      s.kvCapacity,
    )
    .single(
      "sglang:spec_accept_length",
      "gauge",
      "The average acceptance length of speculative decoding.",
      sched,
      accept,
    )
    .single(
      "sglang:prompt_tokens_total",
      "counter",
      "Number of prefill tokens processed.",
      tok,
      m.promptTokens,
    )
    .single(
      "sglang:generation_tokens_total",
      "counter",
      "Number of generation tokens processed.",
      tok,
      m.generationTokens,
    )
    .single("sglang:cached_tokens_total", "counter", "Number of cached prompt tokens.", tok, m.cachedTokens)
    .single(
      "sglang:num_requests_total",
      "counter",
      "Number of requests processed.",
      tok,
      m.finished.stop + m.finished.length + m.finished.abort,
    )
    .single(
      "sglang:num_aborted_requests_total",
      "counter",
      "Number of requests aborted.",
      tok,
      m.finished.abort,
    )
    .histogram(
      "sglang:time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      tok,
      m.ttft,
    )
    .histogram(
      "sglang:inter_token_latency_seconds",
      "Histogram of inter-token latency in seconds.",
      tok,
      m.itl,
    )
    .histogram(
      "sglang:e2e_request_latency_seconds",
      "Histogram of End-to-end request latency in seconds",
      tok,
      m.e2e,
    )
    .text();
}

/** llama.cpp's `/metrics` (with --metrics): no labels, C++ number formatting. */
export function llamacppText(s: MetricsSnapshot, m: MockMetrics): string {
  const perSecond = (n: number, sec: number) => (sec > 0 ? n / sec : 0);
  return new Exposition("cpp")
    .single(
      "llamacpp:prompt_tokens_total",
      "counter",
      "Number of prompt tokens processed.",
      {},
      m.promptTokens,
    )
    .single("llamacpp:prompt_seconds_total", "counter", "Prompt process time", {}, m.promptSeconds)
    .single(
      "llamacpp:tokens_predicted_total",
      "counter",
      "Number of generation tokens processed.",
      {},
      m.generationTokens,
    )
    .single(
      "llamacpp:tokens_predicted_seconds_total",
      "counter",
      "Predict process time",
      {},
      m.predictedSeconds,
    )
    .single("llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls", {}, m.decodeCalls)
    .single("llamacpp:n_tokens_max", "counter", "Largest observed n_tokens.", {}, m.maxTokens)
    .single(
      "llamacpp:n_busy_slots_per_decode",
      "counter",
      "Average number of busy slots per llama_decode() call",
      {},
      m.decodeCalls > 0 ? 1 : 0,
    )
    .single(
      "llamacpp:prompt_tokens_seconds",
      "gauge",
      "Average prompt throughput in tokens/s.",
      {},
      perSecond(m.promptTokens, m.promptSeconds),
    )
    .single(
      "llamacpp:predicted_tokens_seconds",
      "gauge",
      "Average generation throughput in tokens/s.",
      {},
      perSecond(m.generationTokens, m.predictedSeconds),
    )
    .single("llamacpp:requests_processing", "gauge", "Number of requests processing.", {}, s.running)
    .single("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", {}, s.waiting)
    .text();
}
