/**
 * The limitations a benchmark's token counts and lengths put on its numbers (seed 000
 * _count_limitations), from a tally kept row by row (so load mode keeps no rows to judge them).
 * @module
 */

import { type LengthRow, PromptLengthTally } from "./prompt_lengths.ts";

/** The row fields read here. */
export interface CountRow extends Partial<LengthRow> {
  id: string | null;
  ok: boolean;
  n_tokens: number | null;
  token_count_method: string | null;
  count_mismatch: string | null;
  tokens_per_event_max: number | null;
  connection_retries?: number;
  /** Token events the stream carried (absent in older rows). */
  n_token_events?: number;
  /** True when no ids said how many tokens the first event held and 1 was assumed. */
  k_first_assumed?: boolean | null;
  /** The request's TPOT; null for an ok request of 2+ tokens means its tokens could not be timed apart. */
  tpot_ms?: number | null;
}

/** Running counts of what the limitations depend on. */
export class CountTally {
  /** ok requests per counting method. */
  readonly methods: Record<string, number> = {};
  mismatches = 0;
  firstMismatch: string | null = null;
  notExact = 0;
  firstNotExact: string | null = null;
  multiTokenEvents = 0;
  maxTokensPerEvent = 0;
  retried = 0;
  /** ok requests whose count (no ids) is over their token events + 1: events packed several tokens, k_first unknown. */
  packed = 0;
  firstPacked: string | null = null;
  /** ok requests of 2+ tokens with no TPOT: every token reached ik at once (one read, or one event). */
  untimed = 0;
  firstUntimed: string | null = null;
  /** usage.prompt_tokens against each row's `target_prompt_tokens` (rows without one are not counted). */
  readonly lengths = new PromptLengthTally();

  /** Adds one row; `maxTokens` is what the request asked for. */
  add(r: CountRow, maxTokens: number | null): void {
    if ((r.connection_retries ?? 0) > 0) this.retried++;
    this.lengths.add(r);
    if (!r.ok) return;
    const m = r.token_count_method ?? "none";
    this.methods[m] = (this.methods[m] ?? 0) + 1;
    if (r.count_mismatch) {
      this.mismatches++;
      this.firstMismatch ??= r.count_mismatch;
    }
    if (r.n_tokens !== null && maxTokens !== null && r.n_tokens !== maxTokens) {
      this.notExact++;
      this.firstNotExact ??= `${r.id}: ${r.n_tokens} tokens`;
    }
    // A finish chunk after the last token can make usage one over the events (EOS); more than that
    // means events carried several tokens, and without ids the first event's share is a guess.
    const events = r.n_token_events ?? 0;
    if (r.k_first_assumed === true && r.n_tokens !== null && events >= 2 && r.n_tokens > events + 1) {
      this.packed++;
      this.firstPacked ??= `${r.id}: ${r.n_tokens} tokens in ${events} events`;
    }
    if (r.tpot_ms === null && r.n_tokens !== null && r.n_tokens >= 2) {
      this.untimed++;
      this.firstUntimed ??= `${r.id}: ${r.n_tokens} tokens in ${events === 1 ? "one event" : `${events} events, in one read`}`;
    }
    if ((r.tokens_per_event_max ?? 0) > 1) {
      this.multiTokenEvents++;
      this.maxTokensPerEvent = Math.max(this.maxTokensPerEvent, r.tokens_per_event_max ?? 0);
    }
  }

  /** Merges another tally into this one. */
  merge(o: CountTally): void {
    for (const [k, v] of Object.entries(o.methods)) this.methods[k] = (this.methods[k] ?? 0) + v;
    this.mismatches += o.mismatches;
    this.firstMismatch ??= o.firstMismatch;
    this.notExact += o.notExact;
    this.firstNotExact ??= o.firstNotExact;
    this.multiTokenEvents += o.multiTokenEvents;
    this.maxTokensPerEvent = Math.max(this.maxTokensPerEvent, o.maxTokensPerEvent);
    this.retried += o.retried;
    this.packed += o.packed;
    this.firstPacked ??= o.firstPacked;
    this.untimed += o.untimed;
    this.firstUntimed ??= o.firstUntimed;
    this.lengths.merge(o.lengths);
  }
}

/**
 * Each limitation under its condition: usage counting (k_first assumed 1), tokenizer and
 * SSE-event counting, count mismatches, exact length asked but not honoured, no exact-length
 * control, logprobs ids, several tokens per event.
 */
export function tallyLimitations(t: CountTally, exactAsked: readonly string[] | null, tokenIdMode: string, engineKind: string): string[] {
  const lim: string[] = [];
  if (t.methods.usage) lim.push("tokens counted from usage.completion_tokens (no streamed ids): decode tok/s assumes the first token event holds one token");
  if (t.methods.tokenizer) {
    lim.push("tokens re-counted with --tokenizer from the generated text (no streamed ids, no usage): reasoning, answer and tool arguments each " +
      "counted apart, without the delimiter tokens a reasoning model writes around its reasoning (<think>, </think>), so a reasoning answer " +
      "counts a few tokens low; never below its token events");
  }
  if (t.methods.sse_events) lim.push("tokens counted as SSE events (no ids, no usage): only right if the server sends one token per event; pass --tokenizer to re-count");
  if (t.mismatches) lim.push(`${t.mismatches} request(s): token counts disagree (${t.firstMismatch})`);
  if (exactAsked && exactAsked.length) {
    if (t.notExact) lim.push(`${t.notExact} request(s) did not generate exactly max_tokens although ${exactAsked.join("/")} was sent (e.g. ${t.firstNotExact})`);
  } else {
    lim.push(`engine_kind=${engineKind}: no exact-length control sent; outputs stop at EOS, so lengths can differ between engines`);
  }
  if (tokenIdMode === "logprobs") lim.push("token ids requested through logprobs where needed: computing logprobs can slow decode");
  if (t.retried) {
    lim.push(
      `${t.retried} request(s) were sent a second time, on a new connection, because the first attempt went out on a reused keep-alive connection the server closed without a response byte; they are timed from the first send (send lag is the client's; TTFT and e2e include the failed attempt)`,
    );
  }
  if (t.packed) {
    lim.push(`${t.packed} request(s) have more tokens than token events and no ids (e.g. ${t.firstPacked}): the server packs several tokens in an event, ` +
      "and TPOT and decode tok/s assume the first event held one, so they read low (by (k − 1)/(n − 1) when the first of n tokens came with k); " +
      "--token-ids logprobs asks for ids where the engine can stream them");
  }
  if (t.untimed) {
    lim.push(`${t.untimed} request(s) have no TPOT: all their tokens reached ik at once (e.g. ${t.firstUntimed}), so their decode could not be timed ` +
      "and they are left out of TPOT and decode tok/s; a proxy that buffers the stream (nginx's proxy_buffering), or a server that sends the answer " +
      "in one event, does this, and then TTFT holds the whole generation");
  }
  if (t.multiTokenEvents) lim.push(`${t.multiTokenEvents} request(s) streamed more than one token in an SSE event (max ${t.maxTokensPerEvent}); counts use ids, ITL is per event`);
  return lim;
}

/** The same limitations from a list of rows (single mode keeps its rows). */
export function countLimitations(
  rows: readonly CountRow[],
  exactAsked: readonly string[] | null,
  maxById: ReadonlyMap<string, number>,
  tokenIdMode: string,
  engineKind: string,
): string[] {
  const t = new CountTally();
  for (const r of rows) t.add(r, r.id !== null ? maxById.get(r.id) ?? null : null);
  return tallyLimitations(t, exactAsked, tokenIdMode, engineKind);
}
