/**
 * Schedules: seeded arrival offsets and the concurrency → rate conversion (pure, no timers).
 * @module
 */
export { type ArrivalSpec, arrivalOffsetsMs, concurrencyToRate, gammaDeviate, levelSeed } from "./arrivals.ts";
