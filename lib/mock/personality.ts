/**
 * The shape of a wire personality: everything that differs between vLLM, SGLang, llama.cpp,
 * trtllm-serve and the OpenAI API on the wire (../../spec/wire-formats.md). Timing, faults and
 * token generation are shared; a personality only turns them into that engine's bytes.
 * @module
 */
import type { EngineName, MockOptions } from "./options.ts";
import type { ExactLengthSupport, GenRequest, RequestProblem } from "./request.ts";
import type { OutputToken } from "./tokens.ts";

/** Why generation ended. */
export type FinishReason = "stop" | "length";

/** Where usage goes in a stream: nowhere, a final `choices: []` chunk, or every chunk too. */
export type UsageMode = "none" | "final" | "every";

/** An HTTP error answer: status and JSON body. */
export interface HttpError {
  status: number;
  body: unknown;
}

/** Per-request facts a personality formats chunks from. */
export interface StreamContext {
  /** The request. */
  req: GenRequest;
  /** The model name this engine puts in chunks (served name or echo). */
  model: string;
  /** The stream's id (personalities with per-chunk ids make their own). */
  id: string;
  /** Unix seconds at arrival. */
  created: number;
  /** Where usage goes. */
  usage: UsageMode;
  /**
   * Prefix-cached prompt tokens; null when `--prefix-cache-tokens` is off (the personalities
   * whose engine reports cached tokens then leave that field out, as the engine does unless
   * asked for it).
   */
  cachedTokens: number | null;
  /** Prompt token ids, made on demand (vLLM `return_token_ids`). */
  promptIds(): number[];
}

/** One token event, as the personality formats it. */
export interface TokenChunk {
  /** The tokens it carries. */
  tokens: OutputToken[];
  /** True for the first token event of the stream. */
  first: boolean;
  /** Set on the event carrying the last token when the stream ends normally. */
  finish: FinishReason | null;
  /** Output tokens sent so far, this event included. */
  completionTokens: number;
  /** Characters of output text sent before this event (completions logprobs' text_offset). */
  textOffset: number;
}

/** A token event with no tokens: the shape of a content chunk, for the malformed fault. */
export const EMPTY_CHUNK: TokenChunk = {
  tokens: [],
  first: false,
  finish: null,
  completionTokens: 0,
  textOffset: 0,
};

/** Measured phases of one request, for llama.cpp's `timings`. */
export interface Timings {
  /** Arrival to first token, ms. */
  promptMs: number;
  /** First to last token, ms. */
  predictedMs: number;
}

/** How a stream or a whole answer ended. */
export interface Completion {
  /** Why it ended. */
  finish: FinishReason;
  /** Output tokens. */
  completionTokens: number;
  /** Phase times. */
  timings: Timings;
}

/** A whole (non-streamed) answer. */
export interface WholeAnswer extends Completion {
  /** Every output token. */
  tokens: OutputToken[];
}

/** One engine's wire behaviour. */
export interface Personality {
  /** Its name. */
  readonly engine: EngineName;
  /** Exact-length request fields it honours. */
  readonly exact: ExactLengthSupport;
  /**
   * `max_tokens` the engine assumes when a `/v1/completions` request leaves it out (vLLM, SGLang
   * and the OpenAI API default it to 16; null = no default, the context is the limit).
   */
  readonly completionsDefaultMaxTokens: number | null;
  /** Rejects a request for an unknown model (404), or null when the model is accepted. */
  checkModel(requested: string | undefined, served: string): HttpError | null;
  /** Rejects request fields this engine does not accept, or null. */
  checkFields(req: GenRequest): HttpError | null;
  /** The model name put in chunks. */
  echoModel(requested: string | undefined, served: string): string;
  /** A fresh response id for the endpoint. */
  newId(kind: GenRequest["kind"]): string;
  /** Where usage goes for this request. */
  usageMode(req: GenRequest): UsageMode;
  /** Events sent with the headers, before any token (the role chunk). */
  streamStart(ctx: StreamContext): string[];
  /** Events for one token event. */
  streamTokens(ctx: StreamContext, chunk: TokenChunk): string[];
  /** Events after the last token: finish chunk, usage chunk, `[DONE]`, as the engine sends them. */
  streamEnd(ctx: StreamContext, done: Completion): string[];
  /** The engine's mid-stream error: events to send, then whether `[DONE]` follows (events empty = cut). */
  streamError(ctx: StreamContext): { events: string[]; done: boolean };
  /** A representative content chunk (the malformed fault cuts it in half). */
  sampleChunk(ctx: StreamContext): unknown;
  /** The body of a non-streamed answer. */
  whole(ctx: StreamContext, answer: WholeAnswer): unknown;
  /** prompt + max_tokens over the context: the engine's "too long" error. */
  tooLong(
    promptTokens: number,
    maxTokens: number | undefined,
    maxModelLen: number,
    kind: GenRequest["kind"],
  ): HttpError;
  /** A request body that fails validation. */
  invalid(problem: RequestProblem, kind: GenRequest["kind"]): HttpError;
  /** The error answered by an http429/http500/http503 fault. */
  faultError(status: 429 | 500 | 503): HttpError;
  /** `GET /v1/models`. */
  models(o: MockOptions, created: number): unknown;
  /** `GET /health`: status and body (empty string = no body). */
  health(ready: boolean): { status: number; body: string; json: boolean };
}

const HEX = "0123456789abcdef";
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `n` random characters from `alphabet` (crypto randomness: ids need not be reproducible). */
export function randomChars(n: number, alphabet: string = HEX): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let s = "";
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return s;
}

/** A 32-hex id (a uuid4 hex). */
export function hexId(): string {
  return randomChars(32, HEX);
}

/** `n` random letters and digits. */
export function alnumId(n: number): string {
  return randomChars(n, ALNUM);
}

/** Unix time in whole seconds. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

/** The concatenated text of some tokens. */
export function textOf(tokens: readonly OutputToken[]): string {
  return tokens.map((t) => t.text).join("");
}

/** Whether a request's `stream_options` turns usage on when `include_usage` defaults to true (vLLM, trtllm). */
export function usageOnByObject(req: GenRequest): boolean {
  return req.streamOptions !== undefined && req.streamOptions.include_usage !== false;
}

/** Whether `stream_options.include_usage` is explicitly true (SGLang, llama.cpp, OpenAI). */
export function usageOnByFlag(req: GenRequest): boolean {
  return req.streamOptions?.include_usage === true;
}
