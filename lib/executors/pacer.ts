/**
 * Waiting for an absolute deadline precisely. A plain `setTimeout` wakes up to a millisecond or
 * more late (NVIDIA's AIPerf measured the same and moved to a ~50 µs pacer), so the pacer sleeps
 * until shortly before the deadline and finishes the wait by yielding to the event loop
 * (`setImmediate`), which keeps in-flight streams being read while it waits. The margin is the
 * CPU it spends for the precision; benchmarks measure both.
 *
 * Where the runtime has a sleep that keeps fractions of a millisecond (`runtime.preciseSleep`:
 * Bun's `Atomics.waitAsync`, lib/runtime/_precise_sleep.ts), the pacer sleeps with it to
 * {@link PRECISE_SPIN_MARGIN_MS} before the deadline and spins only that: a timer's whole-millisecond
 * wake-up put up to 1.5 ms of spinning before every request, and a timer asked for less than 1 ms
 * woke at 1.08 ms, past the margin.
 * @module
 */
import { setImmediate } from "node:timers";
import { runtime } from "../runtime/mod.ts";

/** The clock and the two ways of waiting a pacer uses (tests pass a manual clock). */
export interface PacerTimers {
  /** Monotonic ms. */
  clock(): number;
  /** Sleeps about `ms`. */
  sleep(ms: number): Promise<void>;
  /** Yields once to the event loop (I/O runs). */
  yieldNow(): Promise<void>;
  /**
   * Yields to the event loop until `clock()` reaches `deadlineMs` or the signal aborts, in one
   * promise (optional: without it the pacer yields with {@link yieldNow} once per turn).
   */
  spinUntil?(deadlineMs: number, clock: () => number, signal?: AbortSignal): Promise<void>;
  /**
   * Sleeps about `ms`, fractions of a millisecond kept, without holding the CPU; resolves early
   * when the signal aborts (optional: without it the pacer sleeps with {@link sleep}).
   */
  sleepPrecise?(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The longest the real spin holds the event loop in one turn, ms. A turn of the event loop costs
 * about 0.65 µs on an idle loop (Bun, 2-vCPU AMD EPYC) and each `setImmediate` leaves ~50 bytes
 * of garbage, so a spin that yielded every turn made ~230 turns and ~12 KB of garbage a request at
 * a 0.2 ms margin: at 500 req/s, a quarter of what a whole load level allocated, and so a quarter
 * of its young collections (whose pauses set the send-lag tail). Busy-waiting on the clock for up
 * to this long between yields makes the turns ~30x fewer; a read that arrives meanwhile waits at
 * most this long (its timestamp is taken when it is read).
 */
export const SPIN_SLICE_MS = 0.02;
/** Clock reads per busy-wait slice at most: a clock that never moves (a test's) still yields. */
const SLICE_MAX_READS = 4096;

/**
 * The real spin: one promise and one function for the whole wait, re-armed with `setImmediate`
 * each turn; each turn busy-waits on the clock for up to {@link SPIN_SLICE_MS} (or to the
 * deadline, when that is nearer) before it yields. A promise per turn (the promise, its two
 * resolving functions and a closure) was once the open loop's largest source of garbage.
 */
function spinUntilReal(deadlineMs: number, clock: () => number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const turn = () => {
      if (signal?.aborted) return resolve();
      let now = clock();
      const sliceEnd = Math.min(deadlineMs, now + SPIN_SLICE_MS);
      for (let reads = 0; now < sliceEnd && reads < SLICE_MAX_READS; reads++) now = clock();
      if (now >= deadlineMs) resolve();
      else setImmediate(turn);
    };
    setImmediate(turn);
  });
}

/** The real timers: performance.now, setTimeout and setImmediate, and the runtime's precise sleep where it has one. */
export const REAL_TIMERS: PacerTimers = {
  clock: () => performance.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  yieldNow: () => new Promise((r) => setImmediate(r)),
  spinUntil: spinUntilReal,
  ...(runtime.preciseSleep ? { sleepPrecise: runtime.preciseSleep } : {}),
};

/** Gives {@link REAL_TIMERS} another precise sleep, or takes it away (null): tests and benchmarks compare the two. */
export function setPreciseSleep(sleep: ((ms: number, signal?: AbortSignal) => Promise<void>) | null): void {
  if (sleep) REAL_TIMERS.sleepPrecise = sleep;
  else delete REAL_TIMERS.sleepPrecise;
}

/**
 * Requests started per turn of the event loop when many are due at once (a closed loop's workers
 * at its start; an open loop's burst or `--request-rate inf`). Starting 1,000 in one turn blocked
 * the loop for ~100 ms (2-vCPU AMD EPYC): the first requests sat unsent behind everyone else's
 * set-up, and that wait landed in their TTFT. A slice of 16 starts in about a millisecond, then
 * the loop runs (writes, reads, token timestamps) before the next slice.
 */
export const START_SLICE = 16;

/**
 * Default early wake-up before a deadline, in ms. Measured at 500 req/s on a 2-core AMD EPYC host
 * (benchmarks/load/RESULTS.md): 0.5 ms gives send lag p50 0.04 ms and p99 0.6 ms for about 17 % of a
 * core; 1.5 ms gives p50 0.002 / p99 0.2–0.4 ms but costs about 47 %: the CPU the client needs
 * for its streams at high rates. (Measured before {@link TIMER_MIN_SLEEP_MS}, which spins a last
 * millisecond the timer cannot sleep: `bench:load` section 4 measures the margins as they are now.)
 */
export const DEFAULT_SPIN_MARGIN_MS = 0.5;

/**
 * The spin before a deadline when the sleep before it is precise: about what that sleep wakes late
 * beside a level's timers (0.08–0.11 ms at the median, 2-vCPU AMD EPYC). The pacer alone at 500
 * req/s (benchmarks/load/RESULTS.md): lag p99 0.10–0.32 ms at 0.2 ms for 7.4–7.9 % of a core,
 * against 0.58–0.62 ms for 7.7–8.9 % with a timer's sleep and {@link DEFAULT_SPIN_MARGIN_MS}.
 * Through the binary 0.1 against 0.2 ms (interleaved 4 s levels, 2026-12-06 22:03–22:08): client
 * CPU 10–12 % lower at 500, 2,000 and 3,000 req/s (1.31–1.54 against 1.49–1.65 s a run at 500;
 * 2.95–3.13 against 3.40–3.52 s at 3,000), send lag p50 the same (0.044–0.068 against
 * 0.045–0.061 ms at 500), p99 within the host's noise: the spin is CPU that, on a small host, the
 * server or the client's own streams need.
 */
export const PRECISE_SPIN_MARGIN_MS = 0.1;

/**
 * The shortest sleep the pacer asks of a timer (a runtime without a precise sleep: the Node build,
 * Deno), ms; a shorter wait is spun. A timer wakes on whole milliseconds: Node makes a delay under
 * 1 ms 1 ms and truncates the rest (`setTimeout(0.4)` waits ~1 ms, `setTimeout(1.9)` ~1 ms), so
 * a timer that woke early into the last millisecond before the spin margin was asked for a
 * fraction and woke a millisecond later, past the deadline: the Node build's pacer was 0.6–0.8 ms
 * late at p90 (2-vCPU AMD EPYC, 100 and 500 req/s) where its margin is 0.5 ms.
 */
export const TIMER_MIN_SLEEP_MS = 1;

/** How a pacer on these timers waits: its sleep and the spin before each deadline (ms). */
export interface Pacing {
  sleep: "precise" | "timer";
  spin_margin_ms: number;
}

/** The pacing {@link waitUntil} uses on `timers` with the caller's margin (or the default for its sleep). */
export function pacingOf(timers: PacerTimers, spinMarginMs?: number): Pacing {
  const precise = typeof timers.sleepPrecise === "function";
  return { sleep: precise ? "precise" : "timer", spin_margin_ms: marginOf(precise, spinMarginMs) };
}

/** The spin margin: the caller's, else the default for the sleep before it. */
function marginOf(precise: boolean, spinMarginMs: number | undefined): number {
  return spinMarginMs ?? (precise ? PRECISE_SPIN_MARGIN_MS : DEFAULT_SPIN_MARGIN_MS);
}

/**
 * Resolves at (or just after) the absolute time `deadlineMs` on `timers.clock`, or at once when
 * it has passed or the signal is aborted.
 */
export async function waitUntil(
  deadlineMs: number,
  timers: PacerTimers = REAL_TIMERS,
  opts: { signal?: AbortSignal; spinMarginMs?: number } = {},
): Promise<void> {
  const precise = timers.sleepPrecise;
  const margin = marginOf(typeof precise === "function", opts.spinMarginMs);
  for (;;) {
    if (opts.signal?.aborted) return;
    const left = deadlineMs - timers.clock();
    if (left <= 0) return;
    const ms = Math.min(left - margin, 2_000_000_000);
    if (precise ? ms > 0 : ms >= TIMER_MIN_SLEEP_MS) {
      await (precise ? precise.call(timers, ms, opts.signal) : abortable(timers.sleep(ms), opts.signal));
    } else if (timers.spinUntil) await timers.spinUntil(deadlineMs, timers.clock, opts.signal);
    else await timers.yieldNow();
  }
}

/** A sleep that also ends when the signal aborts (a long wait for a sharded run's start must not outlive SIGTERM). */
function abortable(sleep: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep;
  return new Promise((done) => {
    const onAbort = () => done();
    signal.addEventListener("abort", onAbort, { once: true });
    sleep.then(() => {
      signal.removeEventListener("abort", onAbort);
      done();
    });
  });
}
