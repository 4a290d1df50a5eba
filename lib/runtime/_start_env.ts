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
 *   500 req/s from 1.22-1.42 to 1.29-1.56 ms with 4 % more CPU.
 *
 * A value the user set themselves is kept. JSC refuses to start on an option it does not know,
 * so the collector setting is given only to the Bun line it was measured on.
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
/** Bun versions (major.minor) whose JavaScriptCore has the option and where it was measured. */
const COLLECTOR_BUN_LINES = new Set(["1.4"]);

/**
 * The variables a measuring Bun process still has to be started with, given the current
 * environment, Bun's version and the closed-loop streams it will run (the command's largest
 * closed-loop level, else 0): the fetch cap, and the collector setting from
 * {@link COLLECTOR_MIN_STREAMS} streams on a Bun line it was measured on. A variable already set
 * (by the user, or inherited from a parent ik: a `bench rounds` cell) is left out and so kept. An
 * empty result means this process already starts as it should: no execve.
 */
export function measuringStartEnv(env: (name: string) => string | undefined, bunVersion: string, streams: number): Record<string, string> {
  const out: Record<string, string> = {};
  // An empty value counts as unset, as Bun reads it.
  if (!env(BUN_FETCH_LIMIT_ENV)) out[BUN_FETCH_LIMIT_ENV] = BUN_FETCH_LIMIT_VALUE;
  const line = /^(\d+)\.(\d+)\./.exec(bunVersion);
  if (streams >= COLLECTOR_MIN_STREAMS && !env(COLLECTOR_ENV) && line !== null && COLLECTOR_BUN_LINES.has(`${line[1]}.${line[2]}`)) {
    out[COLLECTOR_ENV] = COLLECTOR_VALUE;
  }
  return out;
}
