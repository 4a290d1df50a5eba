/**
 * The timing model used without the batching simulator (MOCK.md "Timing model").
 *
 * The first token event comes at TTFT = ttft_ms + prefill_ms_per_token × prompt_tokens after
 * arrival; then one event every tokens_per_event × tpot_ms, or, with speculative decoding, one
 * event per step every tpot_ms carrying 1 + accepted tokens. Every deadline is computed up
 * front from the arrival time, never as a chain of sleeps.
 * @module
 */
import { Rng } from "./prng.ts";
import { acceptedDrafts, nowMs, sleepUntil, type TokenEvent, type TokenSource } from "./token_source.ts";

/** The timing parameters one request runs with. */
export interface TimingParams {
  /** Time to first token, prefill included, in ms. */
  ttftMs: number;
  /** Time per output token, in ms (per step with speculative decoding). */
  tpotMs: number;
  /** Tokens per event (ignored with speculative decoding). */
  tokensPerEvent: number;
  /** Drafts per step; 0 = off. */
  specDepth: number;
  /** Draft acceptance probability. */
  specAccept: number;
  /** Each gap varies by ± uniform(jitterMs). */
  jitterMs: number;
}

/** A token event with its offset from the request's arrival. */
export interface PlannedEvent extends TokenEvent {
  /** When to send it, in ms after arrival. */
  atMs: number;
}

/**
 * Plans every token event of an `outputLen`-token answer.
 * @param rng draws jitter and draft acceptance; seed it per request for reproducible runs
 */
export function planEvents(outputLen: number, p: TimingParams, rng: Rng): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  let sent = 0;
  let at = 0;
  let gap = p.ttftMs;
  while (sent < outputLen) {
    at += Math.max(0, gap + rng.symmetric(p.jitterMs));
    let tokens: number;
    let accepted = 0;
    let proposed = 0;
    if (p.specDepth > 0) {
      proposed = p.specDepth;
      accepted = Math.min(acceptedDrafts(p.specDepth, p.specAccept, () => rng.next()), outputLen - sent - 1);
      tokens = 1 + accepted;
      gap = p.tpotMs;
    } else {
      tokens = Math.min(p.tokensPerEvent, outputLen - sent);
      gap = p.tokensPerEvent * p.tpotMs;
    }
    events.push({ atMs: at, tokens, accepted, proposed });
    sent += tokens;
  }
  return events;
}

/** Replays a plan against the clock, from the request's arrival time. */
export class TimedSource implements TokenSource {
  readonly #start: number;
  readonly #plan: PlannedEvent[];
  readonly #abort = new AbortController();
  #index = 0;
  #pausedMs = 0;

  /** @param arrivalMs arrival on the mock clock; @param plan from {@link planEvents} */
  constructor(arrivalMs: number, plan: PlannedEvent[]) {
    this.#start = arrivalMs;
    this.#plan = plan;
  }

  /** Sleeps until the next event's absolute deadline. */
  async next(): Promise<TokenEvent | null> {
    const ev = this.#plan[this.#index];
    if (!ev || this.#abort.signal.aborted) return null;
    const reached = await sleepUntil(this.#start + ev.atMs + this.#pausedMs, this.#abort.signal);
    if (!reached) return null;
    this.#index++;
    return { tokens: ev.tokens, accepted: ev.accepted, proposed: ev.proposed };
  }

  /** Shifts every later deadline by `ms`. */
  pause(ms: number): void {
    this.#pausedMs += ms;
  }

  /** Stops at once; a pending next() resolves null. */
  cancel(): void {
    this.#abort.abort();
  }

  /** No queue in the timing model. */
  queueMs(): number {
    return 0;
  }
}

/** Builds the timing-model source for one request arriving now (or at `arrivalMs`). */
export function timedSource(
  outputLen: number,
  p: TimingParams,
  rng: Rng,
  arrivalMs: number = nowMs(),
): TimedSource {
  return new TimedSource(arrivalMs, planEvents(outputLen, p, rng));
}
