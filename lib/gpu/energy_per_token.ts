/**
 * Energy per output token from a level's GPU telemetry and its token count. Pure.
 *
 * With P the telemetry's time-weighted mean power summed over GPUs (`total.mean_power_w`, W), N the
 * output tokens and T the window they were produced in (s):
 *
 *   energy_j                     = P · T
 *   joules_per_output_token      = P · T / N
 *   output_tokens_per_s_per_watt = (N / T) / P
 *
 * so the two are reciprocals. P is scaled to the token window rather than using `energy_j`
 * directly because the integral only spans first to last poll, which is up to one interval short
 * of T (and longer or shorter when the sampler was started or stopped elsewhere). This is board
 * energy of every sampled GPU, idle draw included; restrict the sampler's `gpus` to the server's.
 * @module
 */
import type { GpuTelemetry } from "./telemetry_types.ts";

/** What {@link energyPerToken} returns; nulls where power or tokens are missing. */
export interface EnergyPerToken {
  /** P · T / N, J per output token. */
  joules_per_output_token: number | null;
  /** (N / T) / P, output tokens per second per watt (= output tokens per joule). */
  output_tokens_per_s_per_watt: number | null;
  /** P, the mean power used, W (summed over GPUs). */
  power_w: number | null;
  /** P · T, J. */
  energy_j: number | null;
  /** The formulas, for the record. */
  definition: string;
  /** Why a value is null, or a coverage warning; null when nothing. */
  note: string | null;
}

/** The formulas {@link energyPerToken} uses. */
export const ENERGY_PER_TOKEN_DEFINITION =
  "P = telemetry total.mean_power_w (time-weighted mean board power summed over the sampled GPUs), " +
  "T = the level's window (s), N = output tokens: joules_per_output_token = P*T/N, " +
  "output_tokens_per_s_per_watt = (N/T)/P (its reciprocal).";

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

/**
 * J per output token and output tokens/s per W for one level.
 *
 * @param telemetry what GpuTelemetrySampler.stop() returned for the level (null/undefined: no telemetry)
 * @param outputTokens output tokens produced in the window
 * @param windowS the window, s (the same one the level's throughput uses)
 * @example
 * energyPerToken(tel, 1000, 9) // tel.total.mean_power_w 200 → { joules_per_output_token: 1.8, output_tokens_per_s_per_watt: 0.555556, … }
 */
export function energyPerToken(
  telemetry: GpuTelemetry | null | undefined,
  outputTokens: number,
  windowS: number,
): EnergyPerToken {
  const out: EnergyPerToken = {
    joules_per_output_token: null,
    output_tokens_per_s_per_watt: null,
    power_w: null,
    energy_j: null,
    definition: ENERGY_PER_TOKEN_DEFINITION,
    note: null,
  };
  if (!telemetry || !telemetry.available) {
    out.note = telemetry?.note ?? "no GPU telemetry";
    return out;
  }
  const p = telemetry.total.mean_power_w;
  const timeOk = Number.isFinite(windowS) && windowS > 0;
  if (p === null || !(p > 0)) out.note = "no power readings";
  else {
    out.power_w = p;
    if (timeOk) out.energy_j = round6(p * windowS);
  }
  if (!timeOk) {
    out.note ??= "no window (window_s must be > 0)";
    return out;
  }
  if (!Number.isFinite(outputTokens) || outputTokens <= 0) {
    out.note ??= "no output tokens";
    return out;
  }
  if (out.power_w === null) return out;
  out.joules_per_output_token = round6((out.power_w * windowS) / outputTokens);
  out.output_tokens_per_s_per_watt = round6(outputTokens / windowS / out.power_w);
  const covered = telemetry.total.energy_window_s;
  if (covered !== null && covered < 0.5 * windowS) {
    out.note = `power covered only ${covered} s of the ${windowS} s window`;
  }
  return out;
}
