/**
 * The timing model used without the batching simulator (MOCK.md "Timing model").
 *
 * The first token event comes at TTFT = ttft_ms + prefill_ms_per_token × prompt_tokens after
 * arrival and carries tokens_per_event tokens (fewer if the answer is shorter); then each event
 * follows the previous one by its own tokens × tpot_ms, so a shorter last event waits only for
 * its own tokens and per-token TPOT is tpot_ms for every length. With speculative decoding, one
 * event per step every tpot_ms carrying 1 + accepted tokens. Every deadline is an absolute offset
 * from the arrival time, never a chain of sleeps; the events are planned lazily, one at a time as
 * the stream proceeds, so memory does not grow with max_tokens.
 * @module
 */
import { Rng } from "./prng.ts";
import { acceptedDrafts, DeadlineSleeper, nowMs, type TokenEvent, type TokenSource } from "./token_source.ts";

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
 * Plans the token events of an `outputLen`-token answer one at a time, in O(1) memory: each
 * call to {@link EventPlanner.next} makes the next event from the running offset.
 */
export class EventPlanner {
  readonly #outputLen: number;
  readonly #p: TimingParams;
  readonly #rng: Rng;
  #sent = 0;
  #at = 0;

  /** @param rng draws jitter and draft acceptance; seed it per request for reproducible runs */
  constructor(outputLen: number, p: TimingParams, rng: Rng) {
    this.#outputLen = outputLen;
    this.#p = p;
    this.#rng = rng;
  }

  /** The next event, or null once `outputLen` tokens are planned. */
  next(): PlannedEvent | null {
    const p = this.#p;
    const left = this.#outputLen - this.#sent;
    if (left <= 0) return null;
    let tokens: number;
    let accepted = 0;
    let proposed = 0;
    if (p.specDepth > 0) {
      proposed = p.specDepth;
      accepted = Math.min(acceptedDrafts(p.specDepth, p.specAccept, () => this.#rng.next()), left - 1);
      tokens = 1 + accepted;
    } else {
      tokens = Math.min(p.tokensPerEvent, left);
    }
    // The first event waits TTFT; every later one its own tokens × tpot (one step with drafts).
    const gap = this.#sent === 0 ? p.ttftMs : p.specDepth > 0 ? p.tpotMs : tokens * p.tpotMs;
    this.#at += Math.max(0, gap + this.#rng.symmetric(p.jitterMs));
    this.#sent += tokens;
    return { atMs: this.#at, tokens, accepted, proposed };
  }
}

/**
 * Plans every token event of an `outputLen`-token answer at once (tests and tools; the mock
 * itself plans lazily through {@link EventPlanner}, as this array grows with `outputLen`).
 * @param rng draws jitter and draft acceptance; seed it per request for reproducible runs
 */
export function planEvents(outputLen: number, p: TimingParams, rng: Rng): PlannedEvent[] {
  const planner = new EventPlanner(outputLen, p, rng);
  const events: PlannedEvent[] = [];
  for (let ev = planner.next(); ev; ev = planner.next()) events.push(ev);
  return events;
}

/** Replays a lazy plan against the clock, from the request's arrival time. */
export class TimedSource implements TokenSource {
  readonly #start: number;
  readonly #planner: EventPlanner;
  readonly #sleeper = new DeadlineSleeper();
  #pending: PlannedEvent | null = null;
  #pausedMs = 0;

  /** @param arrivalMs arrival on the mock clock; @param planner makes the events one at a time */
  constructor(arrivalMs: number, planner: EventPlanner) {
    this.#start = arrivalMs;
    this.#planner = planner;
  }

  /** Sleeps until the next event's absolute deadline. */
  async next(): Promise<TokenEvent | null> {
    if (this.#sleeper.cancelled) return null;
    const ev = this.#pending ??= this.#planner.next();
    if (!ev) return null;
    const reached = await this.#sleeper.until(this.#start + ev.atMs + this.#pausedMs);
    if (!reached) return null;
    this.#pending = null;
    return { tokens: ev.tokens, accepted: ev.accepted, proposed: ev.proposed };
  }

  /** Shifts every later deadline by `ms`. */
  pause(ms: number): void {
    this.#pausedMs += ms;
  }

  /** Stops at once; a pending next() resolves null. */
  cancel(): void {
    this.#sleeper.cancel();
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
  return new TimedSource(arrivalMs, new EventPlanner(outputLen, p, rng));
}
