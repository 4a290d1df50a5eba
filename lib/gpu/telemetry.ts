/**
 * GPU telemetry during a load level: polls nvidia-smi (through the injected {@link ExecFn}) or a
 * dcgm-exporter URL (through an injected fetch) about once a second and folds each poll into
 * per-GPU accumulators — power (mean, max, energy as the trapezoid integral), utilisation, memory
 * used, SM clock and, for DCGM, the energy counter. Memory use is constant in the run's length.
 *
 * Guarantees, as lib/scrape/gauge_sampler.ts: the first poll goes out at start(); never two polls
 * at once (a tick that finds one in flight is skipped and counted); ticks stay on the start's grid;
 * the tick timer is unref'd where the runtime allows (a request's own timeout is not, so a poll in
 * flight ends within its limit) and stop() clears it. It never throws: a poll that fails is counted
 * and noted; a source that cannot be read at all ends as `available: false` with a one-line note. Samples are stamped with an injected monotonic clock (default performance.now).
 * @module
 */
import type { ExecFn } from "./nvidia_smi.ts";
import {
  type GpuReading,
  parseDcgmText,
  parseTelemetryCsv,
  TELEMETRY_QUERY,
  type TelemetryParse,
} from "./telemetry_parse.ts";

/** The part of fetch the DCGM source uses; the global fetch fits. */
export type TelemetryFetch = (
  url: string,
  init: { signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

/** Where readings come from: nvidia-smi through an ExecFn, or a dcgm-exporter `/metrics` URL. */
export type GpuTelemetrySource =
  | { kind: "nvidia-smi"; exec: ExecFn }
  | { kind: "dcgm"; url: string; fetch?: TelemetryFetch };

/** A one-shot timer and, optionally, the clock; inject fakes in tests. */
export interface TelemetryTimers {
  /** Current time, ms, monotonic (used when the options give no `now`). */
  now?(): number;
  /** Runs fn once after ms; returns a handle for clearTimeout. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a pending setTimeout. */
  clearTimeout(handle: unknown): void;
}

/** Options of {@link GpuTelemetrySampler}. */
export interface GpuTelemetryOptions {
  /** What to poll. */
  source: GpuTelemetrySource;
  /** Time between polls, ms (default {@link TELEMETRY_INTERVAL_MS}; at least 1). */
  intervalMs?: number;
  /** Limit of one poll, ms (default {@link TELEMETRY_EXEC_TIMEOUT_MS} for nvidia-smi, {@link TELEMETRY_FETCH_TIMEOUT_MS} for DCGM). */
  timeoutMs?: number;
  /** Monotonic clock, ms (default `timers.now`, else performance.now). */
  now?: () => number;
  /** Timer functions for the ticks and the DCGM request timeout (default the global ones; ticks unref'd). */
  timers?: TelemetryTimers;
  /** Keep only these GPUs: indices or UUIDs (e.g. the ones the server was given); default all. */
  gpus?: readonly (number | string)[];
  /** Whether stop() takes one last poll so the integral reaches the end of the level (default true; only after start()). */
  sampleOnStop?: boolean;
  /** Polling ends this long after start, ms (default 24 h). */
  maxDurationMs?: number;
  /** Give up (not available) after this many failed polls in a row before any succeeded (default 5). */
  giveUpAfter?: number;
}

/** Per-GPU statistics, or the all-GPU total (see {@link TELEMETRY_DEFINITION}). */
export interface GpuTelemetryStats {
  /** Polls that had this GPU (for the total: polls that answered). */
  n: number;
  /** Polls with a power reading (for the total: polls where at least one GPU had one). */
  power_n: number;
  /** Seconds between the first and the last poll that had it. */
  window_s: number | null;
  /** Seconds between the first and the last power reading: the span energy_j covers. */
  energy_window_s: number | null;
  /** Time-weighted mean power, W: energy_j / energy_window_s (one reading: that reading). Total: the sum over GPUs. */
  mean_power_w: number | null;
  /** Highest power reading, W. Total: the highest per-poll sum over GPUs. */
  max_power_w: number | null;
  /** Trapezoid integral of power over the sample times, J; null with fewer than two power readings. Total: the sum. */
  energy_j: number | null;
  /** DCGM only: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION increments between the first and last reading, J; null otherwise. */
  energy_counter_j: number | null;
  /** Mean GPU utilisation over the polls that had it, %. Total: the mean over GPUs. */
  mean_util_pct: number | null;
  /** Highest memory used, MiB. Total: the highest per-poll sum over GPUs. */
  max_memory_used_mib: number | null;
  /** Mean SM clock over the polls that had it, MHz. Total: the mean over GPUs. */
  mean_sm_clock_mhz: number | null;
  /** What to know about this GPU's numbers (unreadable power, gaps, stale values); null when nothing. */
  note: string | null;
}

/** One GPU's statistics with its identity. */
export interface GpuTelemetryGpu extends GpuTelemetryStats {
  /** GPU index; null when the source gave none. */
  index: number | null;
  /** GPU UUID; null when the source gave none. */
  uuid: string | null;
  /** Model name (DCGM's modelName); null for nvidia-smi. */
  name: string | null;
}

/** Why polling ended. */
export type TelemetryEnd = "stop" | "not_available" | "max_duration";

/** What {@link GpuTelemetrySampler.stop} returns. */
export interface GpuTelemetry {
  /** True when at least one poll answered with at least one (kept) GPU. */
  available: boolean;
  /** Which source was polled. */
  source: "nvidia-smi" | "dcgm";
  /** One line: why not available, or failures/caps/gaps worth knowing; null when nothing. */
  note: string | null;
  /** How the numbers are defined (edges, gaps, totals). */
  definition: string;
  /** Polls that answered. */
  n: number;
  /** Polls started. */
  attempts: number;
  /** Polls that failed. */
  failed: number;
  /** Ticks skipped because a poll was still in flight. */
  skipped: number;
  /** The clock (ms) of the first and last poll that answered; null when none. */
  first_sample_ms: number | null;
  last_sample_ms: number | null;
  /** Seconds between the first and last poll that answered (null when none). */
  window_s: number | null;
  /** Why polling ended. */
  ended: TelemetryEnd;
  /** One entry per GPU, in the order first seen. */
  gpus: GpuTelemetryGpu[];
  /** All kept GPUs together, plus how many there were. */
  total: GpuTelemetryStats & { gpus: number };
}

/** Default time between polls, ms. */
export const TELEMETRY_INTERVAL_MS = 1000;
/** Default limit of one nvidia-smi run, ms. */
export const TELEMETRY_EXEC_TIMEOUT_MS = 3000;
/** Default limit of one DCGM scrape, ms. */
export const TELEMETRY_FETCH_TIMEOUT_MS = 1500;

/** How the statistics are defined; copied into every result. */
export const TELEMETRY_DEFINITION =
  "Each poll is stamped at the midpoint of its request on a monotonic clock. energy_j is the trapezoid " +
  "integral of power over the poll times, only between a GPU's first and last power reading: nothing is " +
  "extrapolated to the window edges (time before the first or after the last reading counts zero; stop() " +
  "takes a last poll so the span reaches the end); a poll without a reading in between is bridged by the " +
  "straight line between its neighbours. mean_power_w = energy_j / energy_window_s (time-weighted); with one " +
  "reading it is that reading and energy_j is null. Unreadable cells ([N/A], [Not Supported], [Unknown Error], " +
  "empty, DCGM blanks) are null, never 0. mean_util_pct and mean_sm_clock_mhz are plain means over the polls " +
  "that had them. total: energy_j, mean_power_w and energy_counter_j are sums over GPUs; max_power_w and " +
  "max_memory_used_mib are the highest per-poll sum; mean_util_pct and mean_sm_clock_mhz are means over " +
  "GPUs. energy_counter_j (DCGM) sums DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION increments (mJ to J) between " +
  "its first and last reading, a drop counted as a counter restart.";

const DEFAULT_MAX_DURATION_MS = 24 * 3600 * 1000;

/** The tick timer: unref'd, so a forgotten sampler does not keep the process alive. */
const UNREF_TIMERS: TelemetryTimers = {
  setTimeout: (fn, ms) => {
    const h = setTimeout(fn, ms);
    (h as unknown as { unref?: () => void }).unref?.();
    return h;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A request's timeout stays ref'd: a poll in flight (that stop() awaits) ends within its limit. */
const REF_TIMERS: TelemetryTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

function r6(v: number | null): number | null {
  return v === null ? null : round6(v);
}

function firstLine(s: string, n = 120): string {
  const l = (s.split(/\r?\n/).find((x) => x.trim()) ?? "").trim();
  return l.length > n ? l.slice(0, n) + "…" : l;
}

/** The running statistics of one GPU. */
class GpuAccumulator {
  n = 0;
  firstT = NaN;
  lastT = NaN;
  pN = 0;
  pFirstT = NaN;
  pLastT = NaN;
  pLast = NaN;
  pMax = -Infinity;
  energyJ = 0;
  pRepeats = 0;
  pGaps = 0;
  pRaw: string | null = null;
  uSum = 0;
  uN = 0;
  mMax = -Infinity;
  cSum = 0;
  cN = 0;
  eN = 0;
  eLast = NaN;
  eDeltaMj = 0;
  eResets = 0;
  mig = false;
  missedSincePower = false;

  constructor(readonly index: number | null, readonly uuid: string | null, public name: string | null) {}

  add(t: number, r: GpuReading): void {
    if (this.n === 0) this.firstT = t;
    this.n++;
    this.lastT = t;
    if (r.name && !this.name) this.name = r.name;
    if (r.mig) this.mig = true;
    const p = r.powerW;
    if (p === null) {
      this.pRaw ??= r.powerRaw ?? "null";
      if (this.pN > 0) this.missedSincePower = true;
    } else {
      if (this.pN === 0) this.pFirstT = t;
      else {
        const dt = (t - this.pLastT) / 1000;
        if (dt > 0) this.energyJ += ((p + this.pLast) / 2) * dt;
        if (p === this.pLast) this.pRepeats++;
        if (this.missedSincePower) this.pGaps++;
      }
      this.missedSincePower = false;
      this.pN++;
      this.pLast = p;
      this.pLastT = t;
      if (p > this.pMax) this.pMax = p;
    }
    if (r.utilPct !== null) {
      this.uSum += r.utilPct;
      this.uN++;
    }
    if (r.memoryUsedMib !== null && r.memoryUsedMib > this.mMax) this.mMax = r.memoryUsedMib;
    if (r.smClockMhz !== null) {
      this.cSum += r.smClockMhz;
      this.cN++;
    }
    if (r.energyMj !== null) {
      if (this.eN > 0) {
        if (r.energyMj >= this.eLast) this.eDeltaMj += r.energyMj - this.eLast;
        else {
          this.eDeltaMj += r.energyMj; // a drop: the counter restarted (driver reload)
          this.eResets++;
        }
      }
      this.eN++;
      this.eLast = r.energyMj;
    }
  }

  stats(source: "nvidia-smi" | "dcgm"): GpuTelemetryGpu {
    const span = this.pN > 0 ? (this.pLastT - this.pFirstT) / 1000 : null;
    const integrable = this.pN >= 2 && span !== null && span > 0;
    const notes: string[] = [];
    if (this.pN === 0) {
      notes.push(`power never readable (${this.pRaw ?? "null"} in ${this.n} polls): energy_j null`);
    } else {
      if (!integrable) notes.push("one power reading: no interval to integrate, energy_j null");
      if (this.pN < this.n) {
        notes.push(
          `power unreadable in ${this.n - this.pN} of ${this.n} polls (${this.pRaw})` +
            (this.pGaps > 0 ? `, ${this.pGaps} gap(s) bridged linearly` : ""),
        );
      }
      if (source === "dcgm" && this.pN >= 3 && this.pRepeats * 2 >= this.pN - 1) {
        notes.push(
          `power repeated the previous value in ${this.pRepeats} of ${
            this.pN - 1
          } polls: the exporter refreshes ` +
            "less often than it is polled (its collect interval), so the integral is coarser than the poll rate",
        );
      }
    }
    if (this.eResets > 0) notes.push(`energy counter dropped ${this.eResets} time(s) (counted as restarts)`);
    if (this.mig) notes.push("MIG instances folded into the GPU (board power taken once)");
    return {
      index: this.index,
      uuid: this.uuid,
      name: this.name,
      n: this.n,
      power_n: this.pN,
      window_s: this.n > 0 ? round6((this.lastT - this.firstT) / 1000) : null,
      energy_window_s: r6(span),
      mean_power_w: integrable ? round6(this.energyJ / span) : this.pN === 1 ? round6(this.pLast) : null,
      max_power_w: this.pN > 0 ? round6(this.pMax) : null,
      energy_j: integrable ? round6(this.energyJ) : null,
      energy_counter_j: this.eN >= 2 ? round6(this.eDeltaMj / 1000) : null,
      mean_util_pct: this.uN > 0 ? round6(this.uSum / this.uN) : null,
      max_memory_used_mib: this.mMax >= 0 ? round6(this.mMax) : null,
      mean_sm_clock_mhz: this.cN > 0 ? round6(this.cSum / this.cN) : null,
      note: notes.length ? notes.join("; ") : null,
    };
  }
}

type PollResult = { ok: true; parse: TelemetryParse } | { ok: false; error: string; permanent: boolean };

/**
 * Samples GPU telemetry in the background, or on demand with {@link sampleOnce}.
 *
 * @example
 * const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec } });
 * s.start();
 * // … run the load level …
 * const tel = await s.stop(); // tel.total.energy_j, tel.total.mean_power_w, tel.gpus[i], tel.available, tel.note
 */
export class GpuTelemetrySampler {
  readonly #source: GpuTelemetrySource;
  readonly #now: () => number;
  readonly #timers: TelemetryTimers;
  readonly #requestTimers: TelemetryTimers;
  readonly #interval: number;
  readonly #timeout: number;
  readonly #maxDuration: number;
  readonly #giveUpAfter: number;
  readonly #sampleOnStop: boolean;
  readonly #keep: Set<string> | null;
  readonly #ac = new AbortController();
  #started = false;
  #polling = false;
  #ended: TelemetryEnd | null = null;
  #handle: unknown = null;
  #inFlight: Promise<boolean> | null = null;
  #stopping: Promise<GpuTelemetry> | null = null;
  #summary: GpuTelemetry | null = null;
  #t0 = 0;
  #k = 0;
  #attempts = 0;
  #failed = 0;
  #skipped = 0;
  #consecutiveFailures = 0;
  #lastError: string | null = null;
  #permanentError: string | null = null;
  #badLines = 0;
  #firstBad: string | null = null;
  #filteredOut = new Set<string>();
  #n = 0;
  #firstT = NaN;
  #lastT = NaN;
  #gpus = new Map<string, GpuAccumulator>();
  #totalPowerN = 0;
  #totalPowerMax = -Infinity;
  #totalMemMax = -Infinity;

  /** Sets the sampler up; nothing is polled before start() or sampleOnce(). */
  constructor(opts: GpuTelemetryOptions) {
    this.#source = opts.source;
    const timers = opts.timers;
    this.#now = opts.now ?? (timers?.now ? () => timers.now!() : () => performance.now());
    this.#timers = opts.timers ?? UNREF_TIMERS;
    this.#requestTimers = opts.timers ?? REF_TIMERS;
    this.#interval = Math.max(1, opts.intervalMs ?? TELEMETRY_INTERVAL_MS);
    this.#timeout = Math.max(
      1,
      opts.timeoutMs ??
        (opts.source.kind === "dcgm" ? TELEMETRY_FETCH_TIMEOUT_MS : TELEMETRY_EXEC_TIMEOUT_MS),
    );
    this.#maxDuration = Math.max(0, opts.maxDurationMs ?? DEFAULT_MAX_DURATION_MS);
    this.#giveUpAfter = Math.max(1, Math.floor(opts.giveUpAfter ?? 5));
    this.#sampleOnStop = opts.sampleOnStop ?? true;
    this.#keep = opts.gpus ? new Set(opts.gpus.map(String)) : null;
  }

  /** Starts polling; the first poll goes out at once. A second call does nothing. */
  start(): void {
    if (this.#started || this.#stopping) return;
    this.#started = true;
    this.#polling = true;
    this.#t0 = this.#now();
    this.#tick();
  }

  /** Whether it is still polling (false before start, once stopped, given up or past its duration). */
  get polling(): boolean {
    return this.#polling;
  }

  /** Polls that answered so far. */
  get size(): number {
    return this.#n;
  }

  /**
   * Takes one poll now (also without start()) and folds it in; resolves true when it answered. If
   * a poll is in flight it resolves with that one instead; after stop() it resolves false.
   */
  sampleOnce(): Promise<boolean> {
    if (this.#inFlight) return this.#inFlight;
    if (this.#summary) return Promise.resolve(false);
    this.#attempts++;
    const p = this.#poll().then((ok) => {
      this.#inFlight = null;
      return ok;
    });
    this.#inFlight = p;
    return p;
  }

  /**
   * Stops polling and returns the result. A poll in flight is awaited; otherwise, after start(),
   * one last poll is taken (unless `sampleOnStop: false` or the source is not available), so this
   * resolves within one poll's timeout. Later calls return the same result.
   */
  stop(): Promise<GpuTelemetry> {
    if (this.#stopping) return this.#stopping;
    this.#stopping = (async () => {
      const lastPoll = this.#started && this.#sampleOnStop && this.#ended !== "not_available";
      this.#halt("stop");
      if (this.#inFlight) await this.#inFlight;
      else if (lastPoll) await this.sampleOnce();
      this.#ac.abort();
      this.#summary = this.#summarize();
      return this.#summary;
    })();
    return this.#stopping;
  }

  #halt(why: TelemetryEnd): void {
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
    const elapsed = this.#now() - this.#t0;
    if (elapsed >= this.#maxDuration) return this.#halt("max_duration");
    if (this.#inFlight) this.#skipped++;
    else void this.sampleOnce();
    if (!this.#polling) return;
    // Ticks stay on the start's grid; a late tick skips the slots it missed.
    this.#k = Math.max(this.#k + 1, Math.floor(elapsed / this.#interval) + 1);
    const delay = Math.max(0, this.#t0 + this.#k * this.#interval - this.#now());
    this.#handle = this.#timers.setTimeout(this.#tick, delay);
  };

  async #poll(): Promise<boolean> {
    const before = this.#now();
    let r: PollResult;
    try {
      r = await this.#read();
    } catch (e) {
      r = {
        ok: false,
        error: `poll failed: ${e instanceof Error ? e.message : String(e)}`,
        permanent: false,
      };
    }
    const after = this.#now();
    if (this.#summary) return false;
    if (r.ok && r.parse.gpus.length === 0) {
      r = {
        ok: false,
        error: `no GPU in the answer${r.parse.firstBad ? ` (${r.parse.firstBad})` : ""}`,
        permanent: false,
      };
    }
    if (!r.ok) {
      this.#failed++;
      this.#consecutiveFailures++;
      this.#lastError = r.error;
      if (r.permanent) this.#permanentError ??= r.error;
      if (r.permanent || (this.#n === 0 && this.#consecutiveFailures >= this.#giveUpAfter)) {
        this.#halt("not_available");
      }
      return false;
    }
    this.#consecutiveFailures = 0;
    this.#record((before + after) / 2, r.parse);
    return true;
  }

  #read(): Promise<PollResult> {
    return this.#source.kind === "dcgm" ? this.#readDcgm(this.#source) : this.#readSmi(this.#source.exec);
  }

  async #readSmi(exec: ExecFn): Promise<PollResult> {
    let res: { code: number | null; stdout: string };
    try {
      res = await exec(TELEMETRY_QUERY, { timeoutMs: this.#timeout });
    } catch (e) {
      return {
        ok: false,
        error: `nvidia-smi could not be run (${e instanceof Error ? e.message : String(e)})`,
        permanent: true,
      };
    }
    if (res.code === null || res.code === 127) {
      return { ok: false, error: "nvidia-smi could not be run (not found)", permanent: true };
    }
    if (res.code !== 0) {
      const said = firstLine(res.stdout ?? "");
      return {
        ok: false,
        error: `nvidia-smi exited ${res.code}${said ? `: ${said}` : ""}`,
        permanent: false,
      };
    }
    return { ok: true, parse: parseTelemetryCsv(res.stdout ?? "") };
  }

  async #readDcgm(src: { url: string; fetch?: TelemetryFetch }): Promise<PollResult> {
    const f: TelemetryFetch | undefined = src.fetch ?? (typeof fetch === "function" ? fetch : undefined);
    if (!f) return { ok: false, error: "no fetch available to read the DCGM exporter", permanent: true };
    const ac = new AbortController();
    const onStop = () => ac.abort();
    this.#ac.signal.addEventListener("abort", onStop, { once: true });
    const timer = this.#requestTimers.setTimeout(() => ac.abort(), this.#timeout);
    try {
      const res = await f(src.url, { signal: ac.signal });
      const body = await res.text();
      if (res.status === 404 || res.status === 401 || res.status === 403) {
        return { ok: false, error: `DCGM exporter ${src.url} answered HTTP ${res.status}`, permanent: true };
      }
      if (res.status < 200 || res.status >= 300) {
        return { ok: false, error: `DCGM exporter ${src.url} answered HTTP ${res.status}`, permanent: false };
      }
      const parse = parseDcgmText(body);
      if (parse.gpus.length === 0) {
        return { ok: false, error: `no DCGM_FI_DEV_* GPU metrics at ${src.url}`, permanent: true };
      }
      return { ok: true, parse };
    } catch (e) {
      const why = ac.signal.aborted && !this.#ac.signal.aborted
        ? `timed out after ${this.#timeout} ms`
        : e instanceof Error
        ? e.message
        : String(e);
      return { ok: false, error: `DCGM exporter ${src.url} could not be read (${why})`, permanent: false };
    } finally {
      this.#requestTimers.clearTimeout(timer);
      this.#ac.signal.removeEventListener("abort", onStop);
    }
  }

  #record(t: number, parse: TelemetryParse): void {
    if (parse.badLines > 0) {
      this.#badLines += parse.badLines;
      this.#firstBad ??= parse.firstBad ?? null;
    }
    let kept = 0, pSum = 0, pAny = false, mSum = 0, mAny = false;
    for (const r of parse.gpus) {
      if (this.#keep && !this.#keep.has(String(r.index)) && !(r.uuid && this.#keep.has(r.uuid))) {
        this.#filteredOut.add(r.uuid ?? String(r.index));
        continue;
      }
      kept++;
      let acc = this.#gpus.get(r.key);
      if (!acc) this.#gpus.set(r.key, acc = new GpuAccumulator(r.index, r.uuid, r.name));
      acc.add(t, r);
      if (r.powerW !== null) {
        pSum += r.powerW;
        pAny = true;
      }
      if (r.memoryUsedMib !== null) {
        mSum += r.memoryUsedMib;
        mAny = true;
      }
    }
    if (kept === 0) return;
    if (this.#n === 0) this.#firstT = t;
    this.#n++;
    this.#lastT = t;
    if (pAny) {
      this.#totalPowerN++;
      if (pSum > this.#totalPowerMax) this.#totalPowerMax = pSum;
    }
    if (mAny && mSum > this.#totalMemMax) this.#totalMemMax = mSum;
  }

  #summarize(): GpuTelemetry {
    const source = this.#source.kind;
    const gpus = [...this.#gpus.values()].map((g) => g.stats(source));
    const sum = (pick: (g: GpuTelemetryGpu) => number | null): number | null => {
      const v = gpus.map(pick).filter((x): x is number => x !== null);
      return v.length ? round6(v.reduce((a, b) => a + b, 0)) : null;
    };
    const mean = (pick: (g: GpuTelemetryGpu) => number | null): number | null => {
      const v = gpus.map(pick).filter((x): x is number => x !== null);
      return v.length ? round6(v.reduce((a, b) => a + b, 0) / v.length) : null;
    };
    const withEnergy = gpus.filter((g) => g.energy_j !== null).length;
    const totalNotes: string[] = [];
    if (gpus.length > 0 && withEnergy < gpus.length) {
      const missing = gpus.filter((g) => g.energy_j === null).map((g) => g.index ?? g.uuid);
      totalNotes.push(
        withEnergy === 0
          ? "no GPU had two power readings: energy_j null"
          : `energy_j and mean_power_w leave out GPU ${missing.join(", ")} (no power integral)`,
      );
    }
    const spans = gpus.map((g) => g.energy_window_s).filter((x): x is number => x !== null);
    const available = this.#n > 0;
    const window = available ? round6((this.#lastT - this.#firstT) / 1000) : null;
    return {
      available,
      source,
      note: available ? this.#availableNote() : this.#unavailableNote(),
      definition: TELEMETRY_DEFINITION,
      n: this.#n,
      attempts: this.#attempts,
      failed: this.#failed,
      skipped: this.#skipped,
      first_sample_ms: available ? round6(this.#firstT) : null,
      last_sample_ms: available ? round6(this.#lastT) : null,
      window_s: window,
      ended: this.#ended ?? "stop",
      gpus,
      total: {
        gpus: gpus.length,
        n: this.#n,
        power_n: this.#totalPowerN,
        window_s: window,
        energy_window_s: spans.length ? Math.max(...spans) : null,
        mean_power_w: sum((g) => (g.energy_j !== null || withEnergy === 0 ? g.mean_power_w : null)),
        max_power_w: this.#totalPowerN > 0 ? round6(this.#totalPowerMax) : null,
        energy_j: sum((g) => g.energy_j),
        energy_counter_j: sum((g) => g.energy_counter_j),
        mean_util_pct: mean((g) => g.mean_util_pct),
        max_memory_used_mib: this.#totalMemMax >= 0 ? round6(this.#totalMemMax) : null,
        mean_sm_clock_mhz: mean((g) => g.mean_sm_clock_mhz),
        note: totalNotes.length ? totalNotes.join("; ") : null,
      },
    };
  }

  #unavailableNote(): string {
    const what = this.#source.kind === "dcgm" ? `DCGM exporter ${this.#source.url}` : "nvidia-smi";
    if (this.#filteredOut.size > 0 && this.#gpus.size === 0) {
      return `not available: no GPU matched ${[...this.#keep!].join(", ")} (seen: ${
        [...this.#filteredOut].join(", ")
      })`;
    }
    if (this.#permanentError) return `not available: ${this.#permanentError}`;
    if (this.#lastError) {
      return `not available: ${this.#failed} of ${this.#attempts} polls of ${what} failed (last: ${this.#lastError})`;
    }
    if (this.#attempts === 0) return `not available: ${what} was never polled`;
    return `not available: stopped before the first poll of ${what} answered`;
  }

  #availableNote(): string | null {
    const parts: string[] = [];
    if (this.#failed > 0) {
      parts.push(`${this.#failed} of ${this.#attempts} polls failed (last: ${this.#lastError})`);
    }
    if (this.#permanentError) parts.push(`polling ended: ${this.#permanentError}`);
    if (this.#ended === "max_duration") {
      parts.push(`polling ended after ${Math.round(this.#maxDuration / 1000)} s`);
    }
    if (this.#skipped > 0) parts.push(`${this.#skipped} ticks skipped (a poll was still in flight)`);
    if (this.#badLines > 0) parts.push(`${this.#badLines} unreadable lines (first: ${this.#firstBad})`);
    const noPower = [...this.#gpus.values()].filter((g) => g.pN === 0).length;
    if (noPower > 0) parts.push(`${noPower} of ${this.#gpus.size} GPUs never had a power reading`);
    return parts.length ? parts.join("; ") : null;
  }
}
