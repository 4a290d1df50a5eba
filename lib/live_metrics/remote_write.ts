/**
 * {@link RemoteWriter}: pushes registry snapshots to a Prometheus remote write 1.0 receiver
 * (Prometheus `--web.enable-remote-write-receiver`, Mimir, Thanos receive, VictoriaMetrics…)
 * without ever getting in the measurement's way:
 * - {@link RemoteWriter.push} returns at once and never throws; encoding and sending happen on
 *   the writer's own async loop, with at most one push in flight and at most one queued (a newer
 *   snapshot replaces a queued one: counters and histograms are cumulative, so the newest carries
 *   everything that matters; the replaced samples are counted as not delivered);
 * - a failed attempt (network error, no answer within `requestTimeoutMs`, HTTP 5xx or 429) is
 *   retried with exponential backoff, bounded by `maxAttempts` and by `pushDeadlineMs` for the
 *   push as a whole; any other 4xx is final (the remote write spec forbids retrying it);
 * - every sample is counted once: delivered, failed, or replaced ({@link RemoteWriteStats});
 * - `lastError` is one scrubbed line: header values (auth) and URL credentials never appear in it.
 * @module
 */
import { Buffer } from "node:buffer";
import { redactUrl } from "../evidence/redact.ts";
import { scrubText } from "../evidence/scrub.ts";
import type { Snapshot } from "./series.ts";
import { encodeRemoteWriteBody, REMOTE_WRITE_HEADERS } from "./write_request.ts";

export { encodeRemoteWriteBody, encodeWriteRequest, REMOTE_WRITE_HEADERS, snappyCompress, snappyUncompress } from "./write_request.ts";

/** The fetch a writer uses (the runtime's global fetch unless a test injects one). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Options of a {@link RemoteWriter}. */
export interface RemoteWriterOptions {
  /** The receiver, e.g. `http://127.0.0.1:9090/api/v1/write`; `user:pass@` in it becomes Basic auth. */
  url: string;
  /** Extra request headers (`Authorization`, `X-Scope-OrgID`…); their values are treated as secrets. */
  headers?: Readonly<Record<string, string>>;
  /** Attempts per push, first included (default 5). */
  maxAttempts?: number;
  /** Wait before the first retry, ms; doubled each retry (default 200). */
  initialBackoffMs?: number;
  /** Longest wait between attempts, ms (default 5,000; also caps a `Retry-After`). */
  maxBackoffMs?: number;
  /** One attempt's limit, ms: no complete answer by then is a failed attempt (default 10,000). */
  requestTimeoutMs?: number;
  /** All attempts of one push together, backoff included, ms (default 30,000). */
  pushDeadlineMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: FetchLike;
}

/** What a writer has done so far; each sample pushed is in exactly one of the three sample counts. */
export interface RemoteWriteStats {
  /** Samples the receiver accepted (a 2xx answer). */
  samplesDelivered: number;
  /** Samples of pushes that gave up (attempts or deadline exhausted, a 4xx, the close deadline, pushed after close). */
  samplesFailed: number;
  /** Samples of queued snapshots replaced by a newer one before they were sent. */
  samplesReplaced: number;
  /** `samplesFailed + samplesReplaced`. */
  samplesNotDelivered: number;
  /** Pushes accepted. */
  pushesDelivered: number;
  /** Pushes that gave up. */
  pushesFailed: number;
  /** Snapshots replaced while queued. */
  pushesReplaced: number;
  /** HTTP attempts made (retries included). */
  attempts: number;
  /** Attempts after a push's first. */
  retries: number;
  /** The last failed attempt or push as one scrubbed line (null before any); kept after later successes. */
  lastError: string | null;
  /** When {@link lastError} happened, ms since the epoch (null before any). */
  lastErrorAtMs: number | null;
  /** When the last push was accepted, ms since the epoch (null before any). */
  lastDeliveredAtMs: number | null;
  /** Whether a push is being sent now. */
  inFlight: boolean;
  /** Whether a snapshot waits for the one in flight. */
  queued: boolean;
  /** Whether {@link RemoteWriter.close} was called. */
  closed: boolean;
}

/** Options of {@link RemoteWriter.close}. */
export interface RemoteWriterCloseOptions {
  /** How long close waits for the push in flight and the final push, ms (default 5,000). */
  deadlineMs?: number;
}

/** The longest `lastError` line, characters. */
export const MAX_NOTE_LENGTH = 300;

/** Shortest header value scrubbed as text from notes (shorter ones would mangle ordinary words and numbers). */
const MIN_SCRUB_LENGTH = 4;

/** The outcome of one HTTP attempt. */
type Attempt = { ok: true } | { ok: false; retry: boolean; note: string; retryAfterMs?: number };

/** Waits `ms`, or less if `signal` aborts (never rejects). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal.aborted) return done();
    const finish = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", finish);
      done();
    };
    const t = setTimeout(finish, ms);
    signal.addEventListener("abort", finish);
  });
}

/** A network error as a short phrase: its message and its cause's code (`ECONNREFUSED`). */
function errorPhrase(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause as { code?: string; message?: string } | undefined;
  const code = (e as { code?: string }).code ?? cause?.code;
  const extra = code ?? (cause?.message && cause.message !== e.message ? cause.message : "");
  return extra ? `${e.message} (${extra})` : e.message;
}

/** Seconds of a `Retry-After: <seconds>` header, as ms (a date form is ignored). */
function retryAfterMs(res: Response): number | undefined {
  const v = res.headers.get("retry-after");
  if (!v || !/^\s*\d+(\.\d+)?\s*$/.test(v)) return undefined;
  return Number(v) * 1000;
}

/**
 * Pushes snapshots to a remote write receiver in the background; see the module doc.
 * @example
 * const rw = new RemoteWriter({ url: "http://127.0.0.1:9090/api/v1/write", headers: { Authorization: `Bearer ${t}` } });
 * setInterval(() => rw.push(registry.snapshot()), 5000); // never throws, never blocks
 * const stats = await rw.close(registry.snapshot()); // one final push, bounded by the deadline
 */
export class RemoteWriter {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #secrets: string[];
  readonly #fetch: FetchLike;
  readonly #maxAttempts: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #requestTimeoutMs: number;
  readonly #pushDeadlineMs: number;
  readonly #closeAbort = new AbortController();
  #closeDeadline = Infinity;
  #queued: Snapshot | null = null;
  #running: Promise<void> | null = null;
  #closed = false;
  readonly #s = {
    samplesDelivered: 0,
    samplesFailed: 0,
    samplesReplaced: 0,
    pushesDelivered: 0,
    pushesFailed: 0,
    pushesReplaced: 0,
    attempts: 0,
    retries: 0,
    lastError: null as string | null,
    lastErrorAtMs: null as number | null,
    lastDeliveredAtMs: null as number | null,
  };

  /**
   * Checks the options (throws a TypeError for a URL that is not http(s) or for bad numbers, with
   * credentials redacted); sends nothing until the first push.
   */
  constructor(opts: RemoteWriterOptions) {
    let u: URL;
    try {
      u = new URL(opts.url);
    } catch {
      throw new TypeError(`remote write: not a URL: ${redactUrl(String(opts.url))}`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new TypeError(`remote write: not an http(s) URL: ${redactUrl(opts.url)}`);
    const secrets: string[] = [];
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      headers[k] = v;
      secrets.push(v);
      const token = v.match(/^\s*[A-Za-z][A-Za-z0-9_-]*\s+(\S.*)$/)?.[1]; // "Bearer X", "Basic X"
      if (token) {
        secrets.push(token);
        if (/^\s*basic\s/i.test(v)) secrets.push(...Buffer.from(token, "base64").toString("utf8").split(":"), Buffer.from(token, "base64").toString("utf8"));
      }
    }
    if (u.username || u.password) {
      const user = decodeURIComponent(u.username);
      const pass = decodeURIComponent(u.password);
      const basic = Buffer.from(`${user}:${pass}`, "utf8").toString("base64");
      if (!Object.keys(headers).some((k) => k.toLowerCase() === "authorization")) headers["Authorization"] = `Basic ${basic}`;
      secrets.push(user, pass, u.username, u.password, basic, `${user}:${pass}`);
      u.username = "";
      u.password = "";
    }
    Object.assign(headers, REMOTE_WRITE_HEADERS);
    this.#url = u.href;
    this.#headers = headers;
    this.#secrets = [...new Set(secrets.filter((s) => s.length >= MIN_SCRUB_LENGTH))].sort((a, b) => b.length - a.length);
    this.#fetch = opts.fetch ?? ((url, init) => fetch(url, init));
    const num = (v: number | undefined, d: number, name: string, min: number) => {
      const x = v ?? d;
      if (!Number.isFinite(x) || x < min) throw new TypeError(`remote write: ${name} must be a number ≥ ${min}`);
      return x;
    };
    this.#maxAttempts = Math.floor(num(opts.maxAttempts, 5, "maxAttempts", 1));
    this.#initialBackoffMs = num(opts.initialBackoffMs, 200, "initialBackoffMs", 0);
    this.#maxBackoffMs = num(opts.maxBackoffMs, 5000, "maxBackoffMs", 0);
    this.#requestTimeoutMs = num(opts.requestTimeoutMs, 10_000, "requestTimeoutMs", 1);
    this.#pushDeadlineMs = num(opts.pushDeadlineMs, 30_000, "pushDeadlineMs", 1);
  }

  /**
   * Queues a snapshot for sending and returns at once; never throws. A snapshot already queued
   * (not yet in flight) is replaced and its samples counted in `samplesReplaced`. After
   * {@link close} the samples are counted as failed. An empty snapshot is ignored.
   */
  push(snapshot: Snapshot): void {
    try {
      const n = snapshot.series.length;
      if (n === 0) return;
      if (this.#closed) {
        this.#fail(n, "pushed after close");
        return;
      }
      if (this.#queued) {
        this.#s.samplesReplaced += this.#queued.series.length;
        this.#s.pushesReplaced++;
      }
      this.#queued = snapshot;
      this.#kick();
    } catch (e) {
      this.#note(`push: ${errorPhrase(e)}`);
    }
  }

  /** A copy of the counters now. */
  stats(): RemoteWriteStats {
    const s = this.#s;
    return {
      ...s,
      samplesNotDelivered: s.samplesFailed + s.samplesReplaced,
      inFlight: this.#running !== null,
      queued: this.#queued !== null,
      closed: this.#closed,
    };
  }

  /** Resolves when nothing is in flight or queued (each push is bounded by `pushDeadlineMs`). Never rejects. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /**
   * Stops accepting pushes, makes `final` (if given; else the queued snapshot, if any) the last
   * push, and waits for it and for the push in flight, at most `deadlineMs`: at the deadline the
   * attempt in flight is aborted and what was not delivered is counted as failed. Never rejects;
   * resolves with the final counters. A second call just waits for the first.
   */
  async close(final?: Snapshot, opts: RemoteWriterCloseOptions = {}): Promise<RemoteWriteStats> {
    if (!this.#closed) {
      if (final) this.push(final);
      this.#closed = true;
      const deadlineMs = Number.isFinite(opts.deadlineMs) ? Math.max(0, opts.deadlineMs as number) : 5000;
      this.#closeDeadline = Date.now() + deadlineMs;
      const t = setTimeout(() => this.#closeAbort.abort(), deadlineMs);
      try {
        await this.idle();
      } finally {
        clearTimeout(t);
      }
    } else {
      await this.idle();
    }
    return this.stats();
  }

  #kick(): void {
    if (this.#running) return;
    this.#running = this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queued) {
        const s = this.#queued;
        this.#queued = null;
        await this.#send(s);
      }
    } catch (e) {
      this.#note(`internal: ${errorPhrase(e)}`);
    } finally {
      this.#running = null;
    }
  }

  /** Sends one snapshot with retries; counts its samples as delivered or failed. */
  async #send(snapshot: Snapshot): Promise<void> {
    const n = snapshot.series.length;
    const started = Date.now();
    const deadline = () => Math.min(started + this.#pushDeadlineMs, this.#closeDeadline);
    let body: Uint8Array;
    try {
      body = encodeRemoteWriteBody(snapshot);
    } catch (e) {
      this.#fail(n, `encoding failed: ${errorPhrase(e)}`);
      return;
    }
    let last = "no attempt made";
    let attempt = 0;
    while (attempt < this.#maxAttempts) {
      const left = deadline() - Date.now();
      if (left <= 0 || this.#closeAbort.signal.aborted) break;
      attempt++;
      this.#s.attempts++;
      if (attempt > 1) this.#s.retries++;
      const r = await this.#attempt(body, Math.min(this.#requestTimeoutMs, left));
      if (r.ok) {
        this.#s.samplesDelivered += n;
        this.#s.pushesDelivered++;
        this.#s.lastDeliveredAtMs = Date.now();
        return;
      }
      last = r.note;
      this.#note(r.note);
      if (!r.retry || attempt >= this.#maxAttempts) break;
      const backoff = Math.min(this.#maxBackoffMs, r.retryAfterMs ?? this.#initialBackoffMs * 2 ** (attempt - 1));
      if (Date.now() + backoff >= deadline()) break;
      await sleep(backoff, this.#closeAbort.signal);
    }
    const why = this.#closeAbort.signal.aborted ? "close deadline passed" : Date.now() >= deadline() ? "push deadline passed" : "";
    this.#fail(n, `${last}; gave up after ${attempt} attempt(s) in ${((Date.now() - started) / 1000).toFixed(1)} s${why ? ` (${why})` : ""}`);
  }

  /** One POST, bounded by `timeoutMs` and by the close deadline. */
  async #attempt(body: Uint8Array, timeoutMs: number): Promise<Attempt> {
    const ac = new AbortController();
    let timedOut = false;
    const t = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, timeoutMs);
    const onClose = () => ac.abort();
    this.#closeAbort.signal.addEventListener("abort", onClose);
    try {
      const res = await this.#fetch(this.#url, { method: "POST", headers: this.#headers, body: body as BodyInit, signal: ac.signal });
      const text = await res.text().catch(() => "");
      if (res.status >= 200 && res.status < 300) return { ok: true };
      const retry = res.status >= 500 || res.status === 429;
      // Scrubbed before it is cut: a cut secret would no longer match the scrubber.
      const snippet = this.#clean(text).slice(0, 160);
      return { ok: false, retry, note: `HTTP ${res.status}${snippet ? `: ${snippet}` : ""}`, retryAfterMs: retry ? retryAfterMs(res) : undefined };
    } catch (e) {
      if (timedOut) return { ok: false, retry: true, note: `no answer within ${timeoutMs} ms` };
      if (this.#closeAbort.signal.aborted) return { ok: false, retry: false, note: "aborted at the close deadline" };
      return { ok: false, retry: true, note: errorPhrase(e) };
    } finally {
      clearTimeout(t);
      this.#closeAbort.signal.removeEventListener("abort", onClose);
    }
  }

  #fail(samples: number, note: string): void {
    this.#s.samplesFailed += samples;
    this.#s.pushesFailed++;
    this.#note(note);
  }

  #note(note: string): void {
    this.#s.lastError = this.scrub(note);
    this.#s.lastErrorAtMs = Date.now();
  }

  /**
   * A note as it may be kept or printed: header values (and their tokens, Basic credentials) and
   * URL credentials become `***`, then the project's `scrubText` rules; one line, at most
   * {@link MAX_NOTE_LENGTH} characters.
   */
  scrub(note: string): string {
    const out = this.#clean(note);
    return out.length > MAX_NOTE_LENGTH ? `${out.slice(0, MAX_NOTE_LENGTH - 1)}…` : out;
  }

  /** Text with header values, URL credentials and the `scrubText` rules applied, on one line, uncut. */
  #clean(text: string): string {
    let out = text;
    for (const s of this.#secrets) if (out.includes(s)) out = out.split(s).join("***");
    return scrubText(out).replace(/\s+/g, " ").trim();
  }
}
