/**
 * The comparison of a rounds run (seed 001's `summarize`): per engine × bucket × metric, the
 * median over rounds with a 95% CI (each round one unit of the t-scaled cluster bootstrap), the
 * best engine, and every other engine's ratio to it with a paired t-scaled bootstrap CI on the
 * log scale over the rounds both completed. An engine with a failed request in a bucket is never
 * best there and gets no ratio: its latencies cover only the requests it answered.
 * @module
 */
import { CI_METHOD_T_CLUSTER, clusterBootstrapCi, DEFAULT_RESAMPLES, median, pairedRatioCi } from "../stats/mod.ts";
import { COUNT_METRICS, rankingDirection } from "./directions.ts";

/** One metric of one cell: the round's value (single mode: median over its requests). */
export interface CellMetric {
  /** The value. */
  value: number;
  /** Its unit, e.g. `ms`, `tok/s`, `requests`. */
  unit?: string | null;
  /** Requests behind it; for `failed_requests` the requests of the round in the bucket. */
  n?: number;
}

/** What the summary reads from one (round, engine) cell. */
export interface SummaryCell {
  /** Round, from 1. */
  round: number;
  /** Engine label. */
  label: string;
  /** Cell status; only `ok` cells are summarized. */
  status: string | null;
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
  /** The best engine in this bucket and metric, or null. */
  best: string | null;
  /** median(engine) / median(best) over the paired rounds; 1 for the best itself. */
  ratio_to_best: number | null;
  /** Paired 95% CI of the ratio; nulls for the best, with no ratio, or under 2 pairs. */
  ratio_ci95: [number | null, number | null];
  /** Rounds both engines completed. */
  n_pairs: number;
  /** Failed requests over all rounds in this bucket. */
  failed_requests: number;
  /** Why the engine is not ranked here (it had failures). */
  excluded_from_best?: string;
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
  const m = median(xs);
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
    ? "median over rounds of the per-round value from bench serve's capacity record (N*, and goodput, tok/s, p95 latencies and cost at N*) (derived)"
    : "median over rounds of the per-round value (median over that round's requests in the bucket, from bench serve's requests artifact) (observed)";
  return {
    median,
    ci95: `95% CI of that median, each round one unit: ${CI_METHOD_T_CLUSTER}; centred on the median, on the log scale ` +
      `where every round's value is positive (so it never crosses 0); none under ${MIN_ROUNDS_FOR_CI} rounds (${cls})`,
    ratio_to_best: "median(engine) / median(best engine) over rounds both completed, with a paired 95% CI: t-scaled " +
      "bootstrap on the log scale, estimate ± t(0.975, pairs − 1) × bootstrap SE, round pairs resampled together " +
      "(derived); best = lowest for latencies, highest for rates, among engines with no failed request in the bucket",
    failed_requests: "requests that failed in a round (median over rounds; 'total' sums them); an engine with any " +
      "failure in a bucket is never best there and gets no ratio",
  };
}

/**
 * Medians over rounds with t-scaled bootstrap CIs, best engines and paired ratios.
 * @param cells every cell of the run; cells not ok are skipped
 * @param labels the engines in report order
 */
export function summarize(cells: readonly SummaryCell[], labels: readonly string[], opts: SummarizeOptions = {}): RoundsSummary {
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const seed = opts.seed ?? 0;
  const key = (...parts: string[]) => JSON.stringify(parts);
  const values = new Map<string, Map<number, number>>();
  const units = new Map<string, string | null>();
  const requests = new Map<string, number>();
  const groups = new Map<string, [bucket: string, metric: string]>();
  for (const c of cells) {
    if (!STATUSES_OK.includes(c.status ?? "")) continue;
    for (const [bucket, mets] of Object.entries(c.metrics ?? {})) {
      for (const [name, m] of Object.entries(mets)) {
        if (typeof m?.value !== "number" || !Number.isFinite(m.value)) continue;
        const k = key(c.label, bucket, name);
        if (!values.has(k)) values.set(k, new Map());
        values.get(k)!.set(c.round, m.value);
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
  const rows: SummaryRow[] = [];
  const ordered = [...groups.values()].sort(([b1, m1], [b2, m2]) => (b1 < b2 ? -1 : b1 > b2 ? 1 : m1 < m2 ? -1 : m1 > m2 ? 1 : 0));
  for (const [bucket, name] of ordered) {
    const direction = rankingDirection(name);
    const present = labels.filter((l) => values.get(key(l, bucket, name))?.size);
    if (!present.length) continue;
    const byRound = new Map(present.map((l) => [l, values.get(key(l, bucket, name))!] as const));
    const medians = new Map(present.map((l) => [l, median([...byRound.get(l)!.values()]) as number] as const));
    const eligible = present.filter((l) => !failedIn(l, bucket));
    const best = direction !== null && eligible.length ? pickBest(eligible, medians, direction) : null;
    for (const label of present) {
      const mine = byRound.get(label)!;
      const rounds = [...mine.keys()].sort((a, b) => a - b);
      const xs = rounds.map((r) => mine.get(r) as number);
      const failed = failedIn(label, bucket);
      const row: SummaryRow = {
        engine: label, bucket, metric: name, unit: units.get(name) ?? null, higher_is_better: direction,
        median: medians.get(label)!, ci95: medianCi(xs, resamples, seed), n: xs.length, best,
        ratio_to_best: null, ratio_ci95: [null, null], n_pairs: 0, failed_requests: failed,
        by_round: Object.fromEntries(rounds.map((r) => [r, mine.get(r) as number])),
      };
      if (COUNT_METRICS.includes(name)) row.total = xs.reduce((s, x) => s + x, 0);
      if (failed && direction !== null) {
        row.excluded_from_best = `${failed} failed request(s) over ${xs.length} round(s): latencies cover only the answered requests`;
      } else if (best !== null) {
        const ref = byRound.get(best)!;
        const paired = rounds.filter((r) => ref.has(r));
        if (label === best) {
          row.ratio_to_best = 1;
          row.n_pairs = paired.length;
        } else if (paired.length) {
          const r = pairedRatioCi(paired.map((k) => ref.get(k) as number), paired.map((k) => mine.get(k) as number), { resamples, seed });
          row.ratio_to_best = r.ratio;
          row.ratio_ci95 = r.ci ? [r.ci[0], r.ci[1]] : [null, null];
          row.n_pairs = r.nPairs;
        }
      }
      rows.push(row);
    }
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
