/**
 * A sleep that keeps fractions of a millisecond and holds no CPU, for the open-loop pacer
 * (lib/executors/pacer.ts). `setTimeout` wakes on whole milliseconds (a 0.7 ms sleep is 1.08 ms on
 * Bun, a 2.5 ms one 2.08 ms), so the pacer sleeps short of each deadline and spins the rest on
 * `setImmediate`: about 0.5–1.5 ms of spinning per request, a turn of the event loop and an
 * Immediate object each few microseconds. `Atomics.waitAsync`'s timeout needs no whole
 * milliseconds: on Bun 1.4.5 (2-vCPU AMD EPYC) a 0.7 ms wait ends at 0.70–0.73 ms with no timer
 * armed and at 0.77–0.84 ms beside timers (every load level has some), against 1.07–1.22 ms for
 * `setTimeout(0.7)`. On Node (0.7 → 1.1 ms) and Deno (0.7 → 2.1 ms) it is no better than a
 * timer, and on all three a pending wait alone does not keep the process running: this sleep
 * holds a timer for that.
 * @module
 */

/** The longest single wait (a timer's delay must stay under 2^31 ms); a longer sleep ends there. */
const MAX_MS = 2_000_000_000;
/** How long after its time the keep-alive timer ends a sleep whose wait has not (a runtime that never ends it). */
export const KEEP_ALIVE_SLACK_MS = 1000;

/** Sleeps about `ms` (fractions kept); ends early, resolved, when the signal aborts. */
export type PreciseSleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** `Atomics.waitAsync` as ES2024 defines it (not yet in every TypeScript lib). */
export type WaitAsync = (
  cell: Int32Array,
  index: number,
  value: number,
  timeoutMs: number,
) => { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };

/** The runtime's `Atomics.waitAsync`, or null where it has none. */
export function atomicsWaitAsync(): WaitAsync | null {
  const w = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;
  return typeof w === "function" ? w.bind(Atomics) : null;
}

/**
 * A {@link PreciseSleep} on `waitAsync`'s timeout. Every sleep waits on one shared cell that stays
 * 0; an abort wakes the cell's waiters (`Atomics.notify`), so another sleeper woken with it ends
 * early too: callers re-check their clock (the pacer does). While a wait is pending a timer due
 * {@link KEEP_ALIVE_SLACK_MS} after it is armed, because the wait itself does not keep the event
 * loop alive (without it, a level whose first request is due later would end the process as it
 * waits); if the wait has not ended by then, the timer ends the sleep, late but not never.
 */
export function waitAsyncSleep(waitAsync: WaitAsync): PreciseSleep {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const wake = () => void Atomics.notify(cell, 0);
  return (ms, signal) => {
    if (!(ms > 0) || signal?.aborted) return Promise.resolve();
    const wait = Math.min(ms, MAX_MS);
    const w = waitAsync(cell, 0, 0, wait);
    if (!w.async) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(keep);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      const keep = setTimeout(done, Math.ceil(wait) + KEEP_ALIVE_SLACK_MS);
      signal?.addEventListener("abort", wake, { once: true });
      w.value.then(done);
    });
  };
}
