/**
 * GPU facts from nvidia-smi (identity for records; memory for the rounds' wait-for-baseline), and
 * GPU telemetry during a level (nvidia-smi or a dcgm-exporter URL: power, energy, utilisation,
 * memory, SM clock) with energy per output token.
 * @module
 */
export { type ExecFn, GPU_QUERY, gpuIdentity, type GpuInfo, parseGpuCsv, queryGpus } from "./nvidia_smi.ts";
export {
  DCGM_BLANK_MIN,
  DCGM_METRICS,
  type GpuReading,
  parseDcgmText,
  parseTelemetryCsv,
  TELEMETRY_QUERY,
  telemetryCell,
  type TelemetryParse,
} from "./telemetry_parse.ts";
export { GpuTelemetrySampler } from "./telemetry.ts";
export {
  type GpuTelemetry,
  type GpuTelemetryGpu,
  type GpuTelemetryOptions,
  type GpuTelemetrySource,
  type GpuTelemetryStats,
  TELEMETRY_DEFINITION,
  TELEMETRY_EXEC_TIMEOUT_MS,
  TELEMETRY_FETCH_TIMEOUT_MS,
  TELEMETRY_INTERVAL_MS,
  type TelemetryEnd,
  type TelemetryFetch,
  type TelemetryTimers,
} from "./telemetry_types.ts";
export { ENERGY_PER_TOKEN_DEFINITION, type EnergyPerToken, energyPerToken } from "./energy_per_token.ts";
