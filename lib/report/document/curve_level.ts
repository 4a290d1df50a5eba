/**
 * One level of a latency–throughput curve as the report draws it: from a measured record's levels
 * (load_doc.ts) or from a capacity record's own curve (capacity_curve.ts).
 * @module
 */

/** One level as the curve reads it. */
export interface CurveLevel {
  level: number | string;
  name: string;
  /** Output tok/s per GPU (or achieved req/s when no token rate is known). */
  x: number | null;
  ttft: number | null;
  tpot: number | null;
  e2e: number | null;
  sloOk: boolean | null;
  /** Why the level was not judged (interrupted, nothing sent), if so. */
  notJudged?: string | null;
  /** Why the level's load was not achieved, if so: the SLO held at a lower load than it stands for. */
  notAchieved?: string | null;
}
