/**
 * What the mock counts for its metrics endpoints: token and request counters, latency
 * histograms, speculative-decoding counters and trtllm's iteration statistics queue.
 * @module
 */
import { Histogram } from "./prometheus.ts";

/** One request as it ended, for the counters and histograms. */
export interface FinishedRequest {
  /** Prompt tokens. */
  promptTokens: number;
  /** Prompt tokens served from the prefix cache (0 when it is off). */
  cachedTokens: number;
  /** Output tokens sent. */
  completionTokens: number;
  /** "stop"/"length" for a complete answer; "abort" when it was cut (fault or client gone). */
  finish: "stop" | "length" | "abort";
  /** Arrival to first token, ms (null when no token was sent). */
  ttftMs: number | null;
  /** Arrival to end, ms. */
  e2eMs: number;
  /** First token event to last, ms (the sum of the gaps, each already seen by {@link MockMetrics.gap}). */
  decodeMs: number;
  /** Time spent queued, ms. */
  queueMs: number;
  /** Accepted draft tokens. */
  accepted: number;
  /** Proposed draft tokens. */
  proposed: number;
  /** Speculative steps (events that carried drafts). */
  specSteps: number;
}

/** One engine iteration (trtllm `/metrics` JSON). */
export interface IterationRecord {
  /** Iteration length, ms. */
  latencyMs: number;
  /** Requests in the batch. */
  active: number;
  /** Requests queued. */
  queued: number;
  /** Requests finished in this iteration. */
  completed: number;
  /** Requests admitted in this iteration. */
  newActive: number;
  /** Prompt tokens prefilled in this iteration. */
  ctxTokens: number;
  /** KV tokens in use. */
  kvUsed: number;
  /** Mean tokens per request per iteration. */
  tokensPerIter: number;
}

/** An iteration waiting in the trtllm stats queue. */
export interface QueuedIteration {
  /** Iteration number since start (1-based). */
  iter: number;
  /** Wall-clock time it ended, Unix ms. */
  atMs: number;
  /** What it did. */
  record: IterationRecord;
}

const LATENCY_BUCKETS = [
  0.001,
  0.005,
  0.01,
  0.02,
  0.04,
  0.06,
  0.08,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
  20,
  40,
  80,
  160,
  640,
  2560,
];
const ITL_BUCKETS = [
  0.01,
  0.025,
  0.05,
  0.075,
  0.1,
  0.15,
  0.2,
  0.3,
  0.4,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
  20,
  40,
  80,
];
const REQUEST_BUCKETS = [
  0.3,
  0.5,
  0.8,
  1,
  1.5,
  2,
  2.5,
  5,
  10,
  15,
  20,
  30,
  40,
  50,
  60,
  120,
  240,
  480,
  960,
  1920,
  7680,
];
/** vLLM's token-count buckets (1, 2, 5 × powers of ten). */
const TOKEN_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000];
const MAX_ITERATIONS = 1000;

/** Counters and histograms since the mock started. */
export class MockMetrics {
  /** Unix seconds at start. */
  readonly startedAtS = Date.now() / 1000;
  /** Prompt tokens of finished requests. */
  promptTokens = 0;
  /** Of those, the tokens the prefix cache held (`--prefix-cache-tokens`). */
  cachedTokens = 0;
  /** Output tokens sent. */
  generationTokens = 0;
  /** Finished requests by finish reason. */
  readonly finished: Record<"stop" | "length" | "abort", number> = { stop: 0, length: 0, abort: 0 };
  /** Accepted draft tokens. */
  specAccepted = 0;
  /** Proposed draft tokens. */
  specDraftTokens = 0;
  /** Speculative steps. */
  specDrafts = 0;
  /** Token events written (llama.cpp's decode calls). */
  decodeCalls = 0;
  /** Seconds spent in prefill (arrival to first token), summed. */
  promptSeconds = 0;
  /** Seconds spent decoding (first to last token), summed. */
  predictedSeconds = 0;
  /** Largest prompt + output seen. */
  maxTokens = 0;
  /** Time to first token, s. */
  readonly ttft = new Histogram(LATENCY_BUCKETS);
  /** Gap between token events, s. */
  readonly itl = new Histogram(ITL_BUCKETS);
  /** Mean time per output token of each request, s. */
  readonly tpot = new Histogram(ITL_BUCKETS);
  /** Arrival to end, s. */
  readonly e2e = new Histogram(REQUEST_BUCKETS);
  /** Queue time, s. */
  readonly queue = new Histogram(REQUEST_BUCKETS);
  /** Prompt tokens per request. */
  readonly promptLen = new Histogram(TOKEN_BUCKETS);
  /** Output tokens per request. */
  readonly generationLen = new Histogram(TOKEN_BUCKETS);
  /** Prefill time (queue end to first token), s. */
  readonly prefill = new Histogram(REQUEST_BUCKETS);
  /** Decode time (first token to last), s. */
  readonly decode = new Histogram(REQUEST_BUCKETS);
  #iterations: QueuedIteration[] = [];
  #iter = 0;

  /** Cached over prompt tokens of the finished requests, 0 before any (SGLang's and TRT-LLM's hit-rate gauges). */
  cacheHitRate(): number {
    return this.promptTokens > 0 ? this.cachedTokens / this.promptTokens : 0;
  }

  /** Counts one ended request. */
  record(f: FinishedRequest): void {
    this.promptTokens += f.promptTokens;
    this.cachedTokens += f.cachedTokens;
    this.generationTokens += f.completionTokens;
    this.finished[f.finish]++;
    this.specAccepted += f.accepted;
    this.specDraftTokens += f.proposed;
    this.specDrafts += f.specSteps;
    this.maxTokens = Math.max(this.maxTokens, f.promptTokens + f.completionTokens);
    this.e2e.observe(f.e2eMs / 1000);
    this.queue.observe(f.queueMs / 1000);
    this.promptLen.observe(f.promptTokens);
    this.generationLen.observe(f.completionTokens);
    if (f.ttftMs !== null) {
      this.ttft.observe(f.ttftMs / 1000);
      this.promptSeconds += f.ttftMs / 1000;
      const decodeMs = f.decodeMs;
      this.predictedSeconds += decodeMs / 1000;
      this.prefill.observe(Math.max(0, f.ttftMs - f.queueMs) / 1000);
      this.decode.observe(decodeMs / 1000);
      if (f.completionTokens > 1) this.tpot.observe(decodeMs / 1000 / (f.completionTokens - 1));
    }
  }

  /** Counts one gap between token events as it happens (so memory does not grow with the stream). */
  gap(ms: number): void {
    this.itl.observe(ms / 1000);
  }

  /** Counts one token event written. */
  tokenEvent(): void {
    this.decodeCalls++;
  }

  /** Appends an iteration to the trtllm stats queue (bounded; oldest dropped). */
  iteration(r: IterationRecord): void {
    this.#iter++;
    this.#iterations.push({ iter: this.#iter, atMs: Date.now(), record: r });
    // The oldest dropped in bulk, amortized O(1) a token event, rather than a shift() at every
    // token event of every stream (which may move the whole queue each time).
    if (this.#iterations.length >= 2 * MAX_ITERATIONS) this.#iterations = this.#iterations.slice(-MAX_ITERATIONS);
  }

  /** Takes every queued iteration, the newest {@link MAX_ITERATIONS} (trtllm drains the queue on each `/metrics` read). */
  drainIterations(): QueuedIteration[] {
    const out = this.#iterations;
    this.#iterations = [];
    return out.length > MAX_ITERATIONS ? out.slice(-MAX_ITERATIONS) : out;
  }
}
