/**
 * How a rounds comparison reads (issue 18): an engine is named best in a bucket and metric only
 * when every other ranked engine's paired ratio to it has a 95% CI that excludes 1 on the worse
 * side, from at least {@link MIN_PAIRS_FOR_VERDICT} round pairs, the rule `ik compare` reads a
 * ratio by. Otherwise the engine with the best median is only the reference of the ratios, and
 * the row says "no clear difference". Pure.
 * @module
 */

/** Fewest round pairs behind a reading (with 2, a t interval has one degree of freedom), as compare. */
export const MIN_PAIRS_FOR_VERDICT = 3;

/** The reading of one engine's ratio to the reference. */
export type RatioReading = "worse" | "better" | "no clear difference" | "too few rounds" | "n/a";

/**
 * How a ratio (engine / reference) reads: `worse` or `better` when its CI excludes 1 and at least
 * {@link MIN_PAIRS_FOR_VERDICT} pairs stand behind it; `too few rounds` under that; `n/a` with no
 * interval or no direction.
 * @param higher true when higher is better (rates), false for latencies, null when never ranked
 */
export function readRatio(ci: readonly [number | null, number | null], higher: boolean | null, nPairs: number): RatioReading {
  if (higher === null) return "n/a";
  if (nPairs < MIN_PAIRS_FOR_VERDICT) return "too few rounds";
  const [lo, hi] = ci;
  if (lo === null || hi === null) return "n/a";
  if (lo <= 1 && hi >= 1) return "no clear difference";
  return (lo > 1) === higher ? "better" : "worse";
}

/**
 * The verdict of the reference engine's row: `best` when every other ranked engine reads `worse`;
 * else which engines read `better` than it (the reference is the best median over all its rounds,
 * the ratios are over the rounds both ran: an engine that missed rounds can read better there) and
 * which it is not clearly apart from; `only engine ranked` when there is no other.
 * @param others the other ranked engines' labels with their readings
 */
export function referenceVerdict(others: readonly (readonly [string, RatioReading])[]): { best: boolean; verdict: string } {
  if (!others.length) return { best: false, verdict: "only engine ranked: nothing to compare" };
  const better = others.filter(([, r]) => r === "better").map(([l]) => l);
  const unclear = others.filter(([, r]) => r !== "worse" && r !== "better");
  if (!better.length && !unclear.length) return { best: true, verdict: "best" };
  const parts: string[] = [];
  if (better.length) parts.push(`not best: ${better.join(", ")} better over the rounds both ran`);
  if (unclear.length) {
    const few = unclear.every(([, r]) => r === "too few rounds");
    parts.push(`${few ? "too few rounds" : "no clear difference"} vs ${unclear.map(([l]) => l).join(", ")}`);
  }
  return { best: false, verdict: parts.join("; ") };
}
