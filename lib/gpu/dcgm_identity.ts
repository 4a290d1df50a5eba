/**
 * The record's GPU identity from a dcgm-exporter scrape: on a remote GPU node nvidia-smi cannot be
 * run from the client's host, but the exporter ik samples for power and energy labels every series
 * with the GPU's `modelName`, `UUID` and `gpu` index. One scrape before the run names the GPUs, so
 * a record with `--gpu-metrics-url` is not left with "gpu identity" missing.
 * @module
 */
import { gpuNames } from "./nvidia_smi.ts";
import type { TelemetryParse } from "./telemetry_parse.ts";

/** The source tag an identity read from a DCGM exporter carries. */
export const DCGM_IDENTITY_SOURCE = "dcgm-exporter";

/**
 * The identity a DCGM scrape gives: the name most of its GPUs carry (`names` when they differ) and
 * how many GPUs it lists. Null when no GPU in it has a model name.
 * @param parse one scrape, parsed ({@link parseDcgmText})
 */
export function dcgmIdentity(parse: TelemetryParse): Record<string, unknown> | null {
  const named = gpuNames(parse.gpus.flatMap((g) => (g.name ? [g.name] : [])));
  return named ? { name: named.name, count: parse.gpus.length, source: DCGM_IDENTITY_SOURCE, ...(named.names ? { names: named.names } : {}) } : null;
}
