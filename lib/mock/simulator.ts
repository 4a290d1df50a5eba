/**
 * The batching simulator (MOCK.md "Batching simulator"): discrete engine steps as a
 * continuous-batching engine runs them.
 *
 * 1. At the start of a step, waiting requests are admitted in arrival order while the batch has
 *    fewer than B requests and the KV budget (prompt + max_tokens per request) allows.
 * 2. The step lasts A + B2 × batch_size ms (+ prefill_ms_per_token × the uncached prompt tokens
 *    admitted now: prefix-cached ones cost nothing).
 * 3. At its end every running request gets one token (1 + accepted drafts with speculative
 *    decoding); a request leaves once it has its output length.
 * 4. With nothing running or waiting, the engine idles until the next arrival.
 *
 * Step ends are absolute times (each step starts where the previous one ended), so timer
 * lateness never accumulates.
 * @module
 */
import { Rng } from "./prng.ts";
import { acceptedDrafts, nowMs, timerDelay, type TokenEvent, type TokenSource } from "./token_source.ts";

/** Simulator settings. */
export interface SimulatorParams {
  /** B: batch slots. */
  maxBatch: number;
  /** A: fixed step time, ms. */
  stepMs: number;
  /** B2: step time per running request, ms. */
  stepMsPerSeq: number;
  /** Step time per uncached prompt token admitted in the step, ms. */
  prefillMsPerToken: number;
  /** KV budget in tokens; null = unlimited. */
  kvTokens: number | null;
  /** Tokens per event (ignored with speculative decoding). */
  tokensPerEvent: number;
  /** Drafts per step; 0 = off. */
  specDepth: number;
  /** Draft acceptance probability. */
  specAccept: number;
  /** Each step's length varies by ± uniform(jitterMs). */
  jitterMs: number;
  /** Seeds jitter. */
  seed: number;
}

/** One request handed to the simulator. */
export interface SimJob {
  /** Prompt tokens. */
  promptTokens: number;
  /** Of those, the prefix-cached ones (no prefill cost); default 0. */
  cachedTokens?: number;
  /** Output tokens to generate. */
  outputLen: number;
  /** KV reservation: prompt + max_tokens. */
  kvTokens: number;
  /** Draws draft acceptance for this request. */
  rng: Rng;
}

/** What one step did, for iteration statistics. */
export interface StepStats {
  /** Step length, ms. */
  iterLatencyMs: number;
  /** Requests in the batch. */
  running: number;
  /** Requests left waiting. */
  waiting: number;
  /** Requests admitted at the start of this step. */
  admitted: number;
  /** Uncached prompt tokens of the admitted requests (the prefill done). */
  prefillTokens: number;
  /** Requests that finished at the end of this step. */
  completed: number;
  /** KV tokens reserved by the batch. */
  kvUsed: number;
}

class SimRequest implements TokenSource {
  produced = 0;
  pendingTokens = 0;
  pendingAccepted = 0;
  pendingProposed = 0;
  pausedUntil = 0;
  admittedAt: number | null = null;
  done = false;
  readonly arrival = nowMs();
  readonly #events: TokenEvent[] = [];
  #wake: (() => void) | null = null;

  constructor(readonly job: SimJob, readonly sim: BatchSimulator) {}

  push(ev: TokenEvent | null): void {
    if (ev) this.#events.push(ev);
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async next(): Promise<TokenEvent | null> {
    for (;;) {
      const ev = this.#events.shift();
      if (ev) return ev;
      if (this.done) return null;
      await new Promise<void>((r) => (this.#wake = r));
    }
  }

  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, nowMs()) + ms;
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.sim.remove(this);
    this.push(null);
  }

  queueMs(): number {
    return this.admittedAt === null ? 0 : this.admittedAt - this.arrival;
  }
}

/** A continuous-batching engine, stepping on the mock clock. */
export class BatchSimulator {
  readonly #p: SimulatorParams;
  readonly #rng: Rng;
  readonly #onStep: (s: StepStats) => void;
  #running: SimRequest[] = [];
  #waiting: SimRequest[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #idle = true;
  #closed = false;

  /** @param onStep called at the end of every step (trtllm iteration stats) */
  constructor(p: SimulatorParams, onStep: (s: StepStats) => void = () => {}) {
    this.#p = p;
    this.#rng = new Rng(p.seed, 0x5173);
    this.#onStep = onStep;
  }

  /** Requests in the current batch. */
  get running(): number {
    return this.#running.length;
  }

  /** Requests queued for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** KV tokens reserved by the current batch. */
  get kvUsed(): number {
    return this.#running.reduce((s, r) => s + r.job.kvTokens, 0);
  }

  /** Queues a request; an idle engine starts a step at once. */
  submit(job: SimJob): TokenSource {
    const req = new SimRequest(job, this);
    if (this.#closed || job.outputLen <= 0) {
      req.done = true;
      return req;
    }
    this.#waiting.push(req);
    if (this.#idle) this.#startStep(nowMs());
    return req;
  }

  /** Drops a request (client gone); its slot frees at the next step start. */
  remove(req: SimRequest): void {
    this.#waiting = this.#waiting.filter((r) => r !== req);
    this.#running = this.#running.filter((r) => r !== req);
  }

  /** Stops stepping and ends every request. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const r of [...this.#running, ...this.#waiting]) r.cancel();
  }

  #startStep(at: number): void {
    if (this.#closed) return;
    let admitted = 0;
    let prefill = 0;
    let kv = this.kvUsed;
    while (this.#waiting.length > 0 && this.#running.length < this.#p.maxBatch) {
      const next = this.#waiting[0];
      const fits = this.#p.kvTokens === null || kv + next.job.kvTokens <= this.#p.kvTokens ||
        this.#running.length === 0;
      if (!fits) break;
      this.#waiting.shift();
      next.admittedAt = at;
      this.#running.push(next);
      kv += next.job.kvTokens;
      admitted++;
      prefill += next.job.promptTokens - (next.job.cachedTokens ?? 0);
    }
    if (this.#running.length === 0) {
      this.#idle = true;
      return;
    }
    this.#idle = false;
    const base = this.#p.stepMs + this.#p.stepMsPerSeq * this.#running.length +
      this.#p.prefillMsPerToken * prefill;
    const duration = Math.max(0, base + this.#rng.symmetric(this.#p.jitterMs));
    const end = at + duration;
    this.#armStepEnd(end, { duration, admitted, prefill });
  }

  /**
   * Ends the step at `end`, never before: timers may fire a little early on some runtimes (Bun),
   * and a deadline further off than one timer can wait needs several, so it re-arms until the
   * deadline is really past (as sleepUntil does for the timing model).
   */
  #armStepEnd(end: number, step: { duration: number; admitted: number; prefill: number }): void {
    this.#timer = setTimeout(
      () => (end - nowMs() > 0 ? this.#armStepEnd(end, step) : this.#endStep(end, step)),
      timerDelay(end - nowMs()),
    );
  }

  #endStep(end: number, step: { duration: number; admitted: number; prefill: number }): void {
    if (this.#closed) return;
    let completed = 0;
    for (const r of this.#running) {
      if (r.pausedUntil > end) continue;
      this.#deliver(r);
      if (r.produced >= r.job.outputLen) completed++;
    }
    const kvUsed = this.kvUsed;
    const batch = this.#running.length;
    this.#running = this.#running.filter((r) => r.produced < r.job.outputLen && !r.done);
    this.#onStep({
      iterLatencyMs: step.duration,
      running: batch,
      waiting: this.#waiting.length,
      admitted: step.admitted,
      prefillTokens: step.prefill,
      completed,
      kvUsed,
    });
    this.#startStep(end);
  }

  #deliver(r: SimRequest): void {
    const left = r.job.outputLen - r.produced;
    let tokens = 1;
    let accepted = 0;
    const proposed = this.#p.specDepth;
    if (proposed > 0) {
      accepted = Math.min(acceptedDrafts(proposed, this.#p.specAccept, () => r.job.rng.next()), left - 1);
      tokens = 1 + accepted;
    }
    r.produced += tokens;
    r.pendingTokens += tokens;
    r.pendingAccepted += accepted;
    r.pendingProposed += proposed;
    const finished = r.produced >= r.job.outputLen;
    // Without drafts, tokens are grouped tokens_per_event at a time (as --stream-interval does).
    if (proposed > 0 || finished || r.pendingTokens >= this.#p.tokensPerEvent) {
      r.push({ tokens: r.pendingTokens, accepted: r.pendingAccepted, proposed: r.pendingProposed });
      r.pendingTokens = r.pendingAccepted = r.pendingProposed = 0;
    }
    if (finished) {
      r.done = true;
      r.push(null);
    }
  }
}
