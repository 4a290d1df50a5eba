/**
 * `ik compare A B` as a pure function: two single-mode records that asked the same requests,
 * paired round by round. Per bucket and metric: each record's median over rounds of the per-round
 * medians, the ratio B / A of those medians, and a paired t-scaled bootstrap CI of the ratio on the
 * log scale (lib/stats `pairedRatioCi`), over the round indexes both records have. A round that
 * was slow for both does not widen the interval. The seed is fixed (default 0), so the same two
 * records always give the same interval.
 * @module
 */
import { CI_METHOD_T_CLUSTER, DEFAULT_RESAMPLES, median, pairedRatioCi } from "../stats/mod.ts";
import { higherIsBetter } from "../rounds/directions.ts";
import { COMPARE_METRICS, type RoundMedians, roundMedians, type TokenFacts } from "./round_medians.ts";

/** One side of a comparison. */
export interface CompareSide {
  /** The record. */
  record: Record<string, unknown>;
  /** Its request rows. */
  rows: readonly Record<string, unknown>[];
}

/** What a row's medians are over. */
export type MedianBasis = "paired rounds" | "own rounds";

/** One bucket × metric of the comparison. */
export interface CompareRow {
  bucket: string;
  metric: string;
  unit: string;
  /** True for rates, false for latencies. */
  higher_is_better: boolean | null;
  /**
   * Median over A's paired rounds of its per-round medians; where no round pairs (one side has no
   * ok request in the bucket), over A's own rounds ({@link CompareRow.median_basis}).
   */
  a_median: number | null;
  /** The same for B. */
  b_median: number | null;
  /** Rounds behind a_median. */
  a_rounds: number;
  /** Rounds behind b_median. */
  b_rounds: number;
  /** What the medians are over: `paired rounds`, or each side's `own rounds` where none pair. */
  median_basis: MedianBasis;
  /** b_median / a_median. */
  ratio: number | null;
  /** Paired 95% CI of the ratio; nulls under 2 pairs. */
  ratio_ci95: [number | null, number | null];
  /** Rounds both records have for this bucket and metric. */
  n_pairs: number;
  /**
   * `B better`, `B worse`, `no clear difference` (the CI holds 1), `n/a`, or `not ranked: …`
   * where the two sides did not measure the same thing (failed requests, tokens counted another
   * way, other output lengths): the ratio is kept, for information only.
   */
  reading: string;
  /** Per round: [A, B]. */
  by_round: Record<number, [number, number]>;
}

/** A bucket with failed requests in either record. */
export interface CompareFailure {
  bucket: string;
  a_failed: number;
  a_requests: number;
  b_failed: number;
  b_requests: number;
}

/** What {@link compareRecords} returns (the `--json` object's core). */
export interface Comparison {
  rows: CompareRow[];
  failures: CompareFailure[];
  /** Round indexes of A, of B, and those both have. */
  rounds: { a: number[]; b: number[]; paired: number[] };
  resamples: number;
  seed: number;
  definitions: Record<string, string>;
  /** Why readings were not ranked, one line per bucket and cause. */
  cautions: string[];
}

/** Options of {@link compareRecords}. */
export interface CompareOptions {
  /** Bootstrap resamples (default 2000). */
  resamples?: number;
  /** Bootstrap seed (default 0). */
  seed?: number;
}

function bucketOrder(record: Record<string, unknown>): string[] {
  const data = record.data as { buckets?: Record<string, unknown> } | undefined;
  return data?.buckets && typeof data.buckets === "object" ? Object.keys(data.buckets) : [];
}

/** Fewest paired rounds from which compare reads a difference (with 2, a t interval has 1 degree of freedom). */
export const MIN_PAIRS_FOR_VERDICT = 3;

/**
 * How a ratio reads: which record is better, when the interval excludes 1 and at least
 * {@link MIN_PAIRS_FOR_VERDICT} round pairs stand behind it; "too few rounds" below that.
 */
export function readRatio(ci: [number | null, number | null], higher: boolean | null, nPairs = MIN_PAIRS_FOR_VERDICT): string {
  const [lo, hi] = ci;
  if (nPairs < MIN_PAIRS_FOR_VERDICT && nPairs > 0) return "too few rounds";
  if (lo === null || hi === null || higher === null) return "n/a";
  if (lo <= 1 && hi >= 1) return "no clear difference";
  const bHigher = lo > 1;
  return bHigher === higher ? "B better" : "B worse";
}

/** The definitions printed with every comparison. */
export const COMPARE_DEFINITIONS: Readonly<Record<string, string>> = {
  per_round_value: "median over the round's ok requests in the bucket, from each record's requests artifact (observed)",
  median: "median over the paired rounds of those per-round values (observed); where no round pairs (no round has a value on both sides: one side has no ok request in the bucket, or the two measured it in different rounds), each side's median is over its own rounds (median_basis 'own rounds') and no ratio is given",
  ratio: "median(B) / median(A) over the rounds both records have, paired by round index (derived)",
  ratio_ci95: "paired t-scaled bootstrap on the log scale: log ratio ± t(0.975, pairs − 1) × bootstrap SE, round pairs resampled together (derived)",
  reading: "B better / B worse when the 95% CI excludes 1 and at least 3 round pairs stand behind it (lower is better for latencies, higher for tok/s); no clear difference otherwise; too few rounds under 3 pairs",
  failures: "failed requests are left out of every latency: a record with failures in a bucket is measured on the requests it answered, so the bucket is not ranked (a fast error is not a fast answer); the reading names a side that failed every request there",
  not_ranked: "a reading is 'not ranked' where the sides did not measure the same thing: failed requests in the bucket; TPOT and decode tok/s where one side counted tokens from ids and the other assumed the first event held one token, or counted events; e2e where the median output lengths differ by more than 5 %",
  round_ci_unit: CI_METHOD_T_CLUSTER,
};

/** Median output lengths further apart than this (relative) make e2e times incomparable. */
const OUTPUT_LENGTH_TOLERANCE = 0.05;

const medianOf = (xs: readonly number[]): number | null => median([...xs]);

/** Whether one side's token counts rest on an assumption or on events that the other side's do not. */
function countedDifferently(a: TokenFacts | undefined, b: TokenFacts | undefined): string | null {
  if (!a || !b) return null;
  const assumedA = a.kFirstAssumed > 0, assumedB = b.kFirstAssumed > 0;
  if (assumedA !== assumedB) return `${assumedA ? "A" : "B"} assumed its first token event held one token (no token ids), the other counted from ids`;
  const eventsA = a.methods.has("sse_events"), eventsB = b.methods.has("sse_events");
  if (eventsA !== eventsB) return `${eventsA ? "A" : "B"} counted token events, not tokens (methods A ${[...a.methods].join("/")}, B ${[...b.methods].join("/")})`;
  return null;
}

/** Whether the two sides' median output lengths differ past {@link OUTPUT_LENGTH_TOLERANCE}. */
function lengthsDiffer(a: TokenFacts | undefined, b: TokenFacts | undefined): string | null {
  const ma = a ? medianOf(a.nTokens) : null, mb = b ? medianOf(b.nTokens) : null;
  if (ma === null || mb === null) return null;
  if (Math.abs(ma - mb) <= OUTPUT_LENGTH_TOLERANCE * Math.max(ma, mb)) return null;
  return `median output length A ${ma}, B ${mb} tokens`;
}

/** `failed requests`, naming a side that failed every request in the bucket; null without failures. */
function failedWhy(bucket: string, ma: RoundMedians, mb: RoundMedians): string | null {
  const fa = ma.failures.get(bucket), fb = mb.failures.get(bucket);
  if (!fa?.failed && !fb?.failed) return null;
  const all = ([["A", fa], ["B", fb]] as const).filter(([, f]) => f && f.total > 0 && f.failed === f.total).map(([side, f]) => `${side} failed all ${f!.total} requests`);
  return `failed requests${all.length ? ` (${all.join(", ")})` : ""}`;
}

/** Why a bucket × metric is not ranked, or null. */
function notRankedWhy(bucket: string, metric: string, ma: RoundMedians, mb: RoundMedians): string | null {
  const failed = failedWhy(bucket, ma, mb);
  if (failed) return failed;
  const ta = ma.tokens.get(bucket), tb = mb.tokens.get(bucket);
  if ((metric === "tpot_ms" || metric === "decode_tok_s") && countedDifferently(ta, tb)) return "tokens counted differently";
  if (metric === "e2e_ms" && lengthsDiffer(ta, tb)) return "output lengths differ";
  return null;
}

/** One line per bucket and cause of a `not ranked` reading. */
function cautionsOf(buckets: readonly string[], ma: RoundMedians, mb: RoundMedians): string[] {
  const out: string[] = [];
  for (const bucket of buckets) {
    const ta = ma.tokens.get(bucket), tb = mb.tokens.get(bucket);
    const counted = countedDifferently(ta, tb);
    if (counted) out.push(`${bucket}: TPOT and decode tok/s not ranked: ${counted}`);
    const lengths = lengthsDiffer(ta, tb);
    if (lengths) out.push(`${bucket}: e2e not ranked: ${lengths} (a shorter answer is not a faster engine)`);
  }
  return out;
}

/**
 * Compares B against A.
 * @returns rows in bucket order (A's buckets, then B's new ones, `all` last) × metric
 */
export function compareRecords(a: CompareSide, b: CompareSide, opts: CompareOptions = {}): Comparison {
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const seed = opts.seed ?? 0;
  const ma = roundMedians(a.rows, bucketOrder(a.record));
  const mb = roundMedians(b.rows, [...ma.buckets, ...bucketOrder(b.record)]);
  const buckets = [...ma.buckets.filter((x) => x !== "all"), ...mb.buckets.filter((x) => x !== "all" && !ma.buckets.includes(x))];
  if (ma.buckets.includes("all") || mb.buckets.includes("all")) buckets.push("all");
  const rows: CompareRow[] = [];
  for (const bucket of buckets) {
    for (const [metric, unit] of COMPARE_METRICS) {
      const va = ma.values.get(bucket)?.get(metric) ?? new Map<number, number>();
      const vb = mb.values.get(bucket)?.get(metric) ?? new Map<number, number>();
      if (!va.size && !vb.size) continue;
      const paired = [...va.keys()].filter((k) => vb.has(k)).sort((x, y) => x - y);
      const xa = paired.map((k) => va.get(k) as number), xb = paired.map((k) => vb.get(k) as number);
      const higher = higherIsBetter(metric);
      const r = paired.length ? pairedRatioCi(xa, xb, { resamples, seed }) : { ratio: null, ci: null, nPairs: 0 };
      const ci: [number | null, number | null] = r.ci ? [r.ci[0], r.ci[1]] : [null, null];
      // With no round pairs, each side's own rounds still say what it measured (one side failing a whole bucket must not hide the other's numbers).
      const own = paired.length === 0;
      const ownA = own ? [...va.values()] : xa, ownB = own ? [...vb.values()] : xb;
      const why = notRankedWhy(bucket, metric, ma, mb);
      rows.push({
        bucket, metric, unit, higher_is_better: higher,
        a_median: median(ownA), b_median: median(ownB), a_rounds: ownA.length, b_rounds: ownB.length,
        median_basis: own ? "own rounds" : "paired rounds", ratio: r.ratio, ratio_ci95: ci, n_pairs: r.nPairs,
        reading: why ? `not ranked: ${why}` : readRatio(ci, higher, r.nPairs),
        by_round: Object.fromEntries(paired.map((k, i) => [k, [xa[i], xb[i]]])),
      });
    }
  }
  const failures: CompareFailure[] = [];
  for (const bucket of buckets) {
    const fa = ma.failures.get(bucket) ?? { failed: 0, total: 0 }, fb = mb.failures.get(bucket) ?? { failed: 0, total: 0 };
    if (fa.failed || fb.failed) failures.push({ bucket, a_failed: fa.failed, a_requests: fa.total, b_failed: fb.failed, b_requests: fb.total });
  }
  return {
    rows, failures,
    rounds: { a: ma.rounds, b: mb.rounds, paired: ma.rounds.filter((k) => mb.rounds.includes(k)) },
    resamples, seed, definitions: { ...COMPARE_DEFINITIONS },
    cautions: cautionsOf(buckets, ma, mb),
  };
}
