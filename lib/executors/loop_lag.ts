/**
 * The client's own event-loop lag during a load level: a timer due every `intervalMs` records how
 * late it fired. A blocked loop delays sends and timestamps alike, so a level where it was blocked
 * for more than ~10 ms is flagged (the client may have limited the measurement).
 *
 * A late timer has two causes a user must tell apart: ik's own work held the loop (a profile can
 * find it), or the loop's thread was ready but waited for a CPU that other work held (an
 * oversubscribed host: a mock or an engine on the same cores, or ik's own collector and runtime
 * threads competing with its loop on too few cores). Where Linux reports it
 * (`/proc/thread-self/schedstat`, the thread's time waiting on a run queue: cpu_wait.ts), each late
 * tick's wait is taken out of its lag: `own` is the lag that waiting for a CPU does not explain.
 * @module
 */
import { threadCpuWaitMs } from "./cpu_wait.ts";
import { nearestRankSorted } from "../stats/mod.ts";

/** What the monitor saw. */
export interface LoopLag {
  samples: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** The lag left when the thread's wait for a CPU is taken out (null: the wait could not be read). */
  ownP99Ms: number | null;
  ownMaxMs: number | null;
  /** The loop thread's wait for a CPU over the level, in all (ms), or null. */
  cpuWaitMs: number | null;
}

/**
 * Starts a monitor; `stop()` returns the lag and clears the timer.
 * @param cpuWaitMs the loop thread's cumulative wait for a CPU (ms), or null where unknown
 */
export function startLoopLag(
  intervalMs = 20,
  clock: () => number = () => performance.now(),
  cpuWaitMs: () => number | null = threadCpuWaitMs,
): { stop(): LoopLag } {
  const lags: number[] = [];
  const own: number[] = [];
  const wait0 = cpuWaitMs();
  let waitPrev = wait0;
  let due = clock() + intervalMs;
  const t = setInterval(() => {
    const now = clock();
    const lag = Math.max(0, now - due);
    lags.push(lag);
    if (waitPrev !== null) {
      const w = cpuWaitMs();
      if (w === null) waitPrev = null;
      else {
        // The wait since the last tick, counted against this tick's lag (never below zero).
        own.push(Math.max(0, lag - Math.max(0, w - waitPrev)));
        waitPrev = w;
      }
    }
    due = now + intervalMs;
  }, intervalMs);
  (t as unknown as { unref?: () => void }).unref?.();
  return {
    stop(): LoopLag {
      clearInterval(t);
      // waitPrev is null whenever wait0 was, or the reader failed since.
      const waitEnd = waitPrev === null ? null : cpuWaitMs();
      const cpuWait = waitEnd === null || wait0 === null ? null : Math.max(0, waitEnd - wait0);
      if (!lags.length) return { samples: 0, p50Ms: null, p99Ms: null, maxMs: null, ownP99Ms: null, ownMaxMs: null, cpuWaitMs: cpuWait };
      const s = lags.sort((a, b) => a - b);
      const at = (p: number) => nearestRankSorted(s, p) as number;
      const o = own.length === lags.length ? own.sort((a, b) => a - b) : null;
      return {
        samples: s.length,
        p50Ms: at(50),
        p99Ms: at(99),
        maxMs: s[s.length - 1],
        ownP99Ms: o ? (nearestRankSorted(o, 99) as number) : null,
        ownMaxMs: o ? o[o.length - 1] : null,
        cpuWaitMs: cpuWait,
      };
    },
  };
}

/** The monitor's numbers as a record stores them (`data.levels[].event_loop_lag_ms`): snake_case keys. */
export interface LoopLagRecord {
  samples: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  /** The lag not explained by the loop thread waiting for a CPU (absent in records before it was measured). */
  own_p99_ms?: number | null;
  own_max_ms?: number | null;
  /** The loop thread's wait for a CPU over the level, in all. */
  cpu_wait_ms?: number | null;
}

/** The record form (record schema 2 on; schema 1 wrote `p50Ms`, `p99Ms`, `maxMs`). */
export function loopLagRecord(l: LoopLag): LoopLagRecord {
  return {
    samples: l.samples, p50_ms: l.p50Ms, p99_ms: l.p99Ms, max_ms: l.maxMs,
    own_p99_ms: l.ownP99Ms, own_max_ms: l.ownMaxMs, cpu_wait_ms: l.cpuWaitMs,
  };
}

/**
 * Why a level's loop lag flags it client-limited, or null when it does not: the longest block over
 * `limitMs`, with ik's loop's own longest block where the thread's wait for a CPU was read. An own
 * block under the limit means the wait for a CPU is what took the lag over it.
 */
export function loopBlockNote(l: Pick<LoopLag, "maxMs" | "ownMaxMs">, limitMs: number): string | null {
  if ((l.maxMs ?? 0) <= limitMs) return null;
  const base = `event loop blocked ${(l.maxMs as number).toFixed(1)} ms > ${limitMs} ms`;
  if (l.ownMaxMs === null) return base;
  return l.ownMaxMs <= limitMs
    ? `${base} (ik's loop's own longest block ${l.ownMaxMs.toFixed(1)} ms; the rest was waiting for a CPU that other work held: the host's CPUs are oversubscribed)`
    : `${base} (ik's loop's own longest block ${l.ownMaxMs.toFixed(1)} ms)`;
}

/** {@link loopBlockNote} of a level as its record stores the lag (a slice's, for a merge). */
export function loopBlockNoteOfRecord(r: LoopLagRecord, limitMs: number): string | null {
  return loopBlockNote({ maxMs: r.max_ms, ownMaxMs: r.own_max_ms ?? null }, limitMs);
}

/** Reads a record's `event_loop_lag_ms`: the snake_case keys, else the camelCase ones of records before schema 2. */
export function loopLagFromRecord(v: unknown): LoopLagRecord {
  const o = v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  const num = (snake: string, camel: string) => {
    const x = snake in o ? o[snake] : o[camel];
    return typeof x === "number" && Number.isFinite(x) ? x : null;
  };
  return {
    samples: num("samples", "samples") ?? 0, p50_ms: num("p50_ms", "p50Ms"), p99_ms: num("p99_ms", "p99Ms"), max_ms: num("max_ms", "maxMs"),
    own_p99_ms: num("own_p99_ms", "ownP99Ms"), own_max_ms: num("own_max_ms", "ownMaxMs"), cpu_wait_ms: num("cpu_wait_ms", "cpuWaitMs"),
  };
}
