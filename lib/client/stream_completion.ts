/**
 * The ONE streaming loop, for chat and completions alike: send, time the headers, read the body,
 * parse SSE by hand, time every token event, count tokens, and turn every way a request can go
 * wrong into a failure kind. Library code: fetch, clock and signal are injected.
 *
 * Timing notes: every timestamp comes from one monotonic clock. An event's time is the arrival of
 * the read that brought it (events that share a read arrived together). fetch cannot time the TCP
 * or TLS connect separately, so TTFT includes connection set-up when a new connection was needed.
 * @module
 */
import { SseParser } from "../sse/mod.ts";
import { StreamState } from "./_stream_state.ts";
import { apiUrl, type Endpoint } from "./endpoint.ts";
import { describeNonSseBody, formatHttpError, parseErrorBody, retryAfterNote } from "./error_body.ts";
import { type CountTokensFn, resolveTokenCount } from "./token_count.ts";
import type { Api, FailureKind, RequestResult } from "./types.ts";

/** Default whole-request limit (CONTRACTS.md: `--timeout-s` 600). */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Default limit on silence, before the headers and between reads (`--idle-timeout-s` 60). */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const MAX_ERROR_BODY = 64 * 1024;
/** Bytes of a 2xx body kept while it has produced no SSE event, to say what it was instead. */
const MAX_HEAD_TEXT = 4 * 1024;
/** How long to wait for the body to end after `data: [DONE]` before the client stops reading. */
const DONE_GRACE_MS = 500;

/** Options for {@link streamCompletion}. */
export interface StreamOptions {
  /** The fetch to use (tests pass an in-process one); default the global fetch. */
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
}

class Stopped extends Error {
  constructor(readonly kind: FailureKind, message: string) {
    super(message);
  }
}

function seconds(ms: number): string {
  return `${+(ms / 1000).toFixed(3)} s`;
}

/** One line from a fetch or body-read error, with its cause (Deno puts the OS error there). */
function networkMessage(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 4; depth++) {
    const m = cur instanceof Error ? cur.message : String(cur);
    if (m && !parts.some((p) => p.includes(m))) parts.push(m);
    cur = cur instanceof Error ? (cur as Error & { cause?: unknown }).cause : undefined;
  }
  return parts.join(": ").replace(/\s+/g, " ").replace(/ For more information, pass `verbose: true`.*$/, "");
}

/**
 * Sends one streamed request and measures it. Never throws for a failed request: the result
 * says `ok: false` with `errorKind` and `error`.
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
  const doFetch = opts.fetch ?? fetch;
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

  const st = new StreamState();
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

  const tSend = clock();
  lastByte = tSend;
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
  try {
    if (stop !== null) throw stop;
    // redirect "manual": a followed 301/302 would turn the POST into a GET; report it instead.
    const res = await doFetch(apiUrl(ep, api), { method: "POST", headers, body: payload, signal: ac.signal, redirect: "manual" });
    tHeaders = lastByte = clock();
    status = res.status;
    if (status < 200 || status > 299) {
      let text: string;
      try {
        text = await readLimited(res, MAX_ERROR_BODY, () => (lastByte = clock()));
      } catch (e) {
        text = `(error body unreadable: ${networkMessage(e)})`;
      }
      st.fail(
        "http",
        formatHttpError(status, parseErrorBody(text, status)) +
          retryAfterNote(res.headers.get("retry-after")) + redirectNote(status, res.headers.get("location")),
      );
    } else if (res.body === null) {
      st.fail("protocol", `HTTP ${status} with no body`);
    } else {
      streamed = true;
      contentType = res.headers.get("content-type") ?? "";
      const parser = new SseParser(st);
      const reader = decodedBody(res.body, res.headers).getReader();
      let doneTimer: ReturnType<typeof setTimeout> | undefined;
      let head = "";
      let headDecoder: TextDecoder | null = null;
      try {
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          const now = clock();
          lastByte = now;
          st.tRead = now;
          parser.pushBytes(r.value);
          if (st.nSseEvents === 0 && head.length < MAX_HEAD_TEXT) {
            // No event yet (an error body or a whole JSON answer on a 2xx?): keep its start.
            headDecoder ??= new TextDecoder();
            head += headDecoder.decode(r.value, { stream: true });
          } else if (st.sawDone && doneTimer === undefined) {
            // Nothing after [DONE] counts; a server that keeps the body open is not waited for.
            doneTimer = setTimeout(() => reader.cancel().catch(() => {}), Math.min(idleMs, DONE_GRACE_MS));
          }
        }
        parser.end();
      } finally {
        clearTimeout(doneTimer);
        reader.releaseLock();
      }
      if (st.failKind === null) classifyEnd(st, contentType, head);
    }
  } catch (e) {
    const s = stop as Stopped | null;
    if (st.sawDone && (s === null || s.kind === "timeout")) {
      // [DONE] came, then the server kept the stream open or dropped the connection: the
      // response was complete, so this is not a failure.
      if (st.failKind === null) classifyEnd(st, contentType, "");
    } else if (s !== null) st.fail(s.kind, s.message);
    else st.fail("network", `${tHeaders === null ? "" : "connection lost mid-body: "}${networkMessage(e)}`);
  } finally {
    clearTimeout(totalTimer);
    clearTimeout(idleTimer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
  const tEnd = clock();
  return buildResult(st, api, opts, { status, tSend, tHeaders, tEnd, streamed });
}

/**
 * True when the request failed before any response arrived because the connection could not be
 * made (refused, DNS, no route): commands map this to exit 69 rather than a failed measurement.
 */
export function isUnreachable(r: RequestResult): boolean {
  return r.errorKind === "network" && r.tHeadersMs === null;
}

/** For a 3xx: where the server points, so the user can fix --base-url. */
function redirectNote(status: number, location: string | null): string {
  return status >= 300 && status < 400 ? ` (redirected to ${location ?? "an unnamed location"}; point --base-url there)` : "";
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

/**
 * The body, decompressed when the server compressed it although the request asked for
 * `identity` and the runtime left it compressed (Deno does not decode when the caller set
 * Accept-Encoding; Bun does). Decided once per response from the header and the first bytes'
 * magic, so a body the runtime already decoded is passed through untouched.
 */
function decodedBody(body: ReadableStream<Uint8Array>, headers: Headers): ReadableStream<Uint8Array> {
  const ce = headers.get("content-encoding")?.trim().toLowerCase();
  if (!ce || ce === "identity") return body;
  const format = ce === "gzip" || ce === "x-gzip" ? "gzip" : ce === "deflate" ? "deflate" : null;
  if (format === null) return body;
  const src = body.getReader();
  let first: Uint8Array | null = null;
  const raw = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      if (first !== null) {
        ctrl.enqueue(first);
        first = null;
        return;
      }
      const r = await src.read();
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    cancel(reason) {
      return src.cancel(reason);
    },
  }, { highWaterMark: 0 });
  // Peek at the first non-empty read to see whether it is still compressed.
  let inner: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return new ReadableStream<Uint8Array>({
    async start(ctrl) {
      let r = await src.read();
      while (!r.done && r.value.length === 0) r = await src.read();
      if (r.done) {
        ctrl.close();
        return;
      }
      const b = r.value;
      first = b;
      const compressed = format === "gzip"
        ? b[0] === 0x1f && (b.length < 2 || b[1] === 0x8b)
        : (b[0] & 0x0f) === 8 && (b.length < 2 || ((b[0] << 8) | b[1]) % 31 === 0);
      const decoded = compressed
        ? raw.pipeThrough(
          new DecompressionStream(format) as unknown as TransformStream<Uint8Array, Uint8Array>,
        )
        : raw;
      inner = decoded.getReader();
    },
    async pull(ctrl) {
      if (inner === null) return;
      const r = await inner.read();
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    cancel(reason) {
      return inner !== null ? inner.cancel(reason) : src.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** Reads at most `limit` bytes of a body as text, then drops the rest. */
async function readLimited(res: Response, limit: number, onBytes: () => void): Promise<string> {
  if (res.body === null) return "";
  const reader = decodedBody(res.body, res.headers).getReader();
  const dec = new TextDecoder();
  let text = "";
  let n = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      onBytes();
      if (n < limit) text += dec.decode(r.value.subarray(0, limit - n), { stream: true });
      n += r.value.length;
    }
  } finally {
    reader.releaseLock();
  }
  return text + dec.decode();
}

function buildResult(
  st: StreamState,
  api: Api,
  opts: StreamOptions,
  t: { status: number; tSend: number; tHeaders: number | null; tEnd: number; streamed: boolean },
): RequestResult {
  const count = t.streamed
    ? resolveTokenCount({
      nIds: st.nIds,
      usage: st.usage,
      nTokenEvents: st.log.length,
      text: st.text,
      reasoning: st.reasoning,
      toolArguments: st.toolArguments,
    }, opts.countTokens)
    : null;
  return {
    id: opts.id ?? null,
    bucket: opts.bucket ?? null,
    salt: opts.salt ?? null,
    api,
    ok: st.failKind === null,
    error: st.failMessage,
    errorKind: st.failKind,
    status: t.status,
    tScheduledMs: opts.tScheduledMs ?? null,
    tSendMs: t.tSend,
    tHeadersMs: t.tHeaders,
    tFirstMs: st.tFirst,
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
    finishReason: st.finishReason,
    usage: st.usage,
    text: st.text,
    reasoning: st.reasoning,
    toolArguments: st.toolArguments,
  };
}
