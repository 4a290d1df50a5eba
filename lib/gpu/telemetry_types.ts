/**
 * What GPU telemetry reports: the sampler's sources, options and results, its default intervals and
 * the definition copied into every result (lib/gpu/telemetry.ts samples; gpu_accumulator.ts folds).
 * @module
 */
import type { ExecFn } from "./nvidia_smi.ts";

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
  /**
   * Told each GPU's power reading as it is read (ik's live metrics): the GPU's index ("" when the
   * source gives none), its UUID ("" likewise: two hosts' GPU 0 differ by it) and watts.
   */
  onPower?: (gpu: string, uuid: string, watts: number) => void;
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
