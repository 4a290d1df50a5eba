/**
 * The comparison of a rounds run (seed 001's `summarize`): per engine × bucket × metric, the
 * median over rounds (nearest rank, the seeds' definition) with a 95% CI (each round one unit of
 * the t-scaled cluster bootstrap), the reference engine (best median), every other engine's ratio
 * to it with a paired t-scaled bootstrap CI on the log scale over the rounds both completed, and
 * the best engine only where those CIs exclude 1 ({@link referenceVerdict}). An engine with a
 * failed request in a bucket, or a [HARD GATE] cell, is never best there and gets no ratio. Load
 * mode: an N* at the top of the grid is a lower bound (`≥`), and a value "at N*" compared at
 * different N* says so.
 * @module
 */
import { CI_METHOD_T_CLUSTER, clusterBootstrapCi, DEFAULT_RESAMPLES, nearestRank, pairedRatioCi } from "../stats/mod.ts";
import { COUNT_METRICS, rankingDirection } from "./directions.ts";
import { MIN_PAIRS_FOR_VERDICT, readRatio, referenceVerdict } from "./verdict.ts";

/** The median every rounds figure uses: nearest rank (always an observed value), null when empty. */
export function roundsMedian(xs: readonly number[]): number | null {
  return nearestRank(xs, 50);
}

/** One metric of one cell: the round's value (single mode: median over its requests). */
export interface CellMetric {
  /** The value. */
  value: number;
  /** Its unit, e.g. `ms`, `tok/s`, `requests`. */
  unit?: string | null;
  /** Requests behind it; for `failed_requests` the requests of the round in the bucket. */
  n?: number;
  /** The value is a lower bound (an N* at the top of the load grid, or below an unjudged level). */
  lower_bound?: boolean;
}

/** What the summary reads from one (round, engine) cell. */
export interface SummaryCell {
  /** Round, from 1. */
  round: number;
  /** Engine label. */
  label: string;
  /** Cell status; `ok` cells are summarized, and measured cells that are not comparable (`hard_gate`) shown unranked. */
  status: string | null;
  /** Why the cell is not ok, for the not-comparable note. */
  detail?: string | null;
  /** `{bucket: {metric: value}}` for this round. */
  metrics?: Record<string, Record<string, CellMetric>>;
}

/** One row of the comparison table. */
export interface SummaryRow {
  engine: string;
  bucket: string;
  metric: string;
  unit: string | null;
  /** Ranking direction; null: never ranked. */
  higher_is_better: boolean | null;
  /** Median over rounds. */
  median: number;
  /** 95% CI of that median (log scale for positive quantities); nulls with fewer than 3 rounds. */
  ci95: [number | null, number | null];
  /** Rounds. */
  n: number;
  /** The engine with the best median among the ranked ones: the denominator of every ratio; null when none. */
  reference: string | null;
  /** The reference, only where every other ranked engine's ratio CI excludes 1 (3+ pairs); else null. */
  best: string | null;
  /** How this row reads: `best`, `worse`, `no clear difference …`, `too few rounds …`, `never ranked: …`. */
  verdict: string;
  /** median(engine) / median(reference) over the paired rounds; 1 for the reference itself. */
  ratio_to_best: number | null;
  /** Paired 95% CI of the ratio; nulls for the reference, with no ratio, or under 2 pairs. */
  ratio_ci95: [number | null, number | null];
  /** Rounds both engines completed. */
  n_pairs: number;
  /** Failed requests over all rounds in this bucket. */
  failed_requests: number;
  /** Why the engine is not ranked here (it had failures, or a [HARD GATE] cell). */
  excluded_from_best?: string;
  /** The median is a lower bound (`≥`): a round at or below it was (an N* at the top of the grid). */
  lower_bound?: boolean;
  /** Load mode, a value at N*: the engine's N* differs from the reference's, so the load differs. */
  n_star_note?: string;
  /** Sum over rounds, for the {@link COUNT_METRICS}. */
  total?: number;
  /** The per-round values (round → value). */
  by_round: Record<number, number>;
}

/** An engine × bucket with failed requests. */
export interface FailureRow {
  engine: string;
  bucket: string;
  failed_requests: number;
  /** Requests over the rounds, when the cells said. */
  requests: number | null;
  rounds: number;
}

/** What {@link summarize} returns (summary.json's `summary`). */
export interface RoundsSummary {
  rows: SummaryRow[];
  failures: FailureRow[];
  definitions: Record<string, string>;
}

/** Options of {@link summarize}. */
export interface SummarizeOptions {
  /** Bootstrap resamples (default 2000). */
  resamples?: number;
  /** Bootstrap seed (default 0): the same seed gives the same intervals. */
  seed?: number;
  /** `single` (values observed per round) or `load` (derived from capacity records). */
  mode?: "single" | "load";
}

/** The status a cell needs to be summarized. */
export const STATUSES_OK: readonly string[] = ["ok"];

/** Statuses of cells that were measured but are not comparable: summarized, never best, no ratio. */
export const NOT_COMPARABLE_STATUSES: readonly string[] = ["hard_gate"];

/** Fewest rounds for a median's interval: with 2, a t interval has one degree of freedom. */
export const MIN_ROUNDS_FOR_CI = 3;

/**
 * The median's CI: the t-scaled cluster bootstrap over rounds (each round one unit), centred on the
 * reported median. Times, rates and ratios are positive, so where every round's value is, the
 * interval is built on the log scale (median × exp(± half-width)) and can never cross zero; a
 * quantity that can be 0 (a count) keeps the symmetric interval, cut at 0. None under
 * {@link MIN_ROUNDS_FOR_CI} rounds.
 */
export function medianCi(xs: number[], resamples: number, seed: number): [number | null, number | null] {
  const m = roundsMedian(xs);
  if (xs.length < MIN_ROUNDS_FOR_CI || m === null) return [null, null];
  if (xs.every((x) => x > 0)) {
    const ci = clusterBootstrapCi(xs.map(Math.log), null, [50], { resamples, seed })[50].ci;
    if (!ci) return [null, null];
    const half = (ci[1] - ci[0]) / 2;
    return [m * Math.exp(-half), m * Math.exp(half)];
  }
  const ci = clusterBootstrapCi(xs, null, [50], { resamples, seed })[50].ci;
  if (!ci) return [null, null];
  const half = (ci[1] - ci[0]) / 2;
  const lo = m - half;
  return [xs.every((x) => x >= 0) ? Math.max(0, lo) : lo, m + half];
}

function pickBest(eligible: string[], medians: Map<string, number>, higher: boolean): string | null {
  let best: string | null = null;
  for (const label of eligible) {
    const m = medians.get(label) as number;
    if (best === null || (higher ? m > (medians.get(best) as number) : m < (medians.get(best) as number))) best = label;
  }
  return best;
}

/** The definitions block of summary.json: what each number is and how its CI was made. */
export function summaryDefinitions(mode: "single" | "load"): Record<string, string> {
  const cls = mode === "load" ? "derived" : "observed";
  const median = mode === "load"
    ? "nearest-rank median over rounds of the per-round value from bench serve's capacity record (N*, and goodput, tok/s, p95 latencies and cost at N*) (derived)"
    : "nearest-rank median over rounds of the per-round value (nearest-rank median over that round's requests in the bucket, from bench serve's requests artifact) (observed)";
  const defs: Record<string, string> = {
    median,
    ci95: `95% CI of that median, each round one unit: ${CI_METHOD_T_CLUSTER}; centred on the median, on the log scale ` +
      `where every round's value is positive (so it never crosses 0); none under ${MIN_ROUNDS_FOR_CI} rounds (${cls})`,
    ratio_to_best: "median(engine) / median(reference engine) over rounds both completed, with a paired 95% CI: t-scaled " +
      "bootstrap on the log scale, estimate ± t(0.975, pairs − 1) × bootstrap SE, round pairs resampled together " +
      "(derived); reference = the best median (lowest for latencies, highest for rates) among the engines with no failed " +
      "request in the bucket and no [HARD GATE] cell",
    best: `the reference, named only when every other ranked engine's ratio CI excludes 1 on the worse side with at least ` +
      `${MIN_PAIRS_FOR_VERDICT} round pairs (as compare reads a ratio); otherwise "no clear difference" (or "too few rounds")`,
    failed_requests: "requests that failed in a round (median over rounds; 'total' sums them); an engine with any " +
      "failure in a bucket is never best there and gets no ratio",
    hard_gate: "a cell whose resolved config contradicts the manifest's expect ([HARD GATE]) is shown but never ranked",
  };
  if (mode === "load") {
    defs.lower_bound = "≥: an N* at the top of the load grid (or below a level that was not judged) is a lower bound, and so is a median with such a round at or below it";
    defs.n_star_note = "a value at N* is measured at each engine's own N*: where the N* differ, the engines carried different loads";
  }
  return defs;
}

/** engine / reference over paired rounds: nearest-rank medians, the paired CI centred on that ratio. */
function pairedRatio(ref: number[], mine: number[], resamples: number, seed: number): { ratio: number | null; ci: [number | null, number | null]; nPairs: number } {
  const r = pairedRatioCi(ref, mine, { resamples, seed });
  const mr = roundsMedian(ref), mm = roundsMedian(mine);
  const ratio = mr !== null && mm !== null && mr !== 0 ? mm / mr : null;
  // The interval is estimate × exp(± t × SE) on the log scale: the same SE around this estimate.
  const ci: [number | null, number | null] = r.ci && ratio !== null && r.ratio ? [r.ci[0] * ratio / r.ratio, r.ci[1] * ratio / r.ratio] : [null, null];
  return { ratio, ci, nPairs: r.nPairs };
}

const STAR_METRICS = ["n_star", "rate_star_rps"];

/**
 * Medians over rounds with t-scaled bootstrap CIs, reference engines, paired ratios and verdicts.
 * @param cells every cell of the run; cells neither ok nor measured-but-not-comparable are skipped
 * @param labels the engines in report order
 */
export function summarize(cells: readonly SummaryCell[], labels: readonly string[], opts: SummarizeOptions = {}): RoundsSummary {
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const seed = opts.seed ?? 0;
  const key = (...parts: string[]) => JSON.stringify(parts);
  const values = new Map<string, Map<number, number>>();
  const bounds = new Map<string, Set<number>>();
  const units = new Map<string, string | null>();
  const requests = new Map<string, number>();
  const groups = new Map<string, [bucket: string, metric: string]>();
  const gated = new Map<string, string>();
  for (const c of cells) {
    const notComparable = NOT_COMPARABLE_STATUSES.includes(c.status ?? "");
    if (!STATUSES_OK.includes(c.status ?? "") && !notComparable) continue;
    if (notComparable && !gated.has(c.label)) gated.set(c.label, `${c.status} in round ${c.round}${c.detail ? `: ${c.detail}` : ""}`);
    for (const [bucket, mets] of Object.entries(c.metrics ?? {})) {
      for (const [name, m] of Object.entries(mets)) {
        if (typeof m?.value !== "number" || !Number.isFinite(m.value)) continue;
        const k = key(c.label, bucket, name);
        if (!values.has(k)) values.set(k, new Map());
        values.get(k)!.set(c.round, m.value);
        if (m.lower_bound) (bounds.get(k) ?? bounds.set(k, new Set()).get(k)!).add(c.round);
        if (!units.has(name)) units.set(name, m.unit ?? null);
        groups.set(key(bucket, name), [bucket, name]);
        if (name === "failed_requests" && typeof m.n === "number") {
          requests.set(key(c.label, bucket), (requests.get(key(c.label, bucket)) ?? 0) + m.n);
        }
      }
    }
  }
  const failedIn = (label: string, bucket: string) => {
    const v = values.get(key(label, bucket, "failed_requests"));
    return v ? [...v.values()].reduce((s, x) => s + x, 0) : 0;
  };
  const medianOf = (k: string) => {
    const v = values.get(k);
    return v?.size ? roundsMedian([...v.values()]) : null;
  };
  // A median is a lower bound when a round whose value is one lies at or below it.
  const isBound = (k: string, med: number) => [...(bounds.get(k) ?? [])].some((r) => (values.get(k)!.get(r) as number) <= med);
  const starOf = (label: string, bucket: string) => {
    for (const m of STAR_METRICS) {
      const x = medianOf(key(label, bucket, m));
      if (x !== null) return { metric: m, value: x, bound: isBound(key(label, bucket, m), x) };
    }
    return null;
  };
  const rows: SummaryRow[] = [];
  const ordered = [...groups.values()].sort(([b1, m1], [b2, m2]) => (b1 < b2 ? -1 : b1 > b2 ? 1 : m1 < m2 ? -1 : m1 > m2 ? 1 : 0));
  for (const [bucket, name] of ordered) {
    const direction = rankingDirection(name);
    const present = labels.filter((l) => values.get(key(l, bucket, name))?.size);
    if (!present.length) continue;
    const byRound = new Map(present.map((l) => [l, values.get(key(l, bucket, name))!] as const));
    const medians = new Map(present.map((l) => [l, medianOf(key(l, bucket, name)) as number] as const));
    const eligible = present.filter((l) => !failedIn(l, bucket) && !gated.has(l));
    const reference = direction !== null && eligible.length ? pickBest(eligible, medians, direction) : null;
    const groupRows: SummaryRow[] = [];
    for (const label of present) {
      const mine = byRound.get(label)!;
      const rounds = [...mine.keys()].sort((a, b) => a - b);
      const xs = rounds.map((r) => mine.get(r) as number);
      const failed = failedIn(label, bucket);
      const row: SummaryRow = {
        engine: label, bucket, metric: name, unit: units.get(name) ?? null, higher_is_better: direction,
        median: medians.get(label)!, ci95: medianCi(xs, resamples, seed), n: xs.length, reference, best: null,
        verdict: direction === null ? "not ranked" : "", ratio_to_best: null, ratio_ci95: [null, null], n_pairs: 0, failed_requests: failed,
        by_round: Object.fromEntries(rounds.map((r) => [r, mine.get(r) as number])),
      };
      if (COUNT_METRICS.includes(name)) row.total = xs.reduce((s, x) => s + x, 0);
      if (isBound(key(label, bucket, name), row.median)) row.lower_bound = true;
      if (direction !== null && gated.has(label)) {
        row.excluded_from_best = `not comparable: ${gated.get(label)}`;
        row.verdict = "never ranked: [HARD GATE]";
      } else if (failed && direction !== null) {
        row.excluded_from_best = `${failed} failed request(s) over ${xs.length} round(s): latencies cover only the answered requests`;
        row.verdict = "never ranked: failed requests";
      } else if (reference !== null) {
        const ref = byRound.get(reference)!;
        const paired = rounds.filter((r) => ref.has(r));
        if (label === reference) {
          row.ratio_to_best = 1;
          row.n_pairs = paired.length;
        } else if (paired.length) {
          const r = pairedRatio(paired.map((k) => ref.get(k) as number), paired.map((k) => mine.get(k) as number), resamples, seed);
          row.ratio_to_best = r.ratio;
          row.ratio_ci95 = r.ci;
          row.n_pairs = r.nPairs;
        }
        if (label !== reference) row.verdict = readRatio(row.ratio_ci95, direction, row.n_pairs);
      }
      if (name.endsWith("_at_n_star") && reference !== null && label !== reference) {
        const a = starOf(label, bucket), b = starOf(reference, bucket);
        if (a && b && (a.value !== b.value || a.bound !== b.bound)) {
          const show = (x: { value: number; bound: boolean }) => `${x.bound ? "≥ " : ""}${x.value}`;
          row.n_star_note = `at different N*: ${label} ${show(a)}, ${reference} ${show(b)}; each value is at the engine's own N*, so the loads differ`;
        }
      }
      groupRows.push(row);
    }
    const refRow = groupRows.find((r) => r.engine === reference);
    if (refRow) {
      const v = referenceVerdict(groupRows.filter((r) => r !== refRow && !r.excluded_from_best).map((r) => [r.engine, readRatio(r.ratio_ci95, direction, r.n_pairs)] as const));
      refRow.verdict = v.verdict;
      if (v.best) for (const r of groupRows) r.best = reference;
    }
    rows.push(...groupRows);
  }
  const failures: FailureRow[] = [];
  for (const [k, v] of values) {
    const [label, bucket, name] = JSON.parse(k) as string[];
    const total = [...v.values()].reduce((s, x) => s + x, 0);
    if (name !== "failed_requests" || !total) continue;
    failures.push({ engine: label, bucket, failed_requests: total, requests: requests.get(key(label, bucket)) ?? null, rounds: v.size });
  }
  failures.sort((a, b) => (a.engine < b.engine ? -1 : a.engine > b.engine ? 1 : a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
  return { rows, failures, definitions: summaryDefinitions(opts.mode ?? "single") };
}
