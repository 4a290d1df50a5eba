/**
 * The ONE streaming loop, for chat and completions alike (its one attempt is _attempt.ts): send, time the headers, read the body,
 * parse SSE by hand, time every token event, count tokens, and turn every way a request can go
 * wrong into a failure kind. Library code: fetch, clock and signal are injected.
 *
 * Timing notes: every timestamp comes from one monotonic clock. t_send is taken just before the
 * fetch call, or later when the fetch reports (an init's `onSend`, which the Node build's client
 * calls) that the request is being handed to its connection. An event's time is the arrival of
 * the read that brought it (events that share a read arrived together). fetch cannot time the TCP
 * or TLS connect separately, so TTFT includes connection set-up when a new connection was needed.
 * @module
 */
import { Attempt, RequestPayload } from "./_attempt.ts";
import type { Endpoint } from "./endpoint.ts";
import type { StreamOptions } from "./stream_options.ts";
import type { Api, RequestResult } from "./types.ts";

export { CLOSED_WITHOUT_RESPONSE, isUnreachable } from "./network_errors.ts";

export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, STALE_CONNECTION_RETRY_WITHIN_MS } from "./_attempt.ts";

export type { StreamOptions } from "./stream_options.ts";

/**
 * Sends one streamed request and measures it. Never throws for a failed request: the result
 * says `ok: false` with `errorKind` and `error`. A request sent on a reused pooled connection that
 * the server closed before any response byte, within a second, is sent once more on a new
 * connection (see STALE_CONNECTION_RETRY_WITHIN_MS in _resend.ts); the result is the second
 * attempt's, timed from the FIRST send, with `connectionRetries` 1. A fresh connection closed
 * unanswered, or one closed mid-head, is a `network` failure, never resent.
 *
 * @param ep the server (see parseEndpoint)
 * @param api "chat" or "completions"
 * @param body the JSON body (see buildBody in lib/engines), or its serialized text
 * @param opts fetch, clock, signal, key, timeouts, ids
 */
export function streamCompletion(
  ep: Endpoint,
  api: Api,
  body: unknown,
  opts: StreamOptions = {},
): Promise<RequestResult> {
  // Serialized once, before anything is sent: a body that cannot be serialized rejects here (the
  // caller's mistake, not a failed request). No async function and no closure here: a suspended
  // call is a frame, a generator and a promise held for the whole response (issue 21); the
  // attempt sends itself again on a stale connection.
  let req: RequestPayload;
  try {
    req = new RequestPayload(body);
  } catch (e) {
    return Promise.reject(e);
  }
  return new Attempt(req, opts).run(ep, api);
}
