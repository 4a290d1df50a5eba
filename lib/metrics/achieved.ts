/**
 * Whether an open-loop level delivered the load it stands for. A level is eligible for N* only
 * where the rate the client really sent (first to last send) is at least {@link ACHIEVED_FRACTION}
 * of the rate its seeded schedule asked for; else it is "not achieved" and says what capped it.
 * The schedule's own rate is the reference, not the nominal target: a Poisson schedule over a short
 * window draws fewer or more arrivals than target × duration by chance (that is what load at that
 * rate looks like, and the record warns about it apart); what makes a level unusable is the client
 * or a request cap failing to send what was scheduled (`--rates 1e9` sends a few thousand per s).
 * @module
 */

/** The least fraction of the scheduled rate a level must have sent to be eligible for N*. */
export const ACHIEVED_FRACTION = 0.9;

/**
 * The rate a schedule of arrival offsets asks for, requests/s: (n − 1) / (last − first), the same
 * estimator as the offered rate, so the two compare like for like; null under two arrivals.
 */
export function scheduleRate(offsetsMs: ArrayLike<number> | null): number | null {
  if (!offsetsMs || offsetsMs.length < 2) return null;
  const span = (offsetsMs[offsetsMs.length - 1] - offsetsMs[0]) / 1000;
  return span > 0 ? (offsetsMs.length - 1) / span : Infinity;
}

/** What the check needs from a level. */
export interface AchievedInput {
  /** The nominal rate (req/s), or null for a closed loop (nothing to achieve). */
  targetRps: number | null;
  /** The schedule's own rate ({@link scheduleRate}), or null when it is not known. */
  scheduledRps: number | null;
  /** Requests sent / send window, or null (fewer than two sent). */
  offeredRps: number | null;
  /** Why the client may have limited the level (send lag, a blocked loop), or null. */
  clientLimited: string | null;
  /** The level's cap on requests (`--max-requests-per-level`), or null. */
  maxRequests: number | null;
  /** Requests sent. */
  sent: number;
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/**
 * Why a level did not achieve its schedule's rate (offered < {@link ACHIEVED_FRACTION} × it), naming
 * what capped it; null when it did, or when there is nothing to judge (closed loop, under two sends).
 */
export function notAchieved(x: AchievedInput): string | null {
  if (x.targetRps === null || x.offeredRps === null) return null;
  // A schedule of arrivals all due at once (a huge target) has no finite rate: the target stands.
  const want = x.scheduledRps !== null && Number.isFinite(x.scheduledRps) ? x.scheduledRps : x.targetRps;
  if (!(want > 0) || x.offeredRps >= ACHIEVED_FRACTION * want) return null;
  const head = `offered ${fmt(x.offeredRps)} of the ${fmt(want)} req/s scheduled (< ${ACHIEVED_FRACTION} x)`;
  const capped = x.maxRequests !== null && x.sent >= x.maxRequests ? `--max-requests-per-level ${x.maxRequests} let only ${x.sent} requests go` : null;
  const cause = x.clientLimited
    ? `the client could not send faster (${x.clientLimited})`
    : "the client could not send at this rate";
  return `${head}: ${capped ? `${capped}, and ` : ""}${cause}`;
}

/** What {@link offeredRate} reads from a level. */
export interface OfferedInput {
  sent: number;
  /** Monotonic ms of the first and last send, or null (nothing sent). */
  firstSendMs: number | null;
  lastSendMs: number | null;
  /** Monotonic ms of the schedule's time 0, or null. */
  originMs: number | null;
  /** The schedule's window (s): `--duration-s`, or the last arrival's offset when the count bounds it (schedule_note.ts scheduledRate); null: none. */
  scheduleWindowS: number | null;
}

/**
 * The rate a level was offered. With a schedule window, on the schedule's own basis (arrivals over
 * its window): requests sent over the longer of that window and the time from the schedule's start
 * to the last send, so a client on time reads the scheduled rate exactly and one that fell behind
 * (its last sends past the window) reads less. Without one (a shard's slice, a closed loop), the
 * rate the sends kept: (sent − 1) over first to last send.
 */
export function offeredRate(x: OfferedInput): number | null {
  if (x.sent < 1 || x.lastSendMs === null) return null;
  if (x.scheduleWindowS !== null && x.scheduleWindowS > 0 && x.originMs !== null) {
    return x.sent / Math.max(x.scheduleWindowS, (x.lastSendMs - x.originMs) / 1000);
  }
  const w = x.firstSendMs !== null ? (x.lastSendMs - x.firstSendMs) / 1000 : 0;
  return w > 0 ? (x.sent - 1) / w : null;
}
