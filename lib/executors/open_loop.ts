/**
 * The open-loop executor: request i is sent at `t0 + offset[i]` whatever the server does (arrivals
 * independent of the server, as a real population of users), and the send lag (sent − scheduled)
 * is data. It is handed a `send` and never imports the client; the caller journals each result
 * as it completes, so nothing per request is kept here.
 * @module
 */
import { type CpuWaitReader, threadCpuWaitMs } from "./cpu_wait.ts";
import { type PacerTimers, type Pacing, pacingOf, REAL_TIMERS, START_SLICE, waitUntil } from "./pacer.ts";

/** Options for {@link runOpenLoop}. */
export interface OpenLoopOptions {
  /** Arrival offsets in ms from the level's start, ascending. */
  offsetsMs: ArrayLike<number>;
  /** Stops sending when aborted (requests already sent are awaited; the client aborts them). */
  signal?: AbortSignal;
  /** Clock and waits (default the real ones). */
  timers?: PacerTimers;
  /** Early wake-up before each deadline, in ms. */
  spinMarginMs?: number;
  /**
   * The level's start on the clock (default: now). A sharded run passes the monotonic time its
   * wall-clock timetable puts the level at, so every shard offsets from the same instant.
   */
  t0Ms?: number;
  /**
   * Called once the last request has been handed to send (or sending stopped), before the
   * requests still running are awaited: a sharded run starts its next level then, so levels may
   * overlap.
   */
  onSendsDone?: () => void;
  /**
   * A cap on requests in flight (vLLM's `--max-concurrency` over its open-loop arrivals): a request
   * due while this many are running waits for one to end, then goes, still stamped with its own
   * deadline, so its send lag includes the wait for the cap. Arrivals keep their order. Default none.
   */
  maxInFlight?: number | null;
  /**
   * Reads the event loop's thread's cumulative wait for a CPU, ms (cpu_wait.ts), read before and
   * after each request's wait for its deadline; null: not read. Default: the real reader with the
   * real timers, none with a caller's timers (a manual clock).
   */
  cpuWaitMs?: CpuWaitReader | null;
}

/** What a level's sending did. */
export interface OpenLoopOutcome {
  /** The level's start on the clock. */
  t0Ms: number;
  /** Requests sent (fewer than offsets when aborted). */
  sent: number;
  /** When the last request was handed to send. */
  lastSendMs: number | null;
  /** How the sends were paced: the sleep before each deadline and the spin after it. */
  pacing: Pacing;
}

/** A promise that settles when the signal aborts (never without a signal). */
function abortOf(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((ok) => signal?.addEventListener("abort", () => ok(), { once: true }));
}

/**
 * Sends request i at t0 + offsetsMs[i] and waits until every sent request has ended.
 * @param send starts request i, due at `tScheduledMs`; `cpuWaitMs` is how long the event loop's
 *   thread waited for a CPU from the end of the previous send to this one (the stretch in which
 *   this request waited for its deadline; null where it is not read): the part of its send lag
 *   that the host, not ik, caused is at most that. Its promise ends with the request.
 */
export async function runOpenLoop(
  send: (index: number, tScheduledMs: number, cpuWaitMs: number | null) => Promise<unknown>,
  opts: OpenLoopOptions,
): Promise<OpenLoopOutcome> {
  const timers = opts.timers ?? REAL_TIMERS;
  const cpuWait = opts.cpuWaitMs !== undefined ? opts.cpuWaitMs : timers === REAL_TIMERS ? threadCpuWaitMs : null;
  const t0 = opts.t0Ms ?? timers.clock();
  const inFlight = new Set<Promise<unknown>>();
  let sent = 0;
  let lastSend: number | null = null;
  const cap = opts.maxInFlight && opts.maxInFlight > 0 ? opts.maxInFlight : Infinity;
  const aborted = cap < Infinity ? abortOf(opts.signal) : null;
  // Sends in a row that were already due (no wait between them): every START_SLICE, the loop runs.
  let inARow = 0;
  for (let i = 0; i < opts.offsetsMs.length; i++) {
    const due = t0 + opts.offsetsMs[i];
    const wait0 = cpuWait?.() ?? null;
    if (due <= timers.clock()) {
      if (++inARow % START_SLICE === 0) await timers.yieldNow();
    } else inARow = 0;
    await waitUntil(due, timers, { signal: opts.signal, spinMarginMs: opts.spinMarginMs });
    // Bounded: each wait ends when one running request ends (or on abort).
    while (inFlight.size >= cap && !opts.signal?.aborted) await Promise.race([...inFlight, aborted]);
    if (opts.signal?.aborted) break;
    const wait1 = wait0 === null ? null : (cpuWait as CpuWaitReader)();
    lastSend = timers.clock();
    const p = send(i, due, wait1 === null ? null : Math.max(0, wait1 - (wait0 as number))).catch(() => {}).finally(() => inFlight.delete(p));
    inFlight.add(p);
    sent++;
  }
  opts.onSendsDone?.();
  await Promise.all(inFlight);
  return { t0Ms: t0, sent, lastSendMs: lastSend, pacing: pacingOf(timers, opts.spinMarginMs) };
}
