/**
 * When a request is sent a second time: only after a stale pooled keep-alive connection, and how the
 * resend is timed (from the first send).
 * @module
 */
import { CLOSED_WITHOUT_RESPONSE } from "./network_errors.ts";
import type { RequestResult } from "./types.ts";

/**
 * A request sent on a reused pooled keep-alive connection that the server closed before any byte of
 * a response, this soon after it was sent, is taken for a connection the server closed while idle
 * just as the request went out (a race every HTTP client meets; browsers and Node's http docs resend
 * then) and is sent once more, on a new connection. Nowhere else: RFC 9112 §9.3.1 lets a client
 * resend a POST only when it cannot have been applied, and a reset fresh connection, or one closed
 * after part of a response, says the server took the request: a `network` failure, recorded.
 */
export const STALE_CONNECTION_RETRY_WITHIN_MS = 1000;

/**
 * Whether a failed attempt met a stale pooled connection: the fetch said the connection was reused
 * (`onSend(true)`: ik's HTTP/1.1 client says so; a fetch that cannot tell, Bun's, never retries),
 * and it closed with no response byte at all.
 */
export function staleConnection(r: RequestResult, reused: boolean): boolean {
  return reused && !r.ok && r.errorKind === "network" && r.tHeadersMs === null &&
    (r.error ?? "").startsWith(CLOSED_WITHOUT_RESPONSE) && r.tEndMs - r.tSendMs < STALE_CONNECTION_RETRY_WITHIN_MS;
}

/** What a resend keeps of the first attempt: its send time (the request's t_send) and its whole-request limit. */
export interface FirstSend {
  tSend: number;
  totalAt: number;
}
