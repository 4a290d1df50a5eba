/**
 * The server's own view: Prometheus text parsing, each engine's metrics path and gauge names,
 * one bounded scrape, and a background sampler for load levels.
 * @module
 */
export {
  MAX_PROM_SAMPLES,
  MAX_PROM_TEXT_CHARS,
  parsePrometheusText,
  parsePromNumber,
} from "./prometheus_text.ts";
export type { PromParse, PromParseOptions, PromSample } from "./prometheus_text.ts";
export {
  ENGINE_METRICS,
  GAUGE_AGGREGATION,
  GAUGE_NAMES,
  gaugesFromSamples,
  metricsSpec,
} from "./engine_gauges.ts";
export type {
  EngineMetricsSpec,
  GaugeAggregation,
  GaugeName,
  GaugeReading,
  GaugeSource,
  GaugeValues,
} from "./engine_gauges.ts";
export { isDrainedPath, SCRAPE_TIMEOUT_MS, scrapeOnce } from "./scrape_once.ts";
export type { ScrapeOptions, ScrapeResult } from "./scrape_once.ts";
export {
  GaugeSampler,
  SAMPLER_INTERVAL_MS,
  SAMPLER_MAX_DURATION_MS,
  SAMPLER_MAX_SAMPLES,
} from "./gauge_sampler.ts";
export type {
  GaugeSeries,
  GaugeSummary,
  SamplerEnd,
  SamplerOptions,
  SamplerTimers,
} from "./gauge_sampler.ts";
