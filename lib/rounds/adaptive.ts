/**
 * The adaptive stop of `ik bench rounds` (`--ci-target`, `--min-rounds`; seed 001). With a CI
 * target, `--rounds` becomes a maximum (default 12, rounded up to whole Williams periods). After
 * each whole period, once at least `--min-rounds` rounds ran, the run stops when every engine's
 * decode_tok_s ratio to the reference engine, the best median (bucket `all`) has a 95% CI (paired t-scaled bootstrap
 * on the log scale, see summary.ts) whose half-width is at most the target times the ratio.
 * Stopping only at whole periods keeps the order balanced. Stopping when a CI looks narrow is
 * optional stopping, so the rule is recorded in the plan and should be fixed before the run.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { type CellMetric, type RoundsSummary, type SummarizeOptions, type SummaryCell, summarize } from "./summary.ts";
import { defaultRounds, williamsPeriod } from "./williams.ts";

/** The metric the adaptive stop reads (single mode: client-timed decode speed). */
export const ADAPTIVE_METRIC = "decode_tok_s";
/** The bucket it reads it in. */
export const ADAPTIVE_BUCKET = "all";
/** The default maximum with `--ci-target`, rounded up to whole Williams periods. */
export const ADAPTIVE_MAX_ROUNDS = 12;

/** One engine's relative CI half-width, as the adaptive stop sees it. */
export interface HalfWidth {
  /** (hi − lo) / 2 / value; null when there is no CI yet. */
  width: number | null;
  /** What the width is of. */
  basis: string;
  /** Rounds (or pairs) behind it. */
  n?: number;
  /** False for the reference engine (the best median): the denominator of every ratio is not checked. */
  counted: boolean;
}

/**
 * Per engine, the relative half-width of the CI the adaptive stop reads: the ratio to the best
 * engine, or, for an engine with no ratio (failed requests, no round shared with the best) and for
 * the only engine of a run, the CI of its median.
 */
export function ciHalfWidths(summary: RoundsSummary, labels: readonly string[], metric = ADAPTIVE_METRIC, bucket = ADAPTIVE_BUCKET): Record<string, HalfWidth> {
  const rows = new Map(summary.rows.filter((r) => r.metric === metric && r.bucket === bucket).map((r) => [r.engine, r]));
  const out: Record<string, HalfWidth> = {};
  for (const label of labels) {
    const r = rows.get(label);
    if (!r) {
      out[label] = { width: null, basis: "no successful round", counted: true };
      continue;
    }
    if (labels.length > 1 && r.reference === label) {
      out[label] = { width: null, basis: "reference engine (the denominator of every ratio)", counted: false };
      continue;
    }
    const [rlo, rhi] = r.ratio_ci95;
    if (r.ratio_to_best && rlo !== null && rhi !== null && r.n_pairs >= 2) {
      out[label] = { width: (rhi - rlo) / 2 / r.ratio_to_best, basis: "ratio_ci95", n: r.n_pairs, counted: true };
      continue;
    }
    const [lo, hi] = r.ci95;
    if (r.median && lo !== null && hi !== null && r.n >= 2) {
      out[label] = { width: (hi - lo) / 2 / Math.abs(r.median), basis: "ci95 of the median", n: r.n, counted: true };
    } else {
      out[label] = { width: null, basis: r.n < 3 ? "fewer than 3 rounds (no interval)" : "no interval", counted: true };
    }
  }
  return out;
}

/** One adaptive check, as recorded in plan.json's `adaptive.checks`. */
export interface AdaptiveCheck {
  /** The round after which it ran. */
  round: number;
  /** Whether every counted engine met the target. */
  met: boolean;
  /** Per engine, its half-width. */
  widths: Record<string, HalfWidth>;
}

/**
 * After round `k`: the half-widths and whether every counted engine is within `ciTarget`. Only
 * the primary metric (and failed_requests, which decides eligibility) is summarized, with the same
 * bootstrap settings as the final summary, so the same CIs.
 */
export function adaptiveCheck(cells: readonly SummaryCell[], labels: readonly string[], k: number, ciTarget: number, opts: SummarizeOptions = {}): AdaptiveCheck {
  const primary = cells.map((c): SummaryCell => {
    const mets = c.metrics?.[ADAPTIVE_BUCKET] ?? {};
    const keep = Object.fromEntries(Object.entries(mets).filter(([n]) => n === ADAPTIVE_METRIC || n === "failed_requests"));
    const metrics: Record<string, Record<string, CellMetric>> = Object.keys(keep).length ? { [ADAPTIVE_BUCKET]: keep } : {};
    return { ...c, metrics };
  });
  const widths = ciHalfWidths(summarize(primary, labels, { ...opts, mode: "single" }), labels);
  const checked = Object.values(widths).filter((w) => w.counted);
  const met = checked.length > 0 && checked.every((w) => w.width !== null && w.width <= ciTarget);
  return { round: k, met, widths };
}

/** The adaptive-stop settings recorded in plan.json. */
export interface AdaptivePlan {
  ci_target: number;
  min_rounds: number;
  max_rounds: number;
  max_rounds_source: string;
  period: number;
  /** The first round after which a check may stop the run. */
  first_check_round: number;
  metric: string;
  bucket: string;
  /** The rule in words. */
  rule: string;
  /** The checks made so far. */
  checks: AdaptiveCheck[];
  /** Whether the last check met the target (set as the run goes). */
  met?: boolean;
  /** Whether the run stopped before its maximum (set at the end). */
  stopped_early?: boolean;
}

/**
 * The adaptive-stop settings and the maximum number of rounds; usage errors (exit 64) for load
 * mode, a target outside (0, 1), `--min-rounds` under 2 (3 for one engine), and a plan whose first check comes no
 * earlier than its last round ("cannot stop anything").
 */
export function adaptivePlan(nEngines: number, rounds: number | null, minRounds: number | null, ciTarget: number, mode: string): { adaptive: AdaptivePlan; rounds: number } {
  if (mode !== "single") throw usageError("--ci-target", "the adaptive stop is for single mode: it reads each round's decode_tok_s", "drop --ci-target or use --mode single");
  if (!(ciTarget > 0 && ciTarget < 1)) throw usageError("--ci-target", `${ciTarget} is not a relative CI half-width between 0 and 1`, "e.g. 0.01 for +/-1%");
  const period = williamsPeriod(nEngines) || 1;
  let max = rounds;
  let source = "--rounds";
  if (max === null) {
    max = defaultRounds(nEngines, ADAPTIVE_MAX_ROUNDS);
    source = `default: ${ADAPTIVE_MAX_ROUNDS} rounded up to whole Williams periods`;
  }
  const min = minRounds ?? Math.min(defaultRounds(nEngines), max);
  // Engines are checked on their paired ratio CI (2 round pairs give one); a single engine on the CI
  // of its median over rounds, which ik gives from 3 rounds (lib/rounds/summary.ts).
  const least = nEngines === 1 ? 3 : 2;
  if (min < least) {
    throw usageError(minRounds !== null ? "--min-rounds" : "--rounds", `${min} is under ${least}: ${nEngines === 1 ? "one engine's interval over rounds needs 3 rounds" : "a ratio's confidence interval needs 2 round pairs"}, so no check could stop the run`, `give ${minRounds !== null ? "--min-rounds" : "--rounds"} ${least} or more`);
  }
  const first = period * Math.ceil(min / period);
  if (first >= max) {
    throw usageError("--ci-target", `cannot stop anything: the first check comes after round ${first} (whole Williams periods of ${period} for ${nEngines} engine(s), from --min-rounds ${min} on) and --rounds is ${max}`, "raise --rounds");
  }
  const rule = `stop after a whole Williams period (every ${period} round(s)) once at least ${min} rounds ran, ` +
    `when every engine's ${ADAPTIVE_METRIC} [${ADAPTIVE_BUCKET}] ratio to the reference engine (the best median) has a 95% CI ` +
    `half-width <= ${ciTarget} x the ratio (the reference is not checked; an ` +
    `engine without a ratio, or the only engine, uses the CI of its median); at most ${max} rounds`;
  return {
    adaptive: { ci_target: ciTarget, min_rounds: min, max_rounds: max, max_rounds_source: source, period, first_check_round: first, metric: ADAPTIVE_METRIC, bucket: ADAPTIVE_BUCKET, rule, checks: [] },
    rounds: max,
  };
}

/**
 * The rounds to run and the adaptive plan (null without `--ci-target`), with the run's usage
 * checks: `--rounds` at least 1, `--min-rounds` only with `--ci-target`. Without either, the
 * smallest multiple of the period that is at least 3.
 */
export function planRounds(o: { nEngines: number; rounds?: number | null; ciTarget?: number | null; minRounds?: number | null; mode: string }): { rounds: number; adaptive: AdaptivePlan | null } {
  const rounds = o.rounds ?? null;
  const ciTarget = o.ciTarget ?? null;
  const minRounds = o.minRounds ?? null;
  if (minRounds !== null && ciTarget === null) throw usageError("--min-rounds", "applies only with --ci-target (the adaptive stop)", "add --ci-target or drop --min-rounds");
  if (rounds !== null && !(Number.isInteger(rounds) && rounds >= 1)) throw usageError("--rounds", `${rounds} is not a whole number >= 1`, "give --rounds 1 or more");
  if (ciTarget !== null) return adaptivePlan(o.nEngines, rounds, minRounds, ciTarget, o.mode);
  return { rounds: rounds ?? defaultRounds(o.nEngines), adaptive: null };
}

/**
 * What the run does after round `k` under the adaptive plan: `check` whether to run a check (at
 * whole periods from the first check round on, and at the last round to record whether the target
 * was met), and `stopIfMet` whether a met check ends the run (whole periods before the last round).
 */
export function adaptiveStep(k: number, adaptive: AdaptivePlan, maxRounds: number): { check: boolean; stopIfMet: boolean } {
  const whole = k % adaptive.period === 0 && k >= adaptive.first_check_round;
  return { check: whole || k === maxRounds, stopIfMet: whole && k < maxRounds };
}
