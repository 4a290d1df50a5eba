/**
 * What a response streams from: a source of token events, each at its own absolute time.
 * The timing model and the batching simulator both produce one; the stream writer consumes it.
 * @module
 */
import { MAX_TIMER_MS } from "../cli/limits.ts";

/** One token event: how many tokens it carries, and its speculative-decoding bookkeeping. */
export interface TokenEvent {
  /** Output tokens carried (1 or more). */
  tokens: number;
  /** Draft tokens accepted in the step(s) that made this event. */
  accepted: number;
  /** Draft tokens proposed in the step(s) that made this event. */
  proposed: number;
}

/** A stream of token events for one request. */
export interface TokenSource {
  /** Waits for the next event; null once the output is complete or the request was cancelled. */
  next(): Promise<TokenEvent | null>;
  /** Holds every later event back by `ms` (the stall fault). */
  pause(ms: number): void;
  /** Stops producing (the client went away, or the mock is closing). */
  cancel(): void;
  /** Time the request spent queued before generation started, in ms (0 without the simulator). */
  queueMs(): number;
}

/** The monotonic clock every mock deadline is measured on, in ms. */
export function nowMs(): number {
  return performance.now();
}

/**
 * Resolves true at absolute time `atMs` (on {@link nowMs}), or false as soon as `signal` aborts.
 * Timers may fire a little early on some runtimes, so this re-arms until the deadline is really past;
 * a deadline further off than one timer can wait (2^31 − 1 ms) is reached in several timers.
 */
export function sleepUntil(atMs: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const arm = () => {
      const left = atMs - nowMs();
      if (left <= 0) {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
        return;
      }
      timer = setTimeout(arm, timerDelay(left));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    arm();
  });
}

/**
 * Speculative decoding for one step: `depth` drafts, each accepted with probability `accept`
 * in order until the first rejection; the step yields 1 + accepted tokens.
 * @returns accepted drafts (0..depth)
 */
export function acceptedDrafts(depth: number, accept: number, draw: () => number): number {
  let n = 0;
  while (n < depth && draw() < accept) n++;
  return n;
}

/** A delay a single setTimeout can take: 0 to 2^31 − 1 ms (larger ones fire at once and warn). */
export function timerDelay(ms: number): number {
  return Number.isFinite(ms) ? Math.min(MAX_TIMER_MS, Math.max(0, ms)) : MAX_TIMER_MS;
}

/**
 * Sleeps to absolute deadlines, one at a time, until cancelled: what one request's token events
 * wait on. Cheaper than {@link sleepUntil} with an AbortSignal: that adds and removes an abort
 * listener for every token event and needs an AbortController a request, whose abort() builds an
 * AbortError (with its stack) as the request ends; in a CPU profile of `ik mock` at 3,000 requests
 * a second the three were about a tenth of its CPU. A deadline already past resolves without a
 * timer, as {@link sleepUntil} does.
 */
export class DeadlineSleeper {
  #cancelled = false;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #wake: ((reached: boolean) => void) | null = null;
  #atMs = 0;
  readonly #arm = (): void => {
    const left = this.#atMs - nowMs();
    if (left <= 0) return this.#settle(true);
    this.#timer = setTimeout(this.#arm, timerDelay(left));
  };

  /** Whether {@link cancel} has been called. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /**
   * Resolves true at `atMs` (on {@link nowMs}), or false once cancelled (at once if it already is).
   * One sleep at a time: a second call before the first settles is a bug and throws.
   */
  until(atMs: number): Promise<boolean> {
    if (this.#cancelled) return Promise.resolve(false);
    if (this.#wake !== null) throw new Error("DeadlineSleeper: one sleep at a time");
    if (atMs - nowMs() <= 0) return Promise.resolve(true);
    this.#atMs = atMs;
    return new Promise<boolean>((resolve) => {
      this.#wake = resolve;
      this.#arm();
    });
  }

  /** Ends the sleeper: a pending sleep resolves false now, later ones at once. */
  cancel(): void {
    this.#cancelled = true;
    clearTimeout(this.#timer);
    this.#settle(false);
  }

  #settle(reached: boolean): void {
    const wake = this.#wake;
    this.#wake = null;
    this.#timer = undefined;
    wake?.(reached);
  }
}
