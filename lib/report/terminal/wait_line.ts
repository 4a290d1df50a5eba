/**
 * A progress line for a person waiting on a terminal: "waiting for response headers from URL… 3 s",
 * shown only after a delay (a quick answer shows nothing), rewritten in place each second, and
 * erased when the wait ends. Callers only start it when stderr is a terminal.
 * @module
 */

/** A running wait line. */
export interface WaitLine {
  /** Ends the wait: erases the line if it was shown. Safe to call more than once. */
  stop(): void;
  /** Whether anything has been written. */
  readonly shown: boolean;
}

/** Options for {@link startWaitLine}. */
export interface WaitLineOptions {
  /** Delay before the first line, ms (default 2000). */
  afterMs?: number;
  /** Interval between updates, ms (default 1000). */
  everyMs?: number;
}

/** Carriage return, then erase to the end of the line. */
const ERASE = "\r\x1b[K";

/**
 * Starts a wait line that writes `<label>… N s` through `write` once `afterMs` have passed.
 * @param write where the line goes (stderr)
 * @param label what is being waited for, already safe to print
 */
export function startWaitLine(
  write: (text: string) => void,
  label: string,
  opts: WaitLineOptions = {},
): WaitLine {
  const t0 = performance.now();
  let shown = false;
  let stopped = false;
  let interval: ReturnType<typeof setInterval> | null = null;
  const draw = () => {
    if (stopped) return;
    shown = true;
    // Rounded: a timer may fire a little early on the monotonic clock (Node's do), and "1 s" after
    // a 2 s delay would be wrong.
    write(`${ERASE}${label}… ${Math.round((performance.now() - t0) / 1000)} s`);
  };
  const first = setTimeout(() => {
    draw();
    interval = setInterval(draw, opts.everyMs ?? 1000);
  }, opts.afterMs ?? 2000);
  return {
    get shown() {
      return shown;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(first);
      if (interval !== null) clearInterval(interval);
      if (shown) write(ERASE);
    },
  };
}
