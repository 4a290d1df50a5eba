/**
 * The client's own event-loop lag during a load level: a timer due every `intervalMs` records how
 * late it fired. A blocked loop delays sends and timestamps alike, so a level where it was blocked
 * for more than ~10 ms is flagged (the client may have limited the measurement).
 * @module
 */
import { nearestRankSorted } from "../stats/mod.ts";

/** What the monitor saw. */
export interface LoopLag {
  samples: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

/** Starts a monitor; `stop()` returns the lag and clears the timer. */
export function startLoopLag(intervalMs = 20, clock: () => number = () => performance.now()): { stop(): LoopLag } {
  const lags: number[] = [];
  let due = clock() + intervalMs;
  const t = setInterval(() => {
    const now = clock();
    lags.push(Math.max(0, now - due));
    due = now + intervalMs;
  }, intervalMs);
  (t as unknown as { unref?: () => void }).unref?.();
  return {
    stop(): LoopLag {
      clearInterval(t);
      if (!lags.length) return { samples: 0, p50Ms: null, p99Ms: null, maxMs: null };
      const s = lags.sort((a, b) => a - b);
      const at = (p: number) => nearestRankSorted(s, p) as number;
      return { samples: s.length, p50Ms: at(50), p99Ms: at(99), maxMs: s[s.length - 1] };
    },
  };
}

/** The monitor's numbers as a record stores them (`data.levels[].event_loop_lag_ms`): snake_case keys. */
export interface LoopLagRecord {
  samples: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

/** The record form (record schema 2 on; schema 1 wrote `p50Ms`, `p99Ms`, `maxMs`). */
export function loopLagRecord(l: LoopLag): LoopLagRecord {
  return { samples: l.samples, p50_ms: l.p50Ms, p99_ms: l.p99Ms, max_ms: l.maxMs };
}

/** Reads a record's `event_loop_lag_ms`: the snake_case keys, else the camelCase ones of records before schema 2. */
export function loopLagFromRecord(v: unknown): LoopLagRecord {
  const o = v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  const num = (snake: string, camel: string) => {
    const x = snake in o ? o[snake] : o[camel];
    return typeof x === "number" && Number.isFinite(x) ? x : null;
  };
  return { samples: num("samples", "samples") ?? 0, p50_ms: num("p50_ms", "p50Ms"), p99_ms: num("p99_ms", "p99Ms"), max_ms: num("max_ms", "maxMs") };
}
