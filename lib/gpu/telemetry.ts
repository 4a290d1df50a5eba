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
import type { TelemetryParse } from "./telemetry_parse.ts";
import { type PollResult, readDcgm, readSmi } from "./telemetry_sources.ts";
import { GpuAccumulator, round6 } from "./gpu_accumulator.ts";
import {
  type GpuTelemetry,
  type GpuTelemetryGpu,
  type GpuTelemetryOptions,
  type GpuTelemetrySource,
  TELEMETRY_DEFINITION,
  TELEMETRY_EXEC_TIMEOUT_MS,
  TELEMETRY_FETCH_TIMEOUT_MS,
  TELEMETRY_INTERVAL_MS,
  type TelemetryEnd,
  type TelemetryTimers,
} from "./telemetry_types.ts";

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
  readonly #onPower: ((gpu: string, uuid: string, watts: number) => void) | undefined;
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
    this.#onPower = opts.onPower;
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
      // "Permanent" (not found, 404, no DCGM series) is believed only before the first good poll:
      // after one, the same answer is a source restarting (an exporter's empty scrape), and the
      // polls go on.
      const permanent = r.permanent && this.#n === 0;
      if (permanent) this.#permanentError ??= r.error;
      if (permanent || (this.#n === 0 && this.#consecutiveFailures >= this.#giveUpAfter)) {
        this.#halt("not_available");
      }
      return false;
    }
    this.#consecutiveFailures = 0;
    this.#record((before + after) / 2, r.parse);
    return true;
  }

  #read(): Promise<PollResult> {
    return this.#source.kind === "dcgm"
      ? readDcgm(this.#source, this.#timeout, this.#ac.signal, this.#requestTimers)
      : readSmi(this.#source.exec, this.#timeout);
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
        this.#onPower?.(r.index === null ? "" : String(r.index), r.uuid ?? "", r.powerW);
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
