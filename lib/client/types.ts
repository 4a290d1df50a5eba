/**
 * What one streamed request produces: every timestamp on one monotonic clock (ms, from
 * `performance.now()` unless a clock is injected), token counts and how they were made, and the
 * failure kind when it failed. A failed request is a result, never an exception.
 * @module
 */

/** The OpenAI endpoint a request goes to. */
export type Api = "chat" | "completions";

/** The APIs ik can call, in help order. */
export const APIS: readonly Api[] = ["chat", "completions"] as const;

/** How `nTokens` was counted, in order of preference (CONTRACTS.md "token count methods"). */
export type TokenCountMethod = "ids" | "usage" | "tokenizer" | "sse_events";

/** Why a request failed (CONTRACTS.md "Failure kinds"). */
export type FailureKind = "http" | "network" | "protocol" | "timeout" | "aborted";

/** The measured outcome of one streamed request. */
export interface RequestResult {
  /** Prompt id (from the prompt set), when the caller gave one. */
  id: string | null;
  /** Prompt bucket, when the caller gave one. */
  bucket: string | null;
  /** Prefix-cache salt used for this request, when any. */
  salt: string | null;
  /** The endpoint called. */
  api: Api;
  /** True when the stream delivered tokens and ended properly, with no error event. */
  ok: boolean;
  /** Failure message (one line), or null. */
  error: string | null;
  /** Failure kind, or null when ok. */
  errorKind: FailureKind | null;
  /** HTTP status, 0 when no response arrived. */
  status: number;

  /** When the request was due (open-loop executors), or null. */
  tScheduledMs: number | null;
  /** Just before the request was handed to fetch (connection set-up is inside TTFT). */
  tSendMs: number;
  /** When the response headers arrived, or null. */
  tHeadersMs: number | null;
  /** Arrival of the first token-bearing event, or null. */
  tFirstMs: number | null;
  /** Attempts repeated because the first met a stale keep-alive connection (0 or 1). */
  connectionRetries: number;
  /** Arrival of the first content token when reasoning tokens came before it (reasoning models), else null. */
  tFirstContentMs: number | null;
  /** Arrival of the last token-bearing event, or null. */
  tLastMs: number | null;
  /** Arrival of `data: [DONE]`, or null when the stream ended without it. */
  tDoneMs: number | null;
  /** When the client was done with the request (body ended, or the failure was noticed). */
  tEndMs: number;

  /** Arrival time of each token-bearing event (length = nTokenEvents). */
  eventTimesMs: Float64Array;
  /** Streamed token ids in each token-bearing event (0 when the event had none). */
  eventIds: Uint32Array;
  /** Number of token-bearing events. */
  nTokenEvents: number;
  /** Number of SSE events with data, of any kind ([DONE], role and usage chunks included). */
  nSseEvents: number;
  /** Whether the stream ended with `data: [DONE]` (information, not a success rule). */
  endedWithDone: boolean;

  /** Output tokens, counted by `tokenCountMethod`; null when no stream was read. */
  nTokens: number | null;
  /** How nTokens was counted. */
  tokenCountMethod: TokenCountMethod | null;
  /** Total streamed token ids, or null when the server streamed none. */
  nIds: number | null;
  /** `usage.completion_tokens` of the last usage block, or null. */
  nUsage: number | null;
  /** When ids and usage disagree, a short description ("ids 11 != usage 10"), else null. */
  countMismatch: string | null;
  /**
   * The streamed token ids in order (empty when none were streamed): 32-bit rows, or doubles when
   * a server sent an id that is not an integer in 0..2^32-1 (kept exactly as read).
   */
  tokenIds: Uint32Array | Float64Array;

  /** The last non-null finish_reason seen, or null. */
  finishReason: string | null;
  /** The last usage block seen (trtllm repeats it on every chunk), or null. */
  usage: Record<string, unknown> | null;
  /** Generated text (content, or completions text). */
  text: string;
  /** The engine's own timings for the request (llama.cpp `timings`: prompt_ms, predicted_ms, predicted_n…), else null. */
  serverTimings: Record<string, unknown> | null;
  /** Generated reasoning text (reasoning_content / reasoning). */
  reasoning: string;
  /** Streamed tool-call arguments, concatenated. */
  toolArguments: string;
}
