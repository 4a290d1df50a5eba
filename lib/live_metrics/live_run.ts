/**
 * A run's live metrics: ik's series ({@link IkSeries}) served at `/metrics` on `--metrics-listen`
 * (127.0.0.1 unless a host is given) while the run goes, and pushed to `--prometheus-remote-write`
 * every `--push-interval-s` and once at the end. Neither slows the measurement: the server answers
 * from the registry, a push is asynchronous and never throws, and a push that fails is retried,
 * counted and reported in the record (`data.live_metrics`), never an error. The server stops when
 * the run ends (after `--metrics-linger-s`, so a last scrape sees the final counts).
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { IkSeries, type RunLabels } from "./ik_series.ts";
import { PROM_TEXT_CONTENT_TYPE } from "./registry.ts";
import type { RemoteWriter, RemoteWriteStats } from "./remote_write.ts";

/** What the flags ask for. */
export interface LiveOptions {
  /** `--metrics-listen HOST:PORT` (port 0: any free one), or null. */
  listen: { hostname: string; port: number } | null;
  /** `--prometheus-remote-write URL` and its `--prometheus-remote-write-header K=V` headers, or null. */
  remoteWrite: { url: string; headers: Record<string, string> } | null;
  /** Seconds between pushes (default 5). */
  pushIntervalS: number;
  /** Seconds the server keeps answering after the run (default 0). */
  lingerS: number;
  /** The run's interrupt: it ends the linger at once, so the record is written inside the interrupt's grace. */
  signal?: AbortSignal;
}

/** A server the runtime shim starts (its `serve`). */
export type ServeFn = (handler: (req: Request) => Response | Promise<Response>, opts: { hostname: string; port: number }) => Promise<{ port: number; hostname: string; close(): Promise<void> }>;

/** What the record keeps of a run's live metrics. */
export interface LiveReport {
  listen: string | null;
  remote_write: (Omit<RemoteWriteStats, "inFlight" | "queued" | "closed" | "lastErrorAtMs" | "lastDeliveredAtMs"> & { url: string; push_interval_s: number }) | null;
  series: number;
}

/** Parses `HOST:PORT` (`:PORT` or `PORT` alone bind 127.0.0.1), or throws a message for the usage error. */
export function parseListen(v: string): { hostname: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:?(\d{1,5})$/.exec(v.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) throw new Error(`'${v}' is not HOST:PORT (e.g. 127.0.0.1:9464, or :9464 for loopback)`);
  return { hostname: m[1] ?? (m[2] || "127.0.0.1"), port };
}

/** A running run's live metrics. */
export class LiveRun {
  readonly series: IkSeries;
  #served: { port: number; hostname: string; close(): Promise<void> } | null = null;
  #writer: RemoteWriter | null = null;
  #timers: ReturnType<typeof setInterval>[] = [];
  #lastTick = performance.now();
  #finished: LiveReport | null = null;

  private constructor(readonly opts: LiveOptions, labels: RunLabels, mode: string, readonly redactedUrl: string | null) {
    this.series = new IkSeries(labels, mode);
  }

  /**
   * Starts serving and pushing, or returns null when neither is asked for.
   * @param redact how the remote-write URL is written into the record (its credentials removed)
   */
  static async start(opts: LiveOptions, labels: RunLabels, mode: string, serve: ServeFn, redact: (url: string) => string): Promise<LiveRun | null> {
    if (!opts.listen && !opts.remoteWrite) return null;
    const run = new LiveRun(opts, labels, mode, opts.remoteWrite ? redact(opts.remoteWrite.url) : null);
    if (opts.listen) {
      const at = opts.listen;
      run.#served = await serve((req) => {
        const path = new URL(req.url).pathname;
        if (req.method === "GET" && (path === "/metrics" || path === "/")) {
          return new Response(run.series.registry.render(), { headers: { "content-type": PROM_TEXT_CONTENT_TYPE } });
        }
        return new Response("not found: ik serves /metrics\n", { status: 404 });
      }, at).catch((e) => {
        // A port already taken, an address not on this host: the flag's value, not a bug.
        const code = (e as { code?: unknown }).code;
        const why = typeof code === "string" ? code : (e as Error).message;
        throw usageError("--metrics-listen", `cannot listen on ${at.hostname.includes(":") ? `[${at.hostname}]` : at.hostname}:${at.port} (${why})`, "choose a free port (0 picks one), or an address of this host");
      });
    }
    if (opts.remoteWrite) {
      // Loaded only when asked for: its encoder (protobuf, snappy) stays out of every other run's memory.
      const { RemoteWriter } = await import("./remote_write.ts");
      run.#writer = new RemoteWriter({ url: opts.remoteWrite.url, headers: opts.remoteWrite.headers });
      const push = setInterval(() => run.#writer?.push(run.series.registry.snapshot()), Math.max(0.1, opts.pushIntervalS) * 1000);
      (push as unknown as { unref?: () => void }).unref?.();
      run.#timers.push(push);
    }
    // The event loop's lag: how late a 100 ms tick fires.
    const lag = setInterval(() => {
      const now = performance.now();
      run.series.loopLag(Math.max(0, now - run.#lastTick - 100));
      run.#lastTick = now;
    }, 100);
    (lag as unknown as { unref?: () => void }).unref?.();
    run.#timers.push(lag);
    return run;
  }

  /** Where it serves, `http://host:port/metrics`, or null. */
  get url(): string | null {
    return this.#served ? `http://${this.#served.hostname.includes(":") ? `[${this.#served.hostname}]` : this.#served.hostname}:${this.#served.port}/metrics` : null;
  }

  /** Ends the run's live metrics: the last push (bounded), the linger, the server closed; what the record keeps. */
  async finish(): Promise<LiveReport> {
    if (this.#finished) return this.#finished;
    for (const t of this.#timers) clearInterval(t);
    let rw: LiveReport["remote_write"] = null;
    if (this.#writer) {
      await this.#writer.close({ ...this.series.registry.snapshot(), last: true }, { deadlineMs: 5000 });
      const { inFlight: _i, queued: _q, closed: _c, lastErrorAtMs: _e, lastDeliveredAtMs: _d, ...st } = this.#writer.stats();
      rw = { ...st, url: this.redactedUrl ?? "", push_interval_s: this.opts.pushIntervalS };
    }
    if (this.#served) {
      const signal = this.opts.signal;
      if (this.opts.lingerS > 0 && !signal?.aborted) {
        await new Promise<void>((ok) => {
          const t = setTimeout(done, this.opts.lingerS * 1000);
          function done() {
            clearTimeout(t);
            signal?.removeEventListener("abort", done);
            ok();
          }
          signal?.addEventListener("abort", done, { once: true });
        });
      }
      await this.#served.close().catch(() => {});
    }
    this.#finished = { listen: this.url, remote_write: rw, series: this.series.registry.seriesCount() };
    return this.#finished;
  }
}

/** The record's limitation for a run whose pushes did not all arrive, or null. */
export function liveLimitation(r: LiveReport | null): string | null {
  const rw = r?.remote_write;
  if (!rw || rw.samplesNotDelivered === 0) return null;
  return `remote write to ${rw.url}: ${rw.samplesNotDelivered} sample(s) were not delivered (${rw.samplesDelivered} were)${rw.lastError ? `; last error: ${rw.lastError}` : ""}: the measurement itself is whole`;
}
