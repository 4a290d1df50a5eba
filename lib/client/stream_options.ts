/**
 * The options of one streamed request (`streamCompletion` in stream_completion.ts): its own
 * module so that the loop's parts (its attempt, its result) and its entry can all name it without
 * importing each other.
 * @module
 */
import type { CountTokensFn } from "./token_count.ts";

/** Options for `streamCompletion` (stream_completion.ts). */
export interface StreamOptions {
  /** The fetch to use (tests pass an in-process one); default `defaultFetch()` (default_fetch.ts). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Monotonic clock in ms; default `performance.now`. It also measures idle time. */
  clock?: () => number;
  /** Aborting it ends the request as `aborted`. */
  signal?: AbortSignal;
  /** Bearer token (the caller reads it from the env var named by `--api-key-env`). */
  apiKey?: string;
  /** Whole-request limit in ms (default 600 000). */
  timeoutMs?: number;
  /** Limit on a silence with no byte received, in ms (default 60 000). */
  idleTimeoutMs?: number;
  /** Tokenizer hook, used for the count only when the stream had neither ids nor usage. */
  countTokens?: CountTokensFn;
  /** Prompt id, copied into the result. */
  id?: string | null;
  /** Prompt bucket, copied into the result. */
  bucket?: string | null;
  /** Prefix-cache salt, copied into the result. */
  salt?: string | null;
  /** When the request was due (open-loop schedules), on the same clock. */
  tScheduledMs?: number | null;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /**
   * Called once when the response headers arrive, with that time on the clock (a progress line
   * can stop saying "waiting for headers"). A hook that throws does not fail the request.
   */
  onHeaders?: (tMs: number) => void;
  /** The longest SSE line accepted, in bytes (default MAX_SSE_LINE_BYTES, 64 MiB; tests pass less). */
  maxSseLineBytes?: number;
}
