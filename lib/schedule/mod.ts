/**
 * Schedules: seeded arrival offsets, the concurrency → rate conversion and the auto level search (pure, no timers).
 * @module
 */
export { type ArrivalSpec, arrivalOffsetsMs, concurrencyToRate, gammaDeviate, levelSeed } from "./arrivals.ts";
export { AutoSearch, type AutoSearchOptions, type AutoSearchState, type Probe, type ProbeOutcome, roundLevel } from "./auto_search.ts";
