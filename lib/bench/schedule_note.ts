/**
 * How far a level's seeded arrival schedule strays from its target rate, and the one line ik
 * prints (stderr, before the level runs) and records (a limitation) when it strays more than 10 %.
 *
 * Open-loop arrivals are a seeded Poisson (gamma) process, so a level of `--duration-s D` at rate
 * R holds a random number of arrivals: R·D on average, with a standard deviation of about √(R·D)
 * (for Poisson; burstiness k gives about √(R·D / k)). At 4 req/s for 10 s that is 40 ± 6.3, so a
 * schedule of 28 arrivals (2.8 req/s) is ordinary noise, not a rare event: a threshold "rarer than
 * Poisson noise would be" would never fire there, and the level would still be offered 30 % less
 * load than its name says. ik therefore uses a plain relative rule: the schedule's rate (arrivals
 * over the window) differs from the target by more than 10 %. With `--requests N` the count is
 * exact and the window is the span of the N arrivals, so the same rule applies to N / span.
 * @module
 */

/** A schedule whose rate differs from the target by more than this share is noted. */
export const SCHEDULE_DEVIATION_LIMIT = 0.1;

/** What the note is computed from. */
export interface ScheduleFacts {
  /** The level's name (`r4`, `c8`). */
  name: string;
  /** The target arrival rate, req/s. */
  targetRps: number;
  /** The whole schedule's arrival offsets (every shard's), ms from the level's start. */
  offsetsMs: ArrayLike<number>;
  /** The level's window (`--duration-s`), or null with `--requests N`. */
  durationS: number | null;
  /** `--max-requests-per-level` (a cap), or with `--requests N` that N. */
  maxRequests: number | null;
  burstiness: number;
}

/** The schedule's rate and its window: arrivals over `--duration-s`, or over their own span when a count bounds them. */
export function scheduledRate(f: Pick<ScheduleFacts, "offsetsMs" | "durationS" | "maxRequests">): { rps: number | null; windowS: number | null; bounded: boolean } {
  const n = f.offsetsMs.length;
  if (n === 0) return { rps: null, windowS: f.durationS, bounded: false };
  const bounded = f.durationS === null || (f.maxRequests !== null && n >= f.maxRequests);
  const windowS = bounded ? f.offsetsMs[n - 1] / 1000 : (f.durationS as number);
  return { rps: windowS > 0 ? n / windowS : null, windowS, bounded };
}

const num = (x: number, d = 2) => String(Number(x.toFixed(d)));

/**
 * The note for a level whose schedule strays more than 10 % from its target, or null.
 * @example scheduleNote({ name: "r4", targetRps: 4, offsetsMs: 28 offsets, durationS: 10, maxRequests: null, burstiness: 1 })
 *   // "level r4: its seeded schedule offers 2.8 req/s (28 arrivals in 10 s), 30 % below the target 4 req/s (> 10 %; …)"
 */
export function scheduleNote(f: ScheduleFacts): string | null {
  const { rps, windowS, bounded } = scheduledRate(f);
  if (rps === null || windowS === null || !(f.targetRps > 0)) return null;
  const dev = rps / f.targetRps - 1;
  if (Math.abs(dev) <= SCHEDULE_DEVIATION_LIMIT + 1e-12) return null; // exactly 10 % (in floating point) is not more
  const n = f.offsetsMs.length;
  const what = f.durationS === null ? `exactly ${n} arrivals over ${num(windowS)} s` : bounded ? `${n} arrivals (the cap) over ${num(windowS)} s` : `${n} arrivals in ${num(windowS)} s`;
  const expected = f.targetRps * windowS;
  const noise = f.durationS !== null && !bounded
    ? `Poisson noise: ${num(expected, 1)} ± ${num(Math.sqrt(expected / (f.burstiness || 1)), 1)} arrivals expected`
    : `the span of ${n} gaps varies by about ${num(100 / Math.sqrt(n * (f.burstiness || 1)), 0)} %`;
  const fix = f.durationS === null ? "more --requests narrow it, or another --seed" : "use --requests N for an exact number of arrivals per level, a longer --duration-s, or another --seed";
  return `level ${f.name}: its seeded schedule offers ${num(rps)} req/s (${what}), ${num(Math.abs(dev) * 100, 0)} % ${dev < 0 ? "below" : "above"} the target ${num(f.targetRps)} req/s ` +
    `(more than ${SCHEDULE_DEVIATION_LIMIT * 100} %; ${noise}): the level was offered ${dev < 0 ? "less" : "more"} load than its name says; ${fix}`;
}
