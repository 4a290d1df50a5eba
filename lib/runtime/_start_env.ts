/**
 * What a Bun process that measures many streams starts with: settings the runtime reads only at
 * start, so ik sets them by becoming itself again (execve) before it measures. Measured on the
 * 2-vCPU Intel Xeon host (README, issue 21):
 *
 * - `BUN_CONFIG_MAX_HTTP_REQUESTS`: Bun's fetch opens at most 256 connections at once unless this
 *   is set at start; request 257 would wait inside fetch and its wait would count as TTFT.
 * - `BUN_JSC_minEdenToOldGenerationRatio` 0.7 (JSC's default 1/3): after each young-generation
 *   collection JSC plans a full one once the room left for new objects falls below this share of
 *   its heap limit. Every request's state outlives a young collection (a request lasts seconds,
 *   collections come every ~100 ms), so it is promoted and freed only by a full collection; with
 *   the default the old generation grew to 3-4× the live heap between full collections. At 1,000
 *   streams of 256 tokens (8 ms a token, client pinned to a core), peak RSS 186-216 MB at the default
 *   against 156-162 MB at 0.7 (three rounds of 0.33, 0.6, 0.7, 0.8; 0.6: 163-168, 0.8: 161-167),
 *   client CPU unchanged within the runs' noise; the 256-stream client lag p99 was lower in 7 of
 *   10 interleaved pairs (median 1.44 against 2.29 ms).
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
/** Bun versions (major.minor) whose JavaScriptCore has the option and where it was measured. */
const COLLECTOR_BUN_LINES = new Set(["1.4"]);

/**
 * The variables a measuring Bun process is started with, given the current environment and Bun's
 * version: the fetch cap always, the collector setting unless the user set it or this Bun line was
 * not measured.
 */
export function measuringStartEnv(env: (name: string) => string | undefined, bunVersion: string): Record<string, string> {
  const out: Record<string, string> = { [BUN_FETCH_LIMIT_ENV]: BUN_FETCH_LIMIT_VALUE };
  const line = /^(\d+)\.(\d+)\./.exec(bunVersion);
  if (env(COLLECTOR_ENV) === undefined && line !== null && COLLECTOR_BUN_LINES.has(`${line[1]}.${line[2]}`)) {
    out[COLLECTOR_ENV] = COLLECTOR_VALUE;
  }
  return out;
}
