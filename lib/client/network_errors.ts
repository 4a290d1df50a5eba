/**
 * How a request that failed before (or while) its response arrived is worded: the runtime's
 * message with its causes, connect failures (refused, DNS, no route: the server is unreachable)
 * told from a connection the server accepted and then closed, and the notes a 404 or a redirect
 * get so the user can fix --base-url.
 * @module
 */
import { redactUrl } from "../evidence/redact.ts";
import type { RequestResult } from "./types.ts";

/** The start of the message of a connection the server accepted and closed before any status line. */
export const CLOSED_WITHOUT_RESPONSE = "closed without a response";
/**
 * The start of the message of a connection closed after part of a response head came (ik's HTTP/1.1
 * client tells it: its parser says "socket closed mid-head"). The server evidently took the request:
 * it is never sent again.
 */
export const CLOSED_MID_HEAD = "closed mid-head";

/** Connect-phase failures (refused, DNS, no route): the server is unreachable, not misbehaving. */
export const CONNECT_FAILED =
  /ECONNREFUSED|refused|ENOTFOUND|EAI_AGAIN|EAI_NONAME|getaddrinfo|dns error|name or service not known|EHOSTUNREACH|ENETUNREACH|no route|network is unreachable|\(Connect\)|unable to connect|failed to connect/i;
/** A connection that was open and then closed or reset by the peer. */
export const PEER_CLOSED = /ECONNRESET|closed|reset by peer|EPIPE|broken pipe|socket hang up|unexpected eof/i;

/** One line from a fetch or body-read error, with its cause (Deno puts the OS error there). */
export function networkMessage(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 4; depth++) {
    const m = cur instanceof Error ? cur.message : String(cur);
    if (m && !parts.some((p) => p.includes(m))) parts.push(m);
    cur = cur instanceof Error ? (cur as Error & { cause?: unknown }).cause : undefined;
  }
  return parts.join(": ").replace(/\s+/g, " ").replace(/ For more information, pass `verbose: true`.*$/, "");
}

/** The error code a runtime attached (Bun sets `code`, Node-style; Deno puts the OS error in `cause`). */
export function errorCode(e: unknown): string {
  for (let cur = e, depth = 0; cur && depth < 4; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cur = cur instanceof Error ? (cur as Error & { cause?: unknown }).cause : undefined;
  }
  return "";
}

/**
 * What each client throws for a response it cannot parse: ik's HTTP/1.1 client (`ERR_HTTP_PARSE`),
 * Bun's fetch (`InvalidHTTPResponse` mid-body, `Malformed_HTTP_Response` for a head), Node's llhttp
 * (`HPE_*`; its `HPE_INVALID_EOF_STATE` is a connection closed mid-message, a network failure).
 */
const MALFORMED_CODE = /^(?:ERR_HTTP_PARSE|InvalidHTTPResponse|Malformed_HTTP_Response|HPE_(?!INVALID_EOF_STATE$)[A-Z_]+)$/;
/** The same in words where there is no code: Bun's message, Deno's (hyper's) parse errors. */
const MALFORMED_TEXT =
  /InvalidHTTPResponse|Malformed_HTTP_Response|invalid HTTP (?:version|status-code|header|method) parsed|message head is too large/;

/**
 * The message of a failure that was a response ik could not parse (a malformed status line, header
 * or chunk; a head over the limit; a server that does not speak HTTP/1.x), or null when `e` was not
 * one. CONTRACTS.md: a malformed response is a `protocol` failure, not a lost connection (the server
 * is up and answered).
 */
export function malformedResponseMessage(e: unknown): string | null {
  const msg = networkMessage(e);
  if (!MALFORMED_CODE.test(errorCode(e)) && !MALFORMED_TEXT.test(msg)) return null;
  return /^malformed\b/i.test(msg) ? msg : `malformed HTTP response: ${msg}`;
}

/**
 * A failure before any response: refused, DNS or no route keep the runtime's words (and count as
 * unreachable); a connection that was accepted and then closed or reset says so (and whether part
 * of a response head had come), because the server is there and misbehaving (an overloaded proxy,
 * a crashed worker, a TLS/plain mismatch).
 */
export function beforeResponseMessage(e: unknown): string {
  const msg = networkMessage(e);
  const code = errorCode(e);
  if (/\bclosed mid-head\b/.test(msg)) {
    return `${CLOSED_MID_HEAD}: the server sent the start of a response head, then closed the connection`;
  }
  if (CONNECT_FAILED.test(msg) || CONNECT_FAILED.test(code)) return msg;
  if (PEER_CLOSED.test(msg) || PEER_CLOSED.test(code)) {
    return `${CLOSED_WITHOUT_RESPONSE}: the server accepted the connection, then closed it before sending a status line`;
  }
  return msg;
}

/** For a 404: the URL that was asked for and, unless the server named a model, how to fix --base-url. */
export function notFoundNote(status: number, url: string, message: string): string {
  if (status !== 404) return "";
  const hint = /\bmodel\b/i.test(message)
    ? ""
    : "; check --base-url: give the server root, e.g. http://host:8000, or …/v1";
  return ` (POST ${redactUrl(url)}${hint})`;
}

/**
 * True when the request failed before any response arrived because the connection could not be
 * made (refused, DNS, no route): commands map this to exit 69 rather than a failed measurement. A
 * server that accepted the connection and closed it, or answered something that is not HTTP/1.x (a
 * `protocol` failure), is there: not unreachable.
 */
export function isUnreachable(r: RequestResult): boolean {
  const error = r.error ?? "";
  return r.errorKind === "network" && r.tHeadersMs === null &&
    !error.startsWith(CLOSED_WITHOUT_RESPONSE) && !error.startsWith(CLOSED_MID_HEAD);
}

/** For a 3xx: where the server points, so the user can fix --base-url. */
export function redirectNote(status: number, location: string | null): string {
  return status >= 300 && status < 400
    ? ` (redirected to ${location === null ? "an unnamed location" : redactUrl(location)}; point --base-url there)`
    : "";
}

