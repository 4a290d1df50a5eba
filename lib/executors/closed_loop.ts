/**
 * The closed-loop executor: N workers, each sending its next request when its previous one ends
 * (N always in flight: vLLM's `--max-concurrency`, AIPerf's concurrency). The arrival rate falls
 * as the server slows, so this is a STRESS TEST, never a capacity measurement, and never yields N*.
 * @module
 */
import { type PacerTimers, REAL_TIMERS, START_SLICE } from "./pacer.ts";
import { TurnSlicer } from "./turn_slicer.ts";

export { START_SLICE };

/** Options for {@link runClosedLoop}. */
export interface ClosedLoopOptions {
  /** Workers (requests in flight). */
  workers: number;
  /** No new request starts after this many seconds. */
  durationS: number;
  /** Cap on requests in all (default none). */
  maxRequests?: number | null;
  /** Stops starting requests when aborted. */
  signal?: AbortSignal;
  /** Clock and the yield between start slices (default the real ones). */
  timers?: Pick<PacerTimers, "clock"> & Partial<Pick<PacerTimers, "yieldNow">>;
}

/**
 * Runs the workers until the duration or the request cap is reached.
 * @param send starts request i (numbered in start order); its promise ends with the request
 * @returns requests sent and the start time
 */
export async function runClosedLoop(
  send: (index: number, tScheduledMs: number | null) => Promise<unknown>,
  opts: ClosedLoopOptions,
): Promise<{ t0Ms: number; sent: number }> {
  const clock = opts.timers?.clock ?? REAL_TIMERS.clock;
  const yieldNow = opts.timers?.yieldNow ?? REAL_TIMERS.yieldNow;
  const t0 = clock();
  const end = t0 + opts.durationS * 1000;
  const cap = opts.maxRequests ?? Infinity;
  let next = 0;
  // Every start, the first ones and each worker's next, takes a permit: START_SLICE per turn.
  const slicer = new TurnSlicer(yieldNow);
  const more = () => next < cap && clock() < end && !opts.signal?.aborted;
  const worker = async () => {
    while (more()) {
      const wait = slicer.take();
      if (wait !== null) {
        await wait;
        // The cap, the duration or an abort may have come while this start waited.
        if (!more()) return;
      }
      const i = next++;
      await send(i, null).catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.workers) }, worker));
  return { t0Ms: t0, sent: next };
}
