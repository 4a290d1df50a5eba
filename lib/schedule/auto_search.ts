/**
 * The level search of `--rates auto` / `--concurrency auto`: N* without guessing a grid. From a
 * start level, double while the SLO holds; once a level fails, bisect between the highest level
 * that held and the lowest that failed until they are within `precision` of each other (relative
 * to the one that held); if the very first level fails, halve until one holds. Every probe is a
 * whole measured level of the run (its own seeded schedule), and N* is then read from all of them
 * with the usual rule (the highest level where the SLO holds there and at every lower one), so a
 * noisy probe below the answer still counts against it. A probe that could not be judged (not
 * achieved, interrupted, nothing sent) ends the search where it stands. Pure: the caller measures.
 * @module
 */

/** How one measured level came out, as the search reads it. */
export type ProbeOutcome = "held" | "failed" | "unjudged";

/** One probe, as the record keeps it. */
export interface Probe {
  level: number;
  outcome: ProbeOutcome;
  /** The search's phase when it chose this level. */
  phase: "grow" | "shrink" | "bisect";
}

/** The search settings. */
export interface AutoSearchOptions {
  kind: "rate" | "concurrency";
  /** The first level (a rate in req/s, or a concurrency ≥ 1). */
  start: number;
  /** Stop once (lowest failed − highest held) ≤ precision × highest held. */
  precision: number;
  /** At most this many probes. */
  maxLevels: number;
  /** Halvings allowed when the first level fails (rate only; concurrency stops at 1). */
  maxShrink?: number;
}

/** Where the search ended. */
export interface AutoSearchState {
  probes: Probe[];
  /** Highest level that held, lowest that failed (null where none). */
  held: number | null;
  failed: number | null;
  /** Why the search stopped (null while it runs). */
  stopped: string | null;
}

/** Rounds a rate to 3 significant digits (short level names, `r37.5`), a concurrency to an integer. */
export function roundLevel(kind: "rate" | "concurrency", x: number): number {
  if (kind === "concurrency") return Math.max(1, Math.round(x));
  if (!(x > 0)) return x;
  const p = 10 ** (Math.floor(Math.log10(x)) - 2);
  return Number((Math.round(x / p) * p).toPrecision(3));
}

/** The level search; deterministic: its next level depends only on the outcomes so far. */
export class AutoSearch {
  readonly #o: Required<AutoSearchOptions>;
  readonly #probes: Probe[] = [];
  #held: number | null = null;
  #failed: number | null = null;
  #stopped: string | null = null;
  #pending: Probe | null = null;

  constructor(o: AutoSearchOptions) {
    if (!(o.start > 0)) throw new RangeError(`start level must be > 0, got ${o.start}`);
    if (!(o.precision > 0 && o.precision < 1)) throw new RangeError(`precision must be in (0, 1), got ${o.precision}`);
    if (!(Number.isInteger(o.maxLevels) && o.maxLevels >= 1)) throw new RangeError(`maxLevels must be a positive integer, got ${o.maxLevels}`);
    this.#o = { maxShrink: 6, ...o, start: roundLevel(o.kind, o.start) };
  }

  /** The next level to measure, or null when the search is over (see `state().stopped`). */
  next(): number | null {
    if (this.#pending) throw new Error("record() the pending probe before asking for the next level");
    if (this.#stopped) return null;
    if (this.#probes.length >= this.#o.maxLevels) return this.#stop(`reached --max-levels ${this.#o.maxLevels}`);
    const { kind } = this.#o;
    let level: number, phase: Probe["phase"];
    if (this.#held === null && this.#failed === null) {
      level = this.#o.start;
      phase = "grow";
    } else if (this.#failed === null) {
      level = roundLevel(kind, (this.#held as number) * 2);
      phase = "grow";
    } else if (this.#held === null) {
      const shrinks = this.#probes.filter((p) => p.phase === "shrink").length;
      if (kind === "concurrency" ? this.#failed <= 1 : shrinks >= this.#o.maxShrink) return this.#stop(`the SLO failed at the lowest level tried (${this.#failed})`);
      level = roundLevel(kind, this.#failed / 2);
      phase = "shrink";
    } else {
      const lo = this.#held, hi = this.#failed;
      if (hi - lo <= this.#o.precision * lo) return this.#stop(`bracketed within ${(this.#o.precision * 100).toFixed(1)} %: held at ${lo}, failed at ${hi}`);
      level = roundLevel(kind, (lo + hi) / 2);
      if (level <= lo || level >= hi) return this.#stop(`no level between ${lo} and ${hi} at this resolution: held at ${lo}, failed at ${hi}`);
      phase = "bisect";
    }
    if (this.#probes.some((p) => p.level === level)) return this.#stop(`level ${level} was already measured`);
    this.#pending = { level, outcome: "unjudged", phase };
    return level;
  }

  /** Records how the level `next()` gave came out. */
  record(level: number, outcome: ProbeOutcome): void {
    const p = this.#pending;
    if (!p || p.level !== level) throw new Error(`no pending probe at level ${level}`);
    this.#pending = null;
    p.outcome = outcome;
    this.#probes.push(p);
    if (outcome === "unjudged") {
      this.#stop(`level ${level} could not be judged against the SLO`);
      return;
    }
    if (outcome === "held") this.#held = Math.max(this.#held ?? -Infinity, level);
    else this.#failed = Math.min(this.#failed ?? Infinity, level);
    // A level that held above one that failed (noise): the bracket is the failed one and below.
    if (this.#held !== null && this.#failed !== null && this.#held >= this.#failed) {
      const below = this.#probes.filter((q) => q.outcome === "held" && q.level < (this.#failed as number)).map((q) => q.level);
      this.#held = below.length ? Math.max(...below) : null;
    }
  }

  /** The probes so far, the bracket and why it stopped. */
  state(): AutoSearchState {
    return { probes: this.#probes.map((p) => ({ ...p })), held: this.#held, failed: this.#failed, stopped: this.#stopped };
  }

  #stop(why: string): null {
    this.#stopped ??= why;
    return null;
  }
}
