/**
 * What a Bun process that measures many streams starts with: settings the runtime reads only at
 * start, so ik sets them by becoming itself again (execve) before it measures. Measured on the
 * 2-vCPU Intel Xeon host (README, issue 21):
 *
 * - `BUN_CONFIG_MAX_HTTP_REQUESTS`: Bun's fetch opens at most 256 connections at once unless this
 *   is set at start; request 257 would wait inside fetch and its wait would count as TTFT.
 * - `BUN_JSC_minEdenToOldGenerationRatio` 0.7 (JSC's default 1/3), for a closed loop of
 *   {@link COLLECTOR_MIN_STREAMS} or more streams only: after each young-generation collection JSC
 *   plans a full one once the room left for new objects falls below this share of its heap limit.
 *   Every request's state outlives a young collection (a request lasts seconds, collections come
 *   every ~100 ms), so it is promoted and freed only by a full collection; with the default the old
 *   generation grew to 3-4x the live heap between full collections. `bench:memory` in one hour:
 *   peak RSS 196.7 -> 160.9 MB at 1,000 streams, 126.8 -> 108.8 MB at 256. Not for fewer streams:
 *   a small heap then gets a full collection almost every time, and one stream's client lag p99 went
 *   from 0.34-0.45 to 1.57-2.00 ms (`bench:headroom`, three interleaved pairs), the send lag p99 at
 *   500 req/s from 1.22-1.42 to 1.29-1.56 ms with 4 % more CPU. Only below
 *   {@link GROWTH_MIN_STREAMS} streams: from there the next setting replaces it.
 * - `BUN_JSC_heapGrowthMaxIncrease` 0.5 (Bun sets 2.0), for a closed loop of
 *   {@link GROWTH_MIN_STREAMS} or more streams only. On a host with 16 GB of RAM or more (a GPU
 *   node always) JSC lets its heap grow to (1 + this × e^(-heap/RAM)) × what the last full
 *   collection left, so the young generation may fill twice the live heap before it is collected,
 *   and the per-event garbage of a thousand streams (each socket read a buffer, each event a
 *   string) fills it between collections: that room was most of ik's peak over the runtime's own
 *   floor. With 0.5 (JSC's full-collection trigger left at its default, 1/3) the room is half the
 *   live heap and each young collection is followed by a full one. AMD EPYC (2 vCPU, the mock on the
 *   same cores, 256 tokens at 8 ms), interleaved: 1,000 streams 111.5-117.4 -> 94.0-97.8 MB peak RSS
 *   (7 pairs), 512 streams 94.5-96.6 -> 80.5-81.5 MB (2 pairs); the cost, twice the collections:
 *   ik's CPU +8 % (median; +2 to +24 %), its own longest loop block 2.7-4.5 -> 3.3-9.4 ms and the
 *   loop lag p99 6.6-10.2 -> 8.2-14.8 ms at 1,000 streams (levels the record flags client_limited on that host either way),
 *   5.6-5.7 -> 8.4-9.1 ms at 512. At 256 streams (85-86 -> 75 MB) the lag cost (p99 4.5-4.7 -> 6.3-8.4
 *   ms) buys memory that is not short there, so it starts at 512, where the peak neared 100 MB.
 *
 * A value the user set themselves is kept, and a user who set either collector variable gets
 * neither of ik's (their own tuning stands alone). JSC refuses to start on an option it does not
 * know, so the collector settings are given only to the Bun line they were measured on.
 * @module
 */

/** Bun's cap on concurrent fetches, raised for the commands that open many streams. */
export const BUN_FETCH_LIMIT_ENV = "BUN_CONFIG_MAX_HTTP_REQUESTS";
/** The raised cap. */
export const BUN_FETCH_LIMIT_VALUE = "65336";
/** JSC's trigger for a full collection after a young one (see the module note). */
export const COLLECTOR_ENV = "BUN_JSC_minEdenToOldGenerationRatio";
/** The value ik starts a measuring process with. */
export const COLLECTOR_VALUE = "0.7";
/** The closed-loop streams from which the collector setting is given. */
export const COLLECTOR_MIN_STREAMS = 256;
/** JSC's heap growth over what a full collection left (see the module note). */
export const GROWTH_ENV = "BUN_JSC_heapGrowthMaxIncrease";
/** The value ik starts a measuring process with. */
export const GROWTH_VALUE = "0.5";
/** The closed-loop streams from which the heap growth setting is given (instead of the trigger). */
export const GROWTH_MIN_STREAMS = 512;
/** Bun versions (major.minor) whose JavaScriptCore has the options and where they were measured. */
const COLLECTOR_BUN_LINES = new Set(["1.4"]);

/**
 * The variables a measuring Bun process still has to be started with, given the current
 * environment, Bun's version and the closed-loop streams it will run (the command's largest
 * closed-loop level, else 0): the fetch cap, and on a Bun line they were measured on one collector
 * setting: the full-collection trigger from {@link COLLECTOR_MIN_STREAMS} streams, the heap growth
 * from {@link GROWTH_MIN_STREAMS}. A variable already set (by the user, or inherited from a parent
 * ik: a `bench rounds` cell) is left out and so kept; where either collector variable is set, ik
 * adds no collector setting. An empty result means this process already starts as it should: no execve.
 */
export function measuringStartEnv(env: (name: string) => string | undefined, bunVersion: string, streams: number): Record<string, string> {
  const out: Record<string, string> = {};
  // An empty value counts as unset, as Bun reads it.
  if (!env(BUN_FETCH_LIMIT_ENV)) out[BUN_FETCH_LIMIT_ENV] = BUN_FETCH_LIMIT_VALUE;
  const line = /^(\d+)\.(\d+)\./.exec(bunVersion);
  const measuredLine = line !== null && COLLECTOR_BUN_LINES.has(`${line[1]}.${line[2]}`);
  if (measuredLine && !env(COLLECTOR_ENV) && !env(GROWTH_ENV)) {
    if (streams >= GROWTH_MIN_STREAMS) out[GROWTH_ENV] = GROWTH_VALUE;
    else if (streams >= COLLECTOR_MIN_STREAMS) out[COLLECTOR_ENV] = COLLECTOR_VALUE;
  }
  return out;
}
