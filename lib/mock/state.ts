/**
 * The mutable state one mock instance shares between its endpoints: settings, personality,
 * counters, the simulator (if any) and the requests in flight.
 * @module
 */
import { MockMetrics } from "./metrics_state.ts";
import type { MetricsSnapshot } from "./metrics_render.ts";
import { type MockOptions, stepMsOf } from "./options.ts";
import type { Personality } from "./personality.ts";
import { personalityFor } from "./personalities/mod.ts";
import { PrefixCache } from "./prefix_cache.ts";
import { BatchSimulator } from "./simulator.ts";
import { nowMs, type TokenSource } from "./token_source.ts";

/** KV capacity reported when `--kv-tokens` is not given. */
export const DEFAULT_KV_TOKENS = 1_048_576;

/** Batch size reported (max_num_seqs and friends) without the simulator. */
export const DEFAULT_MAX_BATCH = 256;

/** A request between its arrival and its end. */
export interface InFlight {
  /** Its KV reservation (prompt + max_tokens). */
  kvTokens: number;
  /** Its token source once generation started. */
  source: TokenSource | null;
}

/** Hooks a mock reports through. */
export interface MockIo {
  /** Receives each `ik-request …` line when `requestLog` is on (default: dropped). */
  requestLog?: (line: string) => void;
  /** The pid trtllm's Prometheus gauges carry (default 0). */
  pid?: number;
}

/** One mock instance's shared state. */
export class MockState {
  readonly opts: MockOptions;
  readonly personality: Personality;
  readonly metrics = new MockMetrics();
  readonly simulator: BatchSimulator | null;
  /** The prefix cache (`--prefix-cache-tokens`); null when it is off. */
  readonly prefixCache: PrefixCache | null;
  readonly #inFlight = new Set<InFlight>();
  /** The KV tokens the requests in flight reserve: kept as they come and go, read at every token event. */
  #kvInFlight = 0;
  /** Aborted by close(): every sleep and stream ends. */
  readonly closing = new AbortController();
  readonly readyAtMs: number;
  readonly io: MockIo;
  /** Requests to the generation endpoints so far (the fault serial). */
  serial = 0;
  /** Generation requests that ended after generating (complete or cut). */
  served = 0;
  #lastIterationMs = nowMs();

  /** @param opts resolved settings; @param io output hooks */
  constructor(opts: MockOptions, io: MockIo = {}) {
    this.opts = opts;
    this.io = io;
    this.personality = personalityFor(opts.engine);
    this.readyAtMs = nowMs() + opts.readyDelayS * 1000;
    this.prefixCache = opts.prefixCacheTokens > 0 ? new PrefixCache(opts.prefixCacheTokens) : null;
    this.simulator = opts.maxBatch === null ? null : new BatchSimulator(
      {
        maxBatch: opts.maxBatch,
        stepMs: stepMsOf(opts),
        stepMsPerSeq: opts.stepMsPerSeq,
        prefillMsPerToken: opts.prefillMsPerToken,
        kvTokens: opts.kvTokens,
        tokensPerEvent: opts.tokensPerEvent,
        specDepth: opts.specDepth,
        specAccept: opts.specAccept,
        jitterMs: opts.jitterMs,
        seed: opts.seed,
      },
      (s) =>
        this.metrics.iteration({
          latencyMs: s.iterLatencyMs,
          active: s.running,
          queued: s.waiting,
          completed: s.completed,
          newActive: s.admitted,
          ctxTokens: s.prefillTokens,
          kvUsed: s.kvUsed,
          tokensPerIter: 1 + (this.opts.specDepth > 0 ? this.opts.specAccept : 0),
        }),
    );
  }

  /** Whether /ready and /health say ready (after `--ready-delay-s`). */
  ready(): boolean {
    return nowMs() >= this.readyAtMs;
  }

  /** The requests in flight (added and removed through {@link track} and {@link untrack}). */
  get inFlight(): ReadonlySet<InFlight> {
    return this.#inFlight;
  }

  /** A request is in flight from now, with its KV reservation. */
  track(r: InFlight): void {
    if (this.#inFlight.has(r)) return;
    this.#inFlight.add(r);
    this.#kvInFlight += r.kvTokens;
  }

  /** A request is no longer in flight (once; a second call does nothing). */
  untrack(r: InFlight): void {
    if (this.#inFlight.delete(r)) this.#kvInFlight -= r.kvTokens;
  }

  /** Requests generating now: the simulator's batch, else every request in flight. */
  running(): number {
    return this.simulator ? this.simulator.running : this.inFlight.size;
  }

  /** Requests queued now (only the simulator queues). */
  waiting(): number {
    return this.simulator ? this.simulator.waiting : 0;
  }

  /**
   * KV tokens reserved now. Without the simulator a running sum, not a walk over the requests in
   * flight: every token event reads it (timedIteration), and at 1,000 streams the walk was a third
   * of the mock's CPU (a CPU profile under `ik bench serve --closed-loop --concurrency 1000`).
   */
  kvUsed(): number {
    return this.simulator ? this.simulator.kvUsed : this.#kvInFlight;
  }

  /** What a metrics scrape reads. */
  snapshot(): MetricsSnapshot {
    return {
      engine: this.opts.engine,
      model: this.opts.model,
      metricsOn: this.opts.metrics,
      running: this.running(),
      waiting: this.waiting(),
      kvUsed: this.kvUsed(),
      kvCapacity: this.opts.kvTokens ?? DEFAULT_KV_TOKENS,
      maxBatch: this.opts.maxBatch ?? DEFAULT_MAX_BATCH,
    };
  }

  /**
   * Records a timing-model token event as one engine iteration (trtllm's stats queue).
   * @param prefillTokens the prompt tokens this request prefilled (its uncached ones)
   */
  timedIteration(tokens: number, first: boolean, prefillTokens: number): void {
    const now = nowMs();
    const latencyMs = now - this.#lastIterationMs;
    this.#lastIterationMs = now;
    this.metrics.iteration({
      latencyMs,
      active: this.inFlight.size,
      queued: 0,
      completed: 0,
      newActive: first ? 1 : 0,
      ctxTokens: first ? prefillTokens : 0,
      kvUsed: this.kvUsed(),
      tokensPerIter: tokens,
    });
  }

  /** Ends everything: simulator, sources, sleeps. */
  close(): void {
    this.closing.abort();
    this.simulator?.close();
    for (const r of this.inFlight) r.source?.cancel();
  }
}
