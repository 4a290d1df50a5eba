/**
 * The ONE streaming loop, for chat and completions alike: send, time the headers, read the body,
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
import { MAX_ERROR_BODY_BYTES, MAX_SSE_LINE_BYTES } from "../cli/limits.ts";
import { redactUrlsInText, scrubSecret } from "../evidence/redact.ts";
import { SseParser } from "../sse/mod.ts";
import { FAULT_HEADER } from "./_fault.ts";
import { StreamState } from "./_stream_state.ts";
import { defaultFetch } from "./default_fetch.ts";
import { apiUrl, type Endpoint } from "./endpoint.ts";
import { BodyDecodeError, readLimited } from "./body_decode.ts";
import { readStream, SinkFeed } from "./_body_feed.ts";
import { beforeResponseMessage, CLOSED_WITHOUT_RESPONSE, networkMessage, notFoundNote, redirectNote } from "./network_errors.ts";
import { describeNonSseBody, formatHttpError, parseErrorBody, retryAfterNote } from "./error_body.ts";
import { type CountTokensFn, resolveTokenCount } from "./token_count.ts";
import type { Api, FailureKind, RequestResult } from "./types.ts";

export { CLOSED_WITHOUT_RESPONSE, isUnreachable } from "./network_errors.ts";

/** Default whole-request limit (CONTRACTS.md: `--timeout-s` 600). */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Default limit on silence, before the headers and between reads (`--idle-timeout-s` 60). */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Bytes of a 2xx body kept while it has produced no SSE event, to say what it was instead. */
const MAX_HEAD_TEXT = 4 * 1024;
/** How long to wait for the body to end after `data: [DONE]` before the client stops reading. */
const DONE_GRACE_MS = 500;

/** Options for {@link streamCompletion}. */
export interface StreamOptions {
  /** The fetch to use (tests pass an in-process one); default {@link defaultFetch}. */
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

class Stopped extends Error {
  constructor(readonly kind: FailureKind, message: string) {
    super(message);
  }
}

function seconds(ms: number): string {
  return `${+(ms / 1000).toFixed(3)} s`;
}

/**
 * A request closed without any response this soon after it was sent is taken for a pooled
 * keep-alive connection the server had just closed (a race every HTTP client meets: Node's
 * fetch, for one, hands out such sockets; Bun's retries them itself), and is sent once more.
 */
export const STALE_CONNECTION_RETRY_WITHIN_MS = 1000;

/** Whether a failed attempt looks like a stale pooled connection rather than a server that closes on every request. */
function staleConnection(r: RequestResult): boolean {
  return !r.ok && r.errorKind === "network" && r.tHeadersMs === null &&
    (r.error ?? "").startsWith(CLOSED_WITHOUT_RESPONSE) && r.tEndMs - r.tSendMs < STALE_CONNECTION_RETRY_WITHIN_MS;
}

/**
 * Sends one streamed request and measures it. Never throws for a failed request: the result
 * says `ok: false` with `errorKind` and `error`. A request the server closed before any response
 * within a second is sent once more (see {@link STALE_CONNECTION_RETRY_WITHIN_MS}); the result is
 * the second attempt's, timed from its own send, with `connectionRetries` 1. A server that closes
 * every connection still fails, as `network` "closed without a response".
 *
 * @param ep the server (see parseEndpoint)
 * @param api "chat" or "completions"
 * @param body the JSON body (see buildBody in lib/engines), or its serialized text
 * @param opts fetch, clock, signal, key, timeouts, ids
 */
export async function streamCompletion(
  ep: Endpoint,
  api: Api,
  body: unknown,
  opts: StreamOptions = {},
): Promise<RequestResult> {
  const first = await attemptOnce(ep, api, body, opts);
  if (!staleConnection(first) || opts.signal?.aborted) return first;
  const second = await attemptOnce(ep, api, body, opts);
  second.connectionRetries = 1;
  return second;
}

async function attemptOnce(
  ep: Endpoint,
  api: Api,
  body: unknown,
  opts: StreamOptions,
): Promise<RequestResult> {
  const doFetch = opts.fetch ?? defaultFetch();
  const clock = opts.clock ?? (() => performance.now());
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "text/event-stream",
    // No compression: a compressing server or proxy buffers events, which distorts every timing.
    "accept-encoding": "identity",
    ...opts.headers,
  };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  if (FAULT_HEADER !== null) headers[FAULT_HEADER[0]] = FAULT_HEADER[1];
  const secret = opts.apiKey || null;
  const scrub = (text: string) => secret !== null && text.includes(secret) ? scrubSecret(text, secret) : text;

  const st = new StreamState(askedTokens(body));
  st.secret = secret;
  const ac = new AbortController();
  let stop: Stopped | null = null;
  const halt = (kind: FailureKind, message: string) => {
    if (stop === null) {
      stop = new Stopped(kind, message);
      ac.abort(stop);
    }
  };
  const onAbort = () => halt("aborted", "aborted: the run was interrupted");
  let status = 0;
  let tHeaders: number | null = null;
  let streamed = false;
  let contentType = "";
  let lastByte = 0;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let totalTimer: ReturnType<typeof setTimeout> | undefined;
  const idleCheck = () => {
    const quiet = clock() - lastByte;
    if (quiet >= idleMs) {
      halt(
        "timeout",
        `timeout: no data for ${seconds(idleMs)}${tHeaders === null ? " (no response headers)" : ""}`,
      );
    } else idleTimer = setTimeout(idleCheck, Math.max(1, idleMs - quiet));
  };

  // The send time: now, or (with a client that reports it, as the Node build's does) when the
  // request was handed to its connection, so the client's own set-up stays out of TTFT.
  let tSend = clock();
  lastByte = tSend;
  const onSend = () => {
    tSend = lastByte = clock();
  };
  if (opts.signal?.aborted) {
    halt("aborted", "aborted before the request was sent");
  } else {
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    totalTimer = setTimeout(
      () => halt("timeout", `timeout: request took longer than ${seconds(timeoutMs)}`),
      timeoutMs,
    );
    idleTimer = setTimeout(idleCheck, idleMs);
  }
  const parser = new SseParser(st, { maxLineBytes: opts.maxSseLineBytes ?? MAX_SSE_LINE_BYTES });
  let head = "";
  let headDecoder: TextDecoder | null = null;
  let doneTimer: ReturnType<typeof setTimeout> | undefined;
  // Stops reading the body early (the parser overflowed, or [DONE] came and the server kept the
  // stream open): the sink's stop, unless the body is read through its stream.
  let stopReading: () => void = () => sink.stop();
  /** One body chunk, stamped as it is handed over; false when reading should stop (the parser overflowed). */
  const onChunk = (bytes: Uint8Array): boolean => {
    const now = clock();
    lastByte = now;
    st.tRead = now;
    parser.pushBytes(bytes);
    // The parser dropped its buffer; stop the body so memory stays bounded.
    if (parser.overflowed !== null) return false;
    if (st.nSseEvents === 0 && head.length < MAX_HEAD_TEXT) {
      // No event yet (an error body or a whole JSON answer on a 2xx?): keep its start.
      headDecoder ??= new TextDecoder();
      head += headDecoder.decode(bytes, { stream: true });
    } else if (st.sawDone && doneTimer === undefined) {
      // Nothing after [DONE] counts; a server that keeps the body open is not waited for.
      doneTimer = setTimeout(() => stopReading(), Math.min(idleMs, DONE_GRACE_MS));
    }
    return true;
  };
  // A fetch that takes the sink (ik's HTTP/1.1 client) hands over the body chunk by chunk; the
  // head's time is then taken when the fetch reads it, before any body chunk is stamped.
  const sink = new SinkFeed(() => (tHeaders = lastByte = clock()), onChunk);
  try {
    if (stop !== null) throw stop;
    const url = apiUrl(ep, api);
    // redirect "manual": a followed 301/302 would turn the POST into a GET; report it instead.
    // decompress false (Bun; others ignore it): Bun's own decoder prints a line on stderr for a
    // corrupt body, and its failure would read as a network error. decodedBody decodes instead.
    const init = { method: "POST", headers, body: payload, signal: ac.signal, redirect: "manual", decompress: false, onSend, bodySink: sink };
    const res = await doFetch(url, init as RequestInit);
    if (!sink.taken) tHeaders = lastByte = clock();
    status = res.status;
    try {
      opts.onHeaders?.(tHeaders as number);
    } catch {
      // a display hook must not turn into a failed measurement
    }
    if (status < 200 || status > 299) {
      let text: string;
      try {
        text = scrub(await readLimited(res, MAX_ERROR_BODY_BYTES, () => (lastByte = clock())));
      } catch (e) {
        text = `(error body unreadable: ${networkMessage(e)})`;
      }
      const info = parseErrorBody(text, status);
      st.fail(
        "http",
        formatHttpError(status, info) + retryAfterNote(res.headers.get("retry-after")) +
          redirectNote(status, res.headers.get("location")) + notFoundNote(status, url, info.message),
      );
    } else if (res.body === null && !sink.taken) {
      st.fail("protocol", `HTTP ${status} with no body`);
    } else {
      streamed = true;
      contentType = res.headers.get("content-type") ?? "";
      try {
        if (sink.taken) await sink.read();
        else await readStream(res.body as ReadableStream<Uint8Array>, res.headers, onChunk, (f) => (stopReading = f));
        parser.end();
      } finally {
        clearTimeout(doneTimer);
      }
      if (st.failKind === null) classifyEnd(st, contentType, scrub(head));
    }
  } catch (e) {
    const s = stop as Stopped | null;
    if (st.sawDone && (s === null || s.kind === "timeout")) {
      // [DONE] came, then the server kept the stream open or dropped the connection: the
      // response was complete, so this is not a failure.
      if (st.failKind === null) classifyEnd(st, contentType, "");
    } else if (s !== null) st.fail(s.kind, s.message);
    else if (e instanceof BodyDecodeError) st.fail("protocol", `${e.message}: ${networkMessage(e.inner)}`);
    else if (tHeaders !== null) st.fail("network", `connection lost mid-body: ${networkMessage(e)}`);
    else st.fail("network", beforeResponseMessage(e));
  } finally {
    clearTimeout(totalTimer);
    clearTimeout(idleTimer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
  const tEnd = clock();
  return buildResult(st, api, opts, { status, tSend, tHeaders, tEnd, streamed }, secret);
}

/** The tokens a JSON body asks for (`max_tokens`, or chat's `max_completion_tokens`), or null (a serialized body, or none). */
function askedTokens(body: unknown): number | null {
  if (body === null || typeof body !== "object") return null;
  const b = body as { max_tokens?: unknown; max_completion_tokens?: unknown };
  const n = typeof b.max_tokens === "number" ? b.max_tokens : b.max_completion_tokens;
  return typeof n === "number" ? n : null;
}

/**
 * Decides how a stream that ended without a transport error went.
 * @param head the start of the body when it produced no SSE event at all, else ""
 */
function classifyEnd(st: StreamState, contentType: string, head: string): void {
  if (st.log.length === 0) {
    let why = /text\/event-stream/i.test(contentType) || st.nSseEvents > 0
      ? "stream ended with no token"
      : `response is not an event stream (content-type '${contentType || "none"}') and carried no token`;
    if (st.nSseEvents === 0) {
      const body = describeNonSseBody(head);
      if (body) why += `: ${body}`;
    }
    st.fail("protocol", why);
  } else if (!st.sawDone && st.finishReason === null) {
    st.fail("protocol", "truncated: stream ended without [DONE] and without a finish_reason");
  }
}

/** Server text with the API key scrubbed (an echoing server must not leak it). */
function scrubbed(text: string, secret: string | null): string {
  return secret !== null && text.includes(secret) ? scrubSecret(text, secret) : text;
}

function scrubbedUsage(usage: Record<string, unknown> | null, secret: string | null): Record<string, unknown> | null {
  if (usage === null || secret === null) return usage;
  const json = JSON.stringify(usage);
  if (!json.includes(secret)) return usage;
  try {
    return JSON.parse(scrubSecret(json, secret));
  } catch {
    return { completion_tokens: usage.completion_tokens };
  }
}

function buildResult(
  st: StreamState,
  api: Api,
  opts: StreamOptions,
  t: { status: number; tSend: number; tHeaders: number | null; tEnd: number; streamed: boolean },
  secret: string | null,
): RequestResult {
  const text = st.text.toString(), reasoning = st.reasoning.toString(), toolArguments = st.toolArguments.toString();
  const count = t.streamed
    ? resolveTokenCount({
      nIds: st.nIds,
      usage: st.usage,
      nTokenEvents: st.log.length,
      text,
      reasoning,
      toolArguments,
    }, opts.countTokens)
    : null;
  return {
    id: opts.id ?? null,
    bucket: opts.bucket ?? null,
    salt: opts.salt ?? null,
    api,
    ok: st.failKind === null,
    error: st.failMessage === null ? null : redactUrlsInText(scrubbed(st.failMessage, secret)),
    errorKind: st.failKind,
    status: t.status,
    tScheduledMs: opts.tScheduledMs ?? null,
    tSendMs: t.tSend,
    tHeadersMs: t.tHeaders,
    tFirstMs: st.tFirst,
    tFirstContentMs: st.tFirstContent,
    connectionRetries: 0,
    tLastMs: st.tLast,
    tDoneMs: st.tDone,
    tEndMs: t.tEnd,
    eventTimesMs: st.log.timesMs(),
    eventIds: st.log.idsPerEvent(),
    nTokenEvents: st.log.length,
    nSseEvents: st.nSseEvents,
    endedWithDone: st.sawDone,
    nTokens: count ? count.nTokens : null,
    tokenCountMethod: count ? count.method : null,
    nIds: count ? count.nIds : null,
    nUsage: count ? count.nUsage : null,
    countMismatch: count ? count.countMismatch : null,
    tokenIds: st.tokenIds,
    finishReason: st.finishReason === null ? null : scrubbed(st.finishReason, secret),
    usage: scrubbedUsage(st.usage, secret),
    text: scrubbed(text, secret),
    reasoning: scrubbed(reasoning, secret),
    serverTimings: st.serverTimings,
    toolArguments: scrubbed(toolArguments, secret),
  };
}
