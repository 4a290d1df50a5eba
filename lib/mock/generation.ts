/**
 * One generation request from arrival to end: faults are drawn, the body is validated the way
 * the personality validates it, the output is planned, a token source is started, and when it
 * ends the counters, histograms and request log are updated exactly once.
 * @module
 */
import { faultsFor, type RequestFaults } from "./faults.ts";
import type { Completion, HttpError, StreamContext, Timings } from "./personality.ts";
import { unixNow } from "./personality.ts";
import { Rng } from "./prng.ts";
import {
  type EndpointKind,
  type GenRequest,
  type OutputPlan,
  parseGenRequest,
  planOutput,
} from "./request.ts";
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
  arrivalMs: number;
  source: TokenSource;
}

/** Either an HTTP error to answer with, or a running generation. */
export type Intake = { error: HttpError } | { generation: Generation };

/** A JSON response. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function validate(
  state: MockState,
  kind: EndpointKind,
  raw: unknown,
): { error: HttpError } | { req: GenRequest } {
  const p = state.personality;
  const o = state.opts;
  const parsed = parseGenRequest(kind, raw);
  if (!parsed.ok) return { error: p.invalid(parsed.problem, kind) };
  let req = parsed.req;
  // vLLM, SGLang and OpenAI's CompletionRequest default max_tokens to 16 (a length stop, and
  // the value their context check uses); chat has no such default.
  if (kind === "completions" && req.maxTokens === undefined && p.completionsDefaultMaxTokens !== null) {
    req = { ...req, maxTokens: p.completionsDefaultMaxTokens };
  }
  const fields = p.checkFields(req);
  if (fields) return { error: fields };
  const model = p.checkModel(req.model, o.model);
  if (model) return { error: model };
  if (req.promptTokens + (req.maxTokens ?? 1) > o.maxModelLen) {
    return { error: p.tooLong(req.promptTokens, req.maxTokens, o.maxModelLen, kind) };
  }
  return { req };
}

/**
 * Admits one request to `/v1/chat/completions` or `/v1/completions`: draws its faults, applies
 * slow-headers, validates, and starts its token source with deadlines measured from arrival
 * (shifted by the slow-headers delay, so tokens stay paced after the late headers).
 */
export async function admit(state: MockState, kind: EndpointKind, request: Request): Promise<Intake> {
  const arrivalMs = nowMs();
  const o = state.opts;
  const serial = ++state.serial;
  const faults = faultsFor(o.faults, serial, o.seed);
  const raw = await request.json().catch(() => undefined);
  const checked: { error: HttpError } | { req: GenRequest } = faults.httpStatus !== null
    ? { error: state.personality.faultError(faults.httpStatus) }
    : raw === undefined
    ? {
      error: state.personality.invalid({ message: "the request body is not valid JSON", param: null }, kind),
    }
    : validate(state, kind, raw);
  if (faults.slowHeadersMs > 0) await sleepUntil(arrivalMs + faults.slowHeadersMs, state.closing.signal);
  if ("error" in checked) return checked;
  if (state.closing.signal.aborted) return { error: state.personality.faultError(503) };
  const req = checked.req;
  const plan = planOutput(req, o.eosAfter, o.maxModelLen, state.personality.exact);
  const startMs = arrivalMs + faults.slowHeadersMs;
  const rng = new Rng(o.seed, serial, 0x7e57);
  const source = state.simulator
    ? state.simulator.submit({
      promptTokens: req.promptTokens,
      outputLen: plan.outputLen,
      kvTokens: req.promptTokens + plan.limit,
      rng,
    })
    : timedSource(
      plan.outputLen,
      {
        ttftMs: o.ttftMs + o.prefillMsPerToken * req.promptTokens,
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
    promptIds:
      () => (tokenPrompt
        ? (req.body.prompt as number[]).slice()
        : promptTokenIds(req.promptText, req.promptTokens)),
  };
  return {
    generation: { state, req, plan, ctx, faults, serial, arrivalMs, source },
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
  readonly #gaps: number[] = [];
  readonly #words: OutputGenerator;
  readonly #tracked: InFlight;
  #ended = false;

  /** Registers the generation as in flight. */
  constructor(g: Generation) {
    this.g = g;
    this.#words = new OutputGenerator(g.req.promptText, g.state.opts.seed);
    this.#tracked = { kvTokens: g.req.promptTokens + g.plan.limit, source: g.source };
    g.state.inFlight.add(this.#tracked);
  }

  /** Waits for the next token event; null when the output is complete or cancelled. */
  async next(): Promise<Step | null> {
    const ev = await this.g.source.next();
    if (!ev || this.#ended) return null;
    const now = nowMs();
    const first = this.#firstAt === null;
    if (first) this.#firstAt = now;
    else this.#gaps.push(now - (this.#lastAt ?? now));
    this.#lastAt = now;
    const tokens = this.#words.range(this.sent, this.sent + ev.tokens);
    this.sent += ev.tokens;
    this.#accepted += ev.accepted;
    this.#proposed += ev.proposed;
    if (ev.proposed > 0) this.#specSteps++;
    const state = this.g.state;
    state.metrics.tokenEvent();
    if (!state.simulator) state.timedIteration(ev.tokens, first, this.g.req.promptTokens);
    return { tokens, first, last: this.sent >= this.g.plan.outputLen, sent: this.sent };
  }

  /** Phase times so far. */
  timings(): Timings {
    const first = this.#firstAt ?? nowMs();
    return { promptMs: first - this.g.arrivalMs, predictedMs: (this.#lastAt ?? first) - first };
  }

  /** The completion summary for a normal end. */
  completion(): Completion {
    return { finish: this.g.plan.finishReason, completionTokens: this.sent, timings: this.timings() };
  }

  /** Ends the request once: frees its slot, counts it, writes the request-log line. */
  end(outcome: "complete" | "abort"): void {
    if (this.#ended) return;
    this.#ended = true;
    const g = this.g;
    const state = g.state;
    g.source.cancel();
    state.inFlight.delete(this.#tracked);
    state.served++;
    state.metrics.record({
      promptTokens: g.req.promptTokens,
      completionTokens: this.sent,
      finish: outcome === "complete" ? g.plan.finishReason : "abort",
      ttftMs: this.#firstAt === null ? null : this.#firstAt - g.arrivalMs,
      e2eMs: nowMs() - g.arrivalMs,
      gapsMs: this.#gaps,
      queueMs: g.source.queueMs(),
      accepted: this.#accepted,
      proposed: this.#proposed,
      specSteps: this.#specSteps,
    });
    if (state.opts.requestLog) {
      state.io.requestLog?.(
        `ik-request serial=${g.serial} prompt=${g.req.promptTokens} cached=0 gen=${this.sent} acc=${this.#accepted} prop=${this.#proposed}`,
      );
    }
  }
}
