/**
 * Live progress of a load level on stderr: on a TTY one line rewritten in place (level,
 * sent/target, in flight, failures, running p95 TTFT, send lag p99); otherwise a plain line at
 * most every 5 s. Nothing on stdout.
 * @module
 */
import type { LevelProgress } from "../../bench/load_level.ts";

/** The counters shown: lib/bench/load_level.ts LevelProgress. */
export type ProgressView = LevelProgress;

const f = (v: number | null, nd = 1) => (v === null ? "-" : v.toFixed(nd));

/** One progress line (pure). */
export function progressLine(p: ProgressView): string {
  return `load ${p.name}: sent ${p.sent}${p.planned !== null ? `/${p.planned}` : ""}, in flight ${p.inFlight}, failed ${p.failed}, ` +
    `p95 TTFT ${f(p.ttftP95Ms)} ms, send lag p99 ${f(p.sendLagP99Ms, 2)} ms`;
}

/** A printer: `update` on each tick, `done` at the end (ends the TTY line). */
export function progressPrinter(write: (text: string) => void, tty: boolean, plainEveryMs = 5000): { update(p: ProgressView): void; note(line: string): void; done(): void } {
  let last = -Infinity;
  let open = false;
  return {
    update(p: ProgressView) {
      if (tty) {
        write(`\r\x1b[2K${progressLine(p)}`);
        open = true;
        return;
      }
      const now = performance.now();
      if (now - last >= plainEveryMs) {
        last = now;
        write(progressLine(p) + "\n");
      }
    },
    /** One line that stays (a warning), clearing the progress line first on a terminal. */
    note(line: string) {
      write(`${open ? "\r\x1b[2K" : ""}${line}\n`);
      open = false;
    },
    done() {
      if (open) write("\r\x1b[2K");
      open = false;
    },
  };
}
