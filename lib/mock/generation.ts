/**
 * One generation request from arrival to end: faults are drawn, the body is validated the way
 * the personality validates it, the output is planned, a token source is started, and when it
 * ends the counters, histograms and request log are updated exactly once.
 * @module
 */
import { readBody, tooLargeResponse } from "./body.ts";
import { faultsFor, type RequestFaults } from "./faults.ts";
import type { Completion, HttpError, StreamContext, Timings } from "./personality.ts";
import { unixNow } from "./personality.ts";
import { blockKeys } from "./prefix_cache.ts";
import { Rng } from "./prng.ts";
import {
  type EndpointKind,
  type GenRequest,
  type OutputPlan,
  parseGenRequest,
  planOutput,
  promptPieces,
} from "./request.ts";
import { type RequestLogFields, requestLogLine, wallMsOf } from "./request_log.ts";
import type { InFlight, MockState } from "./state.ts";
import { timedSource } from "./timing_model.ts";
import { nowMs, sleepUntil, type TokenSource } from "./token_source.ts";
import { OutputGenerator, type OutputToken, promptTokenIds } from "./tokens.ts";

/** A request that passed validation and is generating. */
export interface Generation {
  state: MockState;
  req: GenRequest;
  plan: OutputPlan;
  ctx: StreamContext;
  faults: RequestFaults;
  serial: number;
  /** Prefix-cached prompt tokens (0 when `--prefix-cache-tokens` is off). */
  cachedTokens: number;
  /** When the mock finished reading the request (mock clock, ms): every deadline counts from here. */
  arrivalMs: number;
  source: TokenSource;
}

/** Either a finished answer (an HTTP error, 413), or a running generation. */
export type Intake = { response: Response } | { generation: Generation };

/**
 * The longest whole (`stream: false`) answer, in tokens. A whole body holds every token at
 * once, so a longer one is refused with the personality's 400 on max_tokens (stream it
 * instead: a stream is planned lazily and has no such cap).
 */
export const MAX_WHOLE_TOKENS = 1_048_576;

/** A JSON response. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

type Checked = { error: HttpError; promptTokens: number } | { req: GenRequest };

/** The prompt tokens a request counts (0 when it could not be read), for the request log. */
function promptTokensOf(c: Checked | null): number {
  return c === null ? 0 : "req" in c ? c.req.promptTokens : c.promptTokens;
}

function validate(state: MockState, kind: EndpointKind, raw: unknown): Checked {
  const p = state.personality;
  const o = state.opts;
  const parsed = parseGenRequest(kind, raw);
  if (!parsed.ok) return { error: p.invalid(parsed.problem, kind), promptTokens: 0 };
  let req = parsed.req;
  const refuse = (error: HttpError) => ({ error, promptTokens: req.promptTokens });
  // vLLM, SGLang and OpenAI's CompletionRequest default max_tokens to 16 (a length stop, and
  // the value their context check uses); chat has no such default.
  if (kind === "completions" && req.maxTokens === undefined && p.completionsDefaultMaxTokens !== null) {
    req = { ...req, maxTokens: p.completionsDefaultMaxTokens };
  }
  const fields = p.checkFields(req);
  if (fields) return refuse(fields);
  const model = p.checkModel(req.model, o.model);
  if (model) return refuse(model);
  if (req.promptTokens + (req.maxTokens ?? 1) > o.maxModelLen) {
    return refuse(p.tooLong(req.promptTokens, req.maxTokens, o.maxModelLen, kind));
  }
  return { req };
}

/** Writes the request-log line (when `--request-log` is on). */
function logRequest(state: MockState, f: RequestLogFields): void {
  if (state.opts.requestLog) state.io.requestLog?.(requestLogLine(f));
}

/**
 * Admits one request to `/v1/chat/completions` or `/v1/completions`: draws its faults, reads the
 * body (413 past 100 MiB, read no further), applies slow-headers, validates, and starts its token
 * source with deadlines measured from when the body was read (shifted by the slow-headers delay,
 * so tokens stay paced after the late headers). A request answered with an error gets its
 * request-log line here.
 * @param bodyReadMs when the server had already read the body (Node's serve), else null: the
 *   arrival is when this read ends
 */
export async function admit(
  state: MockState,
  kind: EndpointKind,
  request: Request,
  bodyReadMs: number | null = null,
): Promise<Intake> {
  const o = state.opts;
  const serial = ++state.serial;
  const faults = faultsFor(o.faults, serial, o.seed);
  // A client that leaves mid-body leaves an unreadable body: answered as invalid JSON.
  const body = await readBody(request).catch(() => ({ ok: true as const, text: "" }));
  const arrivalMs = bodyReadMs ?? nowMs();
  const refused = (response: Response, promptTokens: number): Intake => {
    logRequest(state, {
      serial,
      promptTokens,
      cachedTokens: 0,
      generated: 0,
      accepted: 0,
      proposed: 0,
      firstMs: null,
      lastMs: null,
      recvWallMs: wallMsOf(arrivalMs),
    });
    return { response };
  };
  if (!body.ok) return refused(tooLargeResponse(), 0);
  let raw: unknown;
  try {
    raw = JSON.parse(body.text);
  } catch {
    raw = undefined;
  }
  const checked: Checked = faults.httpStatus !== null
    ? { error: state.personality.faultError(faults.httpStatus), promptTokens: promptTokensOf(raw === undefined ? null : validate(state, kind, raw)) }
    : raw === undefined
    ? {
      error: state.personality.invalid({ message: "the request body is not valid JSON", param: null }, kind),
      promptTokens: 0,
    }
    : validate(state, kind, raw);
  if (faults.slowHeadersMs > 0) await sleepUntil(arrivalMs + faults.slowHeadersMs, state.closing.signal);
  const answer = (e: HttpError) => jsonResponse(e.status, e.body);
  if ("error" in checked) return refused(answer(checked.error), checked.promptTokens);
  const req = checked.req;
  if (state.closing.signal.aborted) {
    return refused(answer(state.personality.faultError(503)), req.promptTokens);
  }
  const plan = planOutput(req, o.eosAfter, o.maxModelLen, state.personality.exact);
  if (!req.stream && plan.outputLen > MAX_WHOLE_TOKENS) {
    const problem = {
      message: `ik mock answers at most ${MAX_WHOLE_TOKENS} tokens whole (stream: false), ` +
        `got ${plan.outputLen}; stream it, or ask for fewer`,
      param: "max_tokens",
    };
    return refused(answer(state.personality.invalid(problem, kind)), req.promptTokens);
  }
  const startMs = arrivalMs + faults.slowHeadersMs;
  const rng = new Rng(o.seed, serial, 0x7e57);
  // Looked up and held when the request is admitted to run, so an identical request right
  // behind it already finds its blocks.
  const cachedTokens = state.prefixCache?.use(blockKeys(promptPieces(req))) ?? 0;
  const source = state.simulator
    ? state.simulator.submit({
      promptTokens: req.promptTokens,
      cachedTokens,
      outputLen: plan.outputLen,
      kvTokens: req.promptTokens + plan.limit,
      rng,
    })
    : timedSource(
      plan.outputLen,
      {
        ttftMs: o.ttftMs + o.prefillMsPerToken * (req.promptTokens - cachedTokens),
        tpotMs: o.tpotMs,
        tokensPerEvent: o.tokensPerEvent,
        specDepth: o.specDepth,
        specAccept: o.specAccept,
        jitterMs: o.jitterMs,
      },
      rng,
      startMs,
    );
  const p = state.personality;
  const tokenPrompt = kind === "completions" && Array.isArray(req.body.prompt) &&
    typeof req.body.prompt[0] === "number";
  const ctx: StreamContext = {
    req,
    model: p.echoModel(req.model, o.model),
    id: p.newId(kind),
    created: unixNow(),
    usage: p.usageMode(req),
    cachedTokens: state.prefixCache ? cachedTokens : null,
    promptIds:
      () => (tokenPrompt
        ? (req.body.prompt as number[]).slice()
        : promptTokenIds(req.promptText, req.promptTokens)),
  };
  return {
    generation: { state, req, plan, ctx, faults, serial, cachedTokens, arrivalMs, source },
  };
}

/** A token event with its tokens generated. */
export interface Step {
  tokens: OutputToken[];
  first: boolean;
  /** This event carries the last token of the planned output. */
  last: boolean;
  /** Output tokens sent so far, this event included. */
  sent: number;
}

/** Progress of one generation, shared by the streamed and the whole answer. */
export class Run {
  readonly g: Generation;
  sent = 0;
  #accepted = 0;
  #proposed = 0;
  #specSteps = 0;
  #firstAt: number | null = null;
  #lastAt: number | null = null;
  #firstWriteMs: number | null = null;
  #lastWriteMs: number | null = null;
  readonly #words: OutputGenerator;
  readonly #tracked: InFlight;
  #ended = false;

  /** Registers the generation as in flight. */
  constructor(g: Generation) {
    this.g = g;
    this.#words = new OutputGenerator(g.req.promptText, g.state.opts.seed);
    this.#tracked = { kvTokens: g.req.promptTokens + g.plan.limit, source: g.source };
    g.state.track(this.#tracked);
  }

  /** Waits for the next token event; null when the output is complete or cancelled. */
  async next(): Promise<Step | null> {
    const ev = await this.g.source.next();
    if (!ev || this.#ended) return null;
    const now = nowMs();
    const first = this.#firstAt === null;
    if (first) this.#firstAt = now;
    else this.g.state.metrics.gap(now - (this.#lastAt ?? now));
    this.#lastAt = now;
    const tokens = this.#words.range(this.sent, this.sent + ev.tokens);
    this.sent += ev.tokens;
    this.#accepted += ev.accepted;
    this.#proposed += ev.proposed;
    if (ev.proposed > 0) this.#specSteps++;
    const state = this.g.state;
    state.metrics.tokenEvent();
    if (!state.simulator) {
      state.timedIteration(ev.tokens, first, this.g.req.promptTokens - this.g.cachedTokens);
    }
    return { tokens, first, last: this.sent >= this.g.plan.outputLen, sent: this.sent };
  }

  /**
   * Stamps a token event as written: call it right after the chunk is handed to the response
   * stream (the request log's first_ms/last_ms are these stamps, not the planned times).
   */
  wrote(): void {
    const now = nowMs();
    this.#firstWriteMs ??= now;
    this.#lastWriteMs = now;
  }

  /**
   * Completion tokens the usage block reports after `sent`: true, plus the usage-mismatch fault's
   * extra, which may be negative (a usage that lies low); never below 0, however low the lie.
   */
  usageTokens(sent: number = this.sent): number {
    return Math.max(0, sent + this.g.faults.usageExtra);
  }

  /** Phase times so far. */
  timings(): Timings {
    const first = this.#firstAt ?? nowMs();
    return { promptMs: first - this.g.arrivalMs, predictedMs: (this.#lastAt ?? first) - first };
  }

  /** The completion summary for a normal end. */
  completion(): Completion {
    return {
      finish: this.g.plan.finishReason,
      completionTokens: this.usageTokens(),
      timings: this.timings(),
    };
  }

  /** Ends the request once: frees its slot, counts it, writes the request-log line. */
  end(outcome: "complete" | "abort"): void {
    if (this.#ended) return;
    this.#ended = true;
    const g = this.g;
    const state = g.state;
    g.source.cancel();
    state.untrack(this.#tracked);
    state.served++;
    state.metrics.record({
      promptTokens: g.req.promptTokens,
      cachedTokens: g.cachedTokens,
      completionTokens: this.sent,
      finish: outcome === "complete" ? g.plan.finishReason : "abort",
      ttftMs: this.#firstAt === null ? null : this.#firstAt - g.arrivalMs,
      e2eMs: nowMs() - g.arrivalMs,
      decodeMs: this.#firstAt === null ? 0 : (this.#lastAt ?? this.#firstAt) - this.#firstAt,
      queueMs: g.source.queueMs(),
      accepted: this.#accepted,
      proposed: this.#proposed,
      specSteps: this.#specSteps,
    });
    const since = (t: number | null) => (t === null ? null : t - g.arrivalMs);
    logRequest(state, {
      serial: g.serial,
      promptTokens: g.req.promptTokens,
      cachedTokens: g.cachedTokens,
      generated: this.sent,
      accepted: this.#accepted,
      proposed: this.#proposed,
      firstMs: since(this.#firstWriteMs),
      lastMs: since(this.#lastWriteMs),
      recvWallMs: wallMsOf(g.arrivalMs),
    });
  }
}
