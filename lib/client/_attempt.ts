/**
 * One attempt of one streamed request, as one object: its state in fields and what happens to it
 * in methods, so an open stream holds this object, its parser and its columns, and not a scope of
 * closures per request (issue 21: at 1,000 streams the closures and timers of the function this
 * replaced were ~36 functions, 24 scopes and 2 timers a stream). Its limits are watched by the
 * process's one deadline timer (_deadlines.ts); the run's abort signal calls {@link Attempt.handleEvent};
 * ik's HTTP/1.1 client hands the body to it as a {@link SinkFeed}.
 *
 * Timing: see stream_completion.ts (every timestamp on one monotonic clock; t_send taken before the
 * fetch call or when the fetch reports the hand-over; an event's time is its read's arrival).
 * @module
 */
import { MAX_ERROR_BODY_BYTES, MAX_SSE_LINE_BYTES } from "../cli/limits.ts";
import { SseParser } from "../sse/mod.ts";
import { FAULT_HEADER } from "./_fault.ts";
import { StreamState } from "./_stream_state.ts";
import { RequestPayload } from "./_request_payload.ts";

export { RequestPayload } from "./_request_payload.ts";
export { STALE_CONNECTION_RETRY_WITHIN_MS } from "./_resend.ts";
import { deadlines, type Watched } from "./_deadlines.ts";
import { unwatchAbort, watchAbort } from "./_abort_watch.ts";
import { defaultFetch } from "./default_fetch.ts";
import { apiUrl, type Endpoint } from "./endpoint.ts";
import { BodyDecodeError, readLimited } from "./body_decode.ts";
import { type FeedOwner, readStream, SinkFeed } from "./_body_feed.ts";
import { beforeResponseMessage, malformedResponseMessage, networkMessage, notFoundNote, redirectNote } from "./network_errors.ts";
import { type FirstSend, staleConnection } from "./_resend.ts";
import { describeNonSseBody, formatHttpError, parseErrorBody, retryAfterNote } from "./error_body.ts";
import { buildResult, scrubbed } from "./_result.ts";
import type { Api, FailureKind, RequestResult } from "./types.ts";
import type { StreamOptions } from "./stream_options.ts";

/** Default whole-request limit (CONTRACTS.md: `--timeout-s` 600). */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Default limit on silence, before the headers and between reads (`--idle-timeout-s` 60). */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Bytes of a 2xx body kept while it has produced no SSE event, to say what it was instead. */
const MAX_HEAD_TEXT = 4 * 1024;
/** How long to wait for the body to end after `data: [DONE]` before the client stops reading. */
const DONE_GRACE_MS = 500;

/** Why the attempt was stopped from outside the body: a limit or the run's abort. */
class Stopped extends Error {
  constructor(readonly kind: FailureKind, message: string) {
    super(message);
  }
}

/** The default clock (one function for every attempt, not a closure each). */
const perfNow = () => performance.now();

function seconds(ms: number): string {
  return `${+(ms / 1000).toFixed(3)} s`;
}

/** A content type that says the body is an event stream. */
const EVENT_STREAM = /text\/event-stream/i;

/**
 * Decides how a stream that ended without a transport error went.
 * @param head the start of the body when it produced no SSE event at all, else ""
 */
function classifyEnd(st: StreamState, contentType: string, head: string): void {
  if (st.log.length === 0) {
    let why = EVENT_STREAM.test(contentType) || st.nSseEvents > 0
      ? "stream ended with no token"
      : `response is not an event stream (content-type '${contentType || "none"}') and carried no token`;
    if (st.nSseEvents === 0) {
      const body = describeNonSseBody(head);
      if (body) why += `: ${body}`;
    }
    st.fail("protocol", why);
  } else if (!st.sawDone && st.finishReason === null) {
    st.fail("protocol", "truncated: stream ended without [DONE] and without a finish_reason");
  } else if (st.finishReason === "abort" || st.finishReason === "error") {
    // SGLang ends a gracefully aborted request with finish_reason "abort" in a normal chunk, vLLM
    // an internal failure with "error": a partial answer, not a finished one.
    st.fail("protocol", `the server ended the stream with finish_reason '${st.finishReason}': the answer is partial`);
  }
}

/**
 * One attempt: {@link Attempt.run} sends it and resolves with its result; it never throws for a
 * failed request. A first attempt that meets a stale pooled connection sends the request once more
 * on a new connection and resolves with that second attempt's result (`connectionRetries` 1), timed
 * from the FIRST send: its t_send (and so send lag) is when the request was first due to go out, and
 * its TTFT and e2e include the failed attempt, the wait the request really had.
 */
export class Attempt implements Watched, FeedOwner {
  readonly st: StreamState;
  readonly #opts: StreamOptions;
  readonly #clock: () => number;
  readonly #idleMs: number;
  /** The whole-request limit's time, on performance.now (a real timer's clock, whatever the injected clock). */
  readonly #totalAt: number;
  readonly #secret: string | null;
  readonly #ac = new AbortController();
  readonly #parser: SseParser;
  readonly #sink: SinkFeed;
  readonly #req: RequestPayload;
  #stop: Stopped | null = null;
  /** The API asked (set by {@link run}; the result is built with it when the attempt ends). */
  #api: Api = "chat";
  /** The response's status, 0 before a head. */
  #status = 0;
  /** A 2xx with a body was read (the result's `streamed`). */
  #streamed = false;
  #contentType = "";
  /** Settles {@link run}'s promise when a body the sink took ends. */
  #resolve: ((r: RequestResult | Promise<RequestResult>) => void) | null = null;
  #tSend: number;
  #tHeaders: number | null = null;
  #lastByte: number;
  /** The start of a 2xx body that has produced no SSE event yet (to say what it was). */
  #head = "";
  #headDecoder: TextDecoder | null = null;
  /** When to stop waiting for the body's end after `[DONE]` (performance.now), or null. */
  #doneAt: number | null = null;
  /** Stops the body read through its stream (the fallback path); null: the sink's own stop. */
  #stopStream: (() => void) | null = null;
  /** The fetch said the request went out on a reused pooled connection (`onSend(true)`). */
  #reused = false;
  /** The first attempt's send, for a resend (null: this is the first attempt). */
  readonly #first: FirstSend | null;
  /** The fetch's hand-over report (`init.onSend`): t_send is taken again then, and whether the connection was reused. */
  readonly #onSend = (reused?: unknown) => {
    this.#tSend = this.#lastByte = this.#clock();
    this.#reused = reused === true;
  };

  /**
   * @param req the serialized body (shared with a retry)
   * @param opts the request's options
   * @param first for the resend after a stale connection: the first attempt's send time and limit
   *   (a resend is never resent); null for a first attempt
   */
  constructor(req: RequestPayload, opts: StreamOptions, first: FirstSend | null = null) {
    this.#req = req;
    this.#opts = opts;
    this.#first = first;
    this.#clock = opts.clock ?? perfNow;
    this.#idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#totalAt = first?.totalAt ?? performance.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#secret = opts.apiKey || null;
    this.st = new StreamState(req.asked);
    this.st.secret = this.#secret;
    this.#parser = new SseParser(this.st, { maxLineBytes: opts.maxSseLineBytes ?? MAX_SSE_LINE_BYTES });
    this.#sink = new SinkFeed(this);
    this.#tSend = this.#lastByte = this.#clock();
  }

  /** Ends the attempt from outside the body (once): the fetch and the body read fail with it. */
  #halt(kind: FailureKind, message: string): void {
    if (this.#stop === null) {
      this.#stop = new Stopped(kind, message);
      this.#ac.abort(this.#stop);
    }
  }

  /** The run's signal aborted (this object is its listener). */
  handleEvent(): void {
    this.#halt("aborted", "aborted: the run was interrupted");
  }

  /** {@link Watched}: the whole-request limit, the grace after `[DONE]`, the silence limit. */
  due(): number | null {
    const now = performance.now();
    if (this.#stop !== null) {
      // Halted: only the grace after [DONE] is left to keep (a fetch that ignores the abort signal).
      if (this.#doneAt === null) return null;
      if (now < this.#doneAt) return this.#doneAt - now;
      this.#doneAt = null;
      this.#stopBody();
      return null;
    }
    if (now >= this.#totalAt) {
      this.#halt("timeout", `timeout: request took longer than ${seconds(this.#opts.timeoutMs ?? DEFAULT_TIMEOUT_MS)}`);
      return null;
    }
    if (this.#doneAt !== null && now >= this.#doneAt) {
      // Nothing after [DONE] counts; a server that keeps the body open is not waited for.
      this.#doneAt = null;
      this.#stopBody();
    }
    const quiet = this.#clock() - this.#lastByte;
    if (quiet >= this.#idleMs) {
      this.#halt("timeout", `timeout: no data for ${seconds(this.#idleMs)}${this.#tHeaders === null ? " (no response headers)" : ""}`);
      return null;
    }
    let next = Math.min(this.#idleMs - quiet, this.#totalAt - now);
    if (this.#doneAt !== null) next = Math.min(next, this.#doneAt - now);
    return next;
  }

  #stopBody(): void {
    if (this.#stopStream !== null) this.#stopStream();
    else this.#sink.stop();
  }

  /** {@link FeedOwner}: the head of a body the sink took (its time is the head's arrival). */
  headArrived(): void {
    this.#tHeaders = this.#lastByte = this.#clock();
    this.#req.text = null;
  }

  /** {@link FeedOwner}: one body chunk, stamped as it is handed over; false when reading should stop (the parser overflowed). */
  chunk(bytes: Uint8Array): boolean {
    const now = this.#clock();
    this.#lastByte = now;
    const st = this.st;
    st.tRead = now;
    this.#parser.pushBytes(bytes);
    // The parser dropped its buffer; stop the body so memory stays bounded.
    if (this.#parser.overflowed !== null) return false;
    if (st.nSseEvents === 0 && this.#head.length < MAX_HEAD_TEXT) {
      // No event yet (an error body or a whole JSON answer on a 2xx?): keep its start.
      this.#headDecoder ??= new TextDecoder();
      this.#head += this.#headDecoder.decode(bytes, { stream: true });
    } else if (st.sawDone && this.#doneAt === null) {
      this.#doneAt = performance.now() + Math.min(this.#idleMs, DONE_GRACE_MS);
      deadlines.add(this, Math.min(this.#idleMs, DONE_GRACE_MS));
    }
    return true;
  }

  /** Server text with the API key scrubbed (an echoing server must not leak it). */
  #scrub(text: string): string {
    return scrubbed(text, this.#secret);
  }

  /**
   * The request as the fetch takes it, made here so that the serialized body and the init are held
   * only until the fetch has them, not for the whole response.
   */
  #send(ep: Endpoint, api: Api, payload: string): Promise<Response> {
    const opts = this.#opts;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
      // No compression: a compressing server or proxy buffers events, which distorts every timing.
      "accept-encoding": "identity",
      ...opts.headers,
    };
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    if (FAULT_HEADER !== null) headers[FAULT_HEADER[0]] = FAULT_HEADER[1];
    // redirect "manual": a followed 301/302 would turn the POST into a GET; report it instead.
    // decompress false (Bun; others ignore it): Bun's own decoder prints a line on stderr for a
    // corrupt body, and its failure would read as a network error. decodedBody decodes instead.
    const init = {
      method: "POST",
      headers,
      body: payload,
      signal: this.#ac.signal,
      redirect: "manual",
      decompress: false,
      onSend: this.#onSend,
      bodySink: this.#sink,
      // A resend goes on a connection of its own: the pooled ones may be as stale as the first.
      newConnection: this.#first !== null,
    };
    const fetch = opts.fetch ?? defaultFetch(), url = apiUrl(ep, api);
    // t_send: just before the fetch call, after the body and headers are built (a fetch that
    // reports the hand-over to its connection takes it again then).
    this.#tSend = this.#lastByte = this.#clock();
    return fetch(url, init as RequestInit);
  }

  /**
   * Sends the request, reads the response and returns the result (failures are results too). Until
   * the head this is an async call; a body the sink took is then read by callbacks
   * ({@link bodyEnded}), so no suspended call waits for it (issue 21: a frame, a generator and
   * promises a stream, for the whole response).
   */
  async run(ep: Endpoint, api: Api): Promise<RequestResult> {
    const opts = this.#opts, st = this.st, sink = this.#sink;
    this.#api = api;
    if (opts.signal?.aborted) {
      this.#halt("aborted", "aborted before the request was sent");
    } else {
      if (opts.signal) watchAbort(opts.signal, this);
      deadlines.add(this, Math.min(this.#idleMs, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    }
    try {
      if (this.#stop !== null) throw this.#stop;
      const res = await this.#send(ep, api, this.#req.text as string);
      if (!sink.taken) {
        this.#tHeaders = this.#lastByte = this.#clock();
        this.#req.text = null;
      }
      const status = this.#status = res.status;
      try {
        opts.onHeaders?.(this.#tHeaders as number);
      } catch {
        // a display hook must not turn into a failed measurement
      }
      if (status < 200 || status > 299) {
        let text: string;
        try {
          text = this.#scrub(await readLimited(res, MAX_ERROR_BODY_BYTES, () => (this.#lastByte = this.#clock())));
        } catch (e) {
          text = `(error body unreadable: ${networkMessage(e)})`;
        }
        const info = parseErrorBody(text, status);
        st.fail(
          "http",
          formatHttpError(status, info) + retryAfterNote(res.headers.get("retry-after")) +
            redirectNote(status, res.headers.get("location")) + notFoundNote(status, apiUrl(ep, api), info.message),
        );
      } else if (res.body === null && !sink.taken) {
        st.fail("protocol", `HTTP ${status} with no body`);
      } else {
        this.#streamed = true;
        // Kept only to say what a body that is not an event stream was: an event stream's content type
        // is a slice of the head's one string, and keeping it would keep the whole head (issue 21).
        const ct = res.headers.get("content-type") ?? "";
        this.#contentType = EVENT_STREAM.test(ct) ? "text/event-stream" : ct;
        if (sink.taken) {
          // The body ends in bodyEnded, which settles this promise: this call returns now.
          return new Promise<RequestResult>((resolve) => {
            this.#resolve = resolve;
            sink.watch();
          });
        }
        try {
          await readStream(res.body as ReadableStream<Uint8Array>, res.headers, (b) => this.chunk(b), (f) => (this.#stopStream = f));
          this.#parser.end();
        } finally {
          this.#doneAt = null;
        }
        if (st.failKind === null) classifyEnd(st, this.#contentType, this.#scrub(this.#head));
      }
    } catch (e) {
      this.#failed(e);
    }
    return this.#end(ep);
  }

  /** {@link FeedOwner}: the body the sink took ended (null) or failed; the attempt ends with it. */
  bodyEnded(err: unknown): void {
    this.#doneAt = null;
    const st = this.st;
    try {
      if (err !== null) throw err;
      this.#parser.end();
      if (st.failKind === null) classifyEnd(st, this.#contentType, this.#scrub(this.#head));
    } catch (e) {
      this.#failed(e);
    }
    // No retry after a head: #end settles with this attempt's own result. This runs in the
    // transport's turn: what throws goes to the caller's promise, not into the connection.
    const resolve = this.#resolve;
    this.#resolve = null;
    let out: RequestResult | Promise<RequestResult>;
    try {
      out = this.#end(null);
    } catch (e) {
      out = Promise.reject(e);
    }
    resolve?.(out);
  }

  /**
   * How a request that threw went: a limit or the abort, a decode error, a response that could not
   * be parsed (`protocol`: the server answered, wrongly), a lost connection (`network`).
   */
  #failed(e: unknown): void {
    const st = this.st, s = this.#stop;
    const malformed = s === null ? malformedResponseMessage(e) : null;
    if (st.sawDone && (s === null || s.kind === "timeout")) {
      // [DONE] came, then the server kept the stream open or dropped the connection: the
      // response was complete, so this is not a failure.
      if (st.failKind === null) classifyEnd(st, this.#contentType, "");
    } else if (s !== null) st.fail(s.kind, s.message);
    else if (e instanceof BodyDecodeError) st.fail("protocol", `${e.message}: ${networkMessage(e.inner)}`);
    else if (malformed !== null) st.fail("protocol", malformed);
    else if (this.#tHeaders !== null) st.fail("network", `connection lost mid-body: ${networkMessage(e)}`);
    else st.fail("network", beforeResponseMessage(e));
  }

  /**
   * The attempt is over: its limits and the abort listener dropped, its result built. A first
   * attempt that met a stale pooled connection (no head: `ep` given) sends the request once more,
   * on a new connection, and resolves with that attempt's result, timed from this one's send.
   */
  #end(ep: Endpoint | null): RequestResult | Promise<RequestResult> {
    const opts = this.#opts;
    deadlines.remove(this);
    if (opts.signal) unwatchAbort(opts.signal, this);
    const tEnd = this.#clock();
    const tSend = this.#first?.tSend ?? this.#tSend;
    const result = buildResult(this.st, this.#api, opts, { status: this.#status, tSend, tHeaders: this.#tHeaders, tEnd, streamed: this.#streamed }, this.#secret);
    if (this.#first !== null) result.connectionRetries = 1;
    // req.text is null once a head came: such a request is never sent again.
    if (ep === null || this.#first !== null || !staleConnection(result, this.#reused) || opts.signal?.aborted || this.#req.text === null) return result;
    return new Attempt(this.#req, opts, { tSend: this.#tSend, totalAt: this.#totalAt }).run(ep, this.#api);
  }
}
