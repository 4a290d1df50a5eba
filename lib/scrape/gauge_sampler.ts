/**
 * The server's own view during a load level: polls the engine's metrics about once a second
 * (first sample at once) and keeps running, waiting, KV-cache usage and preemptions as a time
 * series in typed arrays.
 *
 * Guarantees: never two requests at once (a tick that finds one in flight is skipped and counted);
 * bounded in samples (`maxSamples`) and time (`maxDurationMs`); polling ends by itself on a
 * "not available" answer (404/501/JSON…: asking again will not help); `stop()` clears its timer and
 * aborts the request in flight, so nothing of it keeps the event loop alive. Never throws except
 * on a second `start()`. A server without metrics is "not available" with a note, never a failure.
 * @module
 */
import type { Endpoint } from "../client/endpoint.ts";
import type { EngineKind } from "../engines/profiles.ts";
import { GAUGE_NAMES, type GaugeName, type GaugeSource, metricsSpec } from "./engine_gauges.ts";
import { scrapeOnce, type ScrapeOptions, type ScrapeResult } from "./scrape_once.ts";
import { columnDelta, SeriesCounter } from "./series_counter.ts";

/** A clock and a one-shot timer; inject a fake one in tests. */
export interface SamplerTimers {
  /** Current time, ms (any origin; default performance.now). */
  now(): number;
  /** Runs fn once after ms; returns a handle for clearTimeout. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a pending setTimeout. */
  clearTimeout(handle: unknown): void;
}

/** Options for {@link GaugeSampler.start}. */
export interface SamplerOptions {
  /** The fetch to use; default the global fetch. */
  fetch?: ScrapeOptions["fetch"];
  /** Bearer token for the metrics endpoint. */
  apiKey?: string;
  /** Metrics path override (a manifest's `metrics_path`). */
  path?: string;
  /** Limit of one scrape, ms (default 1500). */
  timeoutMs?: number;
  /** Aborting it ends polling (the summary is still taken with stop()). */
  signal?: AbortSignal;
  /** Time between samples, ms (default {@link SAMPLER_INTERVAL_MS}; at least 10). */
  intervalMs?: number;
  /** Most samples kept; polling ends when reached (default {@link SAMPLER_MAX_SAMPLES}). */
  maxSamples?: number;
  /** Polling ends this long after start, ms (default {@link SAMPLER_MAX_DURATION_MS}). */
  maxDurationMs?: number;
  /** Clock and timer (default performance.now and the global setTimeout). */
  timers?: SamplerTimers;
  /** Told each sample as it is kept (the live metrics' server gauges); unexported gauges are NaN. */
  onSample?: (values: Readonly<Record<string, number>>) => void;
}

/** The samples as plain arrays (t in whole ms since start, values rounded to 6 decimals, null = not exported). */
export interface GaugeSeries {
  /** Ms since start() when each answer was complete. */
  t: number[];
  /** Requests running (summed over label sets). */
  running: (number | null)[];
  /** Requests waiting (summed over label sets). */
  waiting: (number | null)[];
  /** KV-cache usage, 0–1 (mean over label sets). */
  kv_cache_usage: (number | null)[];
  /** The preemption counter (summed over label sets). */
  preemptions_total: (number | null)[];
}

/** Why polling ended. */
export type SamplerEnd = "stop" | "signal" | "not_available" | "max_samples" | "max_duration";

/** What {@link GaugeSampler.stop} returns. */
export interface GaugeSummary {
  /** The samples. */
  series: GaugeSeries;
  /** Mean of each gauge over the samples that have it; null if none. */
  means: Record<GaugeName, number | null>;
  /** Largest value of each gauge; null if none. */
  max: Record<GaugeName, number | null>;
  /** Preemptions during sampling (counter increments, resets handled); null with fewer than 2 values. */
  preemptions_delta: number | null;
  /** Samples kept (scrapes that answered with Prometheus text). */
  n: number;
  /** Scrapes started. */
  attempts: number;
  /** Scrapes that failed. */
  failed: number;
  /** Ticks skipped because a scrape was still in flight. */
  skipped: number;
  /** True when at least one sample had at least one gauge. */
  available: boolean;
  /** Why not available, or what to know about the series (failures, caps, gauges not exported); null when nothing. */
  note: string | null;
  /** Gauges no sample had. */
  missing: GaugeName[];
  /** For each gauge: the metric it came from in the last sample, and how label sets were combined. */
  sources: Partial<Record<GaugeName, GaugeSource>>;
  /** The metrics path polled. */
  path: string;
  /** The clock at start(), ms (to align `series.t` with other timings on the same clock). */
  started_at_ms: number;
  /** Why polling ended. */
  ended: SamplerEnd;
}

/** Default time between samples, ms. */
export const SAMPLER_INTERVAL_MS = 1000;
/** Default cap on samples. */
export const SAMPLER_MAX_SAMPLES = 100_000;
/** Default cap on sampling time, ms (24 h). */
export const SAMPLER_MAX_DURATION_MS = 24 * 3600 * 1000;

const DEFAULT_TIMERS: SamplerTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

/**
 * Polls one engine's metrics in the background.
 *
 * @example
 * const s = new GaugeSampler();
 * s.start(ep, "vllm", { apiKey });
 * // … run the load level …
 * const view = s.stop(); // view.means.running, view.series, view.available, view.note
 */
export class GaugeSampler {
  #started = false;
  #stopped = false;
  #polling = false;
  #ended: SamplerEnd | null = null;
  #summary: GaugeSummary | null = null;
  #timers: SamplerTimers = DEFAULT_TIMERS;
  #ac = new AbortController();
  #handle: unknown = null;
  #inFlight: Promise<void> | null = null;
  #detach: () => void = () => {};
  #scrape: () => Promise<ScrapeResult> = () => Promise.reject(new Error("not started"));
  #t0 = 0;
  #k = 0;
  #interval = SAMPLER_INTERVAL_MS;
  #maxSamples = SAMPLER_MAX_SAMPLES;
  #maxDuration = SAMPLER_MAX_DURATION_MS;
  #kind: EngineKind = "generic";
  #path = "";
  #len = 0;
  #t = new Float64Array(0);
  #g: Record<GaugeName, Float64Array> = {
    running: new Float64Array(0),
    waiting: new Float64Array(0),
    kv_cache_usage: new Float64Array(0),
    preemptions_total: new Float64Array(0),
  };
  #attempts = 0;
  #failed = 0;
  #skipped = 0;
  #lastError: string | null = null;
  #permanentError: string | null = null;
  #sources: Partial<Record<GaugeName, GaugeSource>> = {};
  #onSample: ((values: Readonly<Record<string, number>>) => void) | null = null;

  /**
   * Starts polling `kind`'s metrics on `ep`; the first scrape goes out at once.
   * @throws Error when called a second time on the same sampler
   */
  start(ep: Endpoint, kind: EngineKind, opts: SamplerOptions = {}): void {
    if (this.#started) throw new Error("GaugeSampler.start: a sampler is started once");
    this.#started = true;
    this.#polling = true;
    this.#timers = opts.timers ?? DEFAULT_TIMERS;
    this.#onSample = opts.onSample ?? null;
    this.#kind = kind;
    this.#path = opts.path ?? metricsSpec(kind).path;
    this.#interval = Math.max(10, opts.intervalMs ?? SAMPLER_INTERVAL_MS);
    this.#maxSamples = Math.max(1, Math.floor(opts.maxSamples ?? SAMPLER_MAX_SAMPLES));
    this.#maxDuration = Math.max(0, opts.maxDurationMs ?? SAMPLER_MAX_DURATION_MS);
    const timers = this.#timers;
    const scrapeOpts: ScrapeOptions = {
      fetch: opts.fetch,
      apiKey: opts.apiKey,
      path: opts.path,
      timeoutMs: opts.timeoutMs,
      signal: this.#ac.signal,
      now: () => timers.now(),
    };
    this.#scrape = () => scrapeOnce(ep, kind, scrapeOpts);
    this.#t0 = timers.now();
    const signal = opts.signal;
    if (signal) {
      const onAbort = () => {
        this.#halt("signal");
        this.#ac.abort();
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.#detach = () => signal.removeEventListener("abort", onAbort);
    }
    this.#tick();
  }

  /** Whether it is still polling (false once stopped, capped, not available or aborted). */
  get polling(): boolean {
    return this.#polling;
  }

  /** Samples kept so far. */
  get size(): number {
    return this.#len;
  }

  /** Resolves once no scrape is in flight (after stop(), the aborted one has settled). */
  settled(): Promise<void> {
    return this.#inFlight ?? Promise.resolve();
  }

  /**
   * Stops polling (clears the timer, aborts a scrape in flight) and returns the summary. A second
   * call returns the same summary; a sampler never started returns an empty one.
   */
  stop(): GaugeSummary {
    if (this.#summary) return this.#summary;
    this.#stopped = true;
    this.#halt("stop");
    this.#ac.abort();
    this.#detach();
    this.#summary = this.#summarize();
    return this.#summary;
  }

  #halt(why: SamplerEnd): void {
    this.#polling = false;
    this.#ended ??= why;
    if (this.#handle !== null) {
      this.#timers.clearTimeout(this.#handle);
      this.#handle = null;
    }
  }

  #tick = (): void => {
    this.#handle = null;
    if (!this.#polling) return;
    const elapsed = this.#timers.now() - this.#t0;
    if (elapsed >= this.#maxDuration) return this.#halt("max_duration");
    if (this.#len >= this.#maxSamples) return this.#halt("max_samples");
    if (this.#inFlight) this.#skipped++;
    else this.#launch();
    if (!this.#polling) return;
    // Ticks stay on the start's grid; a late tick skips the slots it missed.
    this.#k = Math.max(this.#k + 1, Math.floor(elapsed / this.#interval) + 1);
    const delay = Math.max(0, this.#t0 + this.#k * this.#interval - this.#timers.now());
    this.#handle = this.#timers.setTimeout(this.#tick, delay);
  };

  #launch(): void {
    this.#attempts++;
    const run = async () => {
      let r: ScrapeResult | null = null;
      try {
        r = await this.#scrape();
      } catch (e) {
        this.#lastError = `scrape failed: ${e instanceof Error ? e.message : String(e)}`;
      }
      this.#inFlight = null;
      if (r && !this.#stopped) this.#record(r);
    };
    this.#inFlight = run();
  }

  #record(r: ScrapeResult): void {
    if (!r.ok) {
      this.#failed++;
      this.#lastError = r.error ?? "failed";
      if (r.permanent) {
        this.#permanentError ??= this.#lastError;
        this.#halt("not_available");
      }
      return;
    }
    if (this.#len >= this.#maxSamples) return this.#halt("max_samples");
    this.#grow();
    const i = this.#len++;
    this.#t[i] = r.tMs - this.#t0;
    for (const g of GAUGE_NAMES) this.#g[g][i] = r.values[g] ?? NaN;
    if (this.#onSample) {
      const v: Record<string, number> = {};
      for (const g of GAUGE_NAMES) v[g] = r.values[g] ?? NaN;
      this.#onSample(v);
    }
    this.#sources = r.sources;
    if (r.preemptionSeries) this.#preempt.add(r.preemptionSeries);
    if (this.#len >= this.#maxSamples) this.#halt("max_samples");
  }

  /** The preemption counter, series by series (one DP engine's restart is not the sum's). */
  readonly #preempt = new SeriesCounter();

  #grow(): void {
    if (this.#len < this.#t.length) return;
    const cap = Math.min(this.#maxSamples, Math.max(64, this.#t.length * 2));
    const widen = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a.subarray(0, this.#len));
      return b;
    };
    this.#t = widen(this.#t);
    for (const g of GAUGE_NAMES) this.#g[g] = widen(this.#g[g]);
  }

  #summarize(): GaugeSummary {
    const n = this.#len;
    const series: GaugeSeries = {
      t: Array.from(this.#t.subarray(0, n), (v) => Math.round(v)),
      running: [],
      waiting: [],
      kv_cache_usage: [],
      preemptions_total: [],
    };
    const means = {} as Record<GaugeName, number | null>;
    const max = {} as Record<GaugeName, number | null>;
    const missing: GaugeName[] = [];
    let any = false;
    for (const g of GAUGE_NAMES) {
      const col = this.#g[g].subarray(0, n);
      let sum = 0, count = 0, hi = -Infinity;
      for (const v of col) {
        if (Number.isNaN(v)) continue;
        sum += v;
        count++;
        if (v > hi) hi = v;
      }
      series[g] = Array.from(col, (v) => (Number.isNaN(v) ? null : round6(v)));
      means[g] = count > 0 ? round6(sum / count) : null;
      max[g] = count > 0 ? round6(hi) : null;
      if (count === 0) missing.push(g);
      else any = true;
    }
    return {
      series,
      means,
      max,
      preemptions_delta: this.#preempt.scrapes > 0 ? this.#preempt.delta : columnDelta(this.#g.preemptions_total.subarray(0, n)),
      n,
      attempts: this.#attempts,
      failed: this.#failed,
      skipped: this.#skipped,
      available: any,
      note: any ? this.#availableNote(missing) : this.#unavailableNote(n),
      missing,
      sources: this.#sources,
      path: this.#path,
      started_at_ms: this.#t0,
      ended: this.#ended ?? "stop",
    };
  }

  #unavailableNote(n: number): string {
    if (!this.#started) return "not available: the sampler was never started";
    if (this.#permanentError) return this.#permanentError;
    if (n > 0) {
      const hint = this.#kind === "trtllm"
        ? " (TensorRT-LLM exports them from 1.3.0rc12 with return_perf_metrics and enable_iter_perf_stats)"
        : "";
      return `not available: ${this.#path} has none of ${GAUGE_NAMES.join(", ")}${hint}`;
    }
    if (this.#attempts === 0) return "not available: no scrape was made";
    if (this.#lastError) return `not available: no scrape answered (last: ${this.#lastError})`;
    return "not available: stopped before the first scrape answered";
  }

  #availableNote(missing: GaugeName[]): string | null {
    const parts: string[] = [];
    if (this.#failed > 0) {
      parts.push(`${this.#failed} of ${this.#attempts} scrapes failed (last: ${this.#lastError})`);
    }
    if (this.#permanentError) parts.push(`polling ended: ${this.#permanentError}`);
    if (this.#ended === "max_samples") parts.push(`capped at ${this.#maxSamples} samples`);
    if (this.#ended === "max_duration") {
      parts.push(`polling ended after ${Math.round(this.#maxDuration / 1000)} s`);
    }
    if (this.#skipped > 0) parts.push(`${this.#skipped} ticks skipped (a scrape was still in flight)`);
    if (missing.length > 0) parts.push(`not exported: ${missing.join(", ")}`);
    return parts.length > 0 ? parts.join("; ") : null;
  }
}
