/**
 * What a merged level may claim, decided from the union of its shards' rows the way one process
 * decides it for its own level:
 *
 * - a level during which a shard was interrupted is not judged (`not_judged: "interrupted"`, as one
 *   interrupted process marks it): the requests that shard had in flight were aborted and dropped,
 *   which leaves the rest biased fast, and its offered rate is that of a level cut short in time,
 *   still the level's rate (its target is not scaled down for what the interrupt kept from being sent);
 * - whether a level achieved its rate is the union's offered rate against the schedule of the rows
 *   the union sent, never each shard's verdict on its own sub-schedule (a shard that kept its own
 *   pace but started late stretches the fleet's send window; a shard's short sub-schedule can miss
 *   where the fleet did not). Each shard's own verdict is kept as detail.
 * @module
 */
import { notAchieved } from "../metrics/mod.ts";
import { ownedCount } from "../shard/shard_spec.ts";

/** The due times of the rows a level's union sent, as offsets (ms) on the level's schedule. */
export class DueSpan {
  /** Rows with a due time. */
  n = 0;
  /** The earliest and latest offsets (ms). */
  first = Infinity;
  last = -Infinity;

  /** Adds one row's offset on the schedule (ms from the level's t0). */
  add(offsetMs: number): void {
    this.n++;
    if (offsetMs < this.first) this.first = offsetMs;
    if (offsetMs > this.last) this.last = offsetMs;
  }

  /**
   * The rate these arrivals ask for, req/s: (n − 1) / (last − first), the estimator one process
   * uses for its own schedule (`scheduleRate`); Infinity when all are due at once, null under two.
   */
  rate(): number | null {
    if (this.n < 2) return null;
    const span = (this.last - this.first) / 1000;
    return span > 0 ? (this.n - 1) / span : Infinity;
  }
}

/** The key a shard goes by in per-shard maps ("K/S"). */
const shardKey = (k: number, s: number) => `${k}/${s}`;

/**
 * The shards interrupted during a level: their slice's level entry says so (`interrupted: true`),
 * or they left aborted rows in it (a request cut off by the interrupt).
 * @param ran each shard that started the level, with its slice's entry for it
 */
export function shardsCutIn(ran: readonly { k: number; entry: Record<string, unknown> | undefined }[], abortedBy: Record<string, number>, s: number): number[] {
  return ran.filter((r) => r.entry?.interrupted === true || (abortedBy[shardKey(r.k, s)] ?? 0) > 0).map((r) => r.k);
}

/**
 * The requests of a level's schedule the merged level stands for: each shard that started the level
 * owns its seqs (one interrupted during it too: a level cut short in time keeps its rate); an absent
 * shard, or one interrupted before the level began, sent none of it and owns none.
 * @param n the whole schedule's requests; @param ranKs the shards that started the level
 */
export function plannedOf(n: number, s: number, ranKs: ReadonlySet<number>): number {
  let planned = 0;
  for (const k of ranKs) planned += ownedCount(n, k, s);
  return planned;
}

/** What the union's verdict needs. */
export interface UnionAchievedInput {
  /** The level's target rate (req/s), scaled to the shards that started it; null for a closed loop. */
  targetRps: number | null;
  /** The due times of every row the union sent. */
  due: DueSpan;
  /** The union's offered rate (req/s), or null under two sends. */
  offeredRps: number | null;
  /** Why the shards' clients may have limited the level (joined), or null. */
  clientLimited: string | null;
  /** The per-level request cap of the shards that started it (their owned share of it), or null. */
  cap: number | null;
  sent: number;
  /** Each shard's in-flight cap (`max_in_flight`), or null. */
  maxInFlight: number | null;
  /** Each shard's own verdict on its sub-schedule, named by shard. */
  shardNotes: readonly string[];
}

/**
 * A merged level's `not_achieved`: the union's offered rate below {@link notAchieved}'s fraction of
 * the union's schedule, with each shard's own verdict appended as detail; null where the union did
 * achieve it (a shard's own shortfall then stays in `not_achieved_by_shard` only).
 */
export function unionNotAchieved(x: UnionAchievedInput): string | null {
  const raw = notAchieved({ targetRps: x.targetRps, scheduledRps: x.due.rate(), offeredRps: x.offeredRps, clientLimited: x.clientLimited, maxRequests: x.cap, sent: x.sent });
  if (raw === null) return null;
  const capped = x.maxInFlight ? `${raw} (or the cap of ${x.maxInFlight} in flight per shard held requests back)` : raw;
  return x.shardNotes.length ? `${capped}; by shard: ${x.shardNotes.join("; ")}` : capped;
}

/** The union's per-level cap: each started shard's owned share of `--requests N` / `--max-requests-per-level` (null: no cap). */
export function capOf(cap: number | null, s: number, ranKs: ReadonlySet<number>): number | null {
  return cap === null ? null : plannedOf(cap, s, ranKs);
}
