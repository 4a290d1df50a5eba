/**
 * The streaming client: endpoint parsing, the one streaming loop for chat and completions,
 * token counting, error bodies, request rows and the `/v1/models` check.
 *
 * @example
 * ```ts
 * import { parseEndpoint, requestRow, streamCompletion } from "./mod.ts";
 * const ep = parseEndpoint("http://127.0.0.1:8000/v1");
 * const body = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 16, stream: true };
 * const result = await streamCompletion(ep, "chat", body, { idleTimeoutMs: 5000 });
 * console.log(requestRow(result).ttft_ms);
 * ```
 * @module
 */
export { type ClientFetch, defaultFetch, setDefaultFetch } from "./default_fetch.ts";
export { apiUrl, type Endpoint, isLoopback, parseEndpoint, rootUrl, v1Url } from "./endpoint.ts";
export {
  describeNonSseBody,
  type ErrorInfo,
  errorInfoFromJson,
  formatHttpError,
  parseErrorBody,
  retryAfterNote,
} from "./error_body.ts";
export { listModels, type ModelsAnswer, type ModelsOptions, type ServedModel } from "./models.ts";
export { eventTimings, itlMs, kFirst, type RequestRow, requestRow } from "./row.ts";
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  streamCompletion,
  type StreamOptions,
} from "./stream_completion.ts";
export {
  type CountTokensFn,
  resolveTokenCount,
  type TokenCount,
  type TokenEvidence,
  usageCompletionTokens,
} from "./token_count.ts";
export { type Api, APIS, type FailureKind, type RequestResult, type TokenCountMethod } from "./types.ts";
export { isUnreachable } from "./stream_completion.ts";
