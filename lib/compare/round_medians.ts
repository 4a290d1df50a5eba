/**
 * Per-round values of a single-mode record, read from its request rows: for every bucket (and
 * `all`), every metric and every round, the median over that round's ok requests; and the
 * failures per bucket. The round is the unit a paired comparison resamples, as in
 * lib/rounds/summary.ts, so the rows are the source, not the record's pooled summary. Pure.
 * @module
 */
import { median } from "../stats/mod.ts";

/** Metrics compared, with their units (the single-mode row fields). */
export const COMPARE_METRICS: readonly (readonly [name: string, unit: string])[] = [
  ["ttft_ms", "ms"],
  ["tpot_ms", "ms"],
  ["decode_tok_s", "tok/s"],
  ["e2e_ms", "ms"],
];

/** The bucket every request belongs to as well as its own. */
export const ALL_BUCKET = "all";

/** What {@link roundMedians} returns. */
export interface RoundMedians {
  /** The buckets seen, in first-seen order, then `all`. */
  buckets: string[];
  /** `bucket → metric → round → median over that round's ok requests`. */
  values: Map<string, Map<string, Map<number, number>>>;
  /** `bucket → {failed, total}` over every round. */
  failures: Map<string, { failed: number; total: number }>;
  /** The rounds that have at least one row, ascending. */
  rounds: number[];
  /** `bucket → what its ok rows say about their token counts` (see {@link TokenFacts}). */
  tokens: Map<string, TokenFacts>;
}

/** How a bucket's ok rows counted their output tokens. */
export interface TokenFacts {
  /** `n_tokens` of every ok row. */
  nTokens: number[];
  /** Ok rows whose first event's token count was assumed 1 (`k_first_assumed`: no ids said it). */
  kFirstAssumed: number;
  /** `token_count_method` values seen. */
  methods: Set<string>;
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * Medians per bucket, metric and round.
 * @param rows request rows (`round`, `bucket`, `ok` and the metric fields); rows without an
 *   integer `round` are skipped
 * @param bucketOrder buckets to list first, in this order (the record's own order)
 */
export function roundMedians(rows: readonly Record<string, unknown>[], bucketOrder: readonly string[] = []): RoundMedians {
  const byBucketRound = new Map<string, Map<number, Record<string, unknown>[]>>();
  const failures = new Map<string, { failed: number; total: number }>();
  const tokens = new Map<string, TokenFacts>();
  const seen: string[] = [];
  const rounds = new Set<number>();
  for (const r of rows) {
    const round = r.round;
    if (typeof round !== "number" || !Number.isInteger(round)) continue;
    rounds.add(round);
    const own = r.bucket === undefined || r.bucket === null ? ALL_BUCKET : String(r.bucket);
    if (own !== ALL_BUCKET && !seen.includes(own)) seen.push(own);
    for (const b of own === ALL_BUCKET ? [ALL_BUCKET] : [own, ALL_BUCKET]) {
      const f = failures.get(b) ?? { failed: 0, total: 0 };
      f.total++;
      if (r.ok !== true) f.failed++;
      failures.set(b, f);
      if (r.ok !== true) continue;
      const t = tokens.get(b) ?? { nTokens: [], kFirstAssumed: 0, methods: new Set<string>() };
      tokens.set(b, t);
      if (finite(r.n_tokens)) t.nTokens.push(r.n_tokens);
      if (r.k_first_assumed === true) t.kFirstAssumed++;
      if (typeof r.token_count_method === "string") t.methods.add(r.token_count_method);
      const perRound = byBucketRound.get(b) ?? new Map<number, Record<string, unknown>[]>();
      byBucketRound.set(b, perRound);
      const list = perRound.get(round) ?? [];
      list.push(r);
      perRound.set(round, list);
    }
  }
  const ordered = [...bucketOrder.filter((b) => b !== ALL_BUCKET && seen.includes(b)), ...seen.filter((b) => !bucketOrder.includes(b))];
  const buckets = failures.has(ALL_BUCKET) ? [...ordered, ALL_BUCKET] : ordered;
  const values = new Map<string, Map<string, Map<number, number>>>();
  for (const b of buckets) {
    const mets = new Map<string, Map<number, number>>();
    for (const [name] of COMPARE_METRICS) {
      const perRound = new Map<number, number>();
      for (const [round, list] of [...(byBucketRound.get(b) ?? new Map()).entries()].sort((x, y) => x[0] - y[0])) {
        const m = median(list.map((r: Record<string, unknown>) => r[name]).filter(finite));
        if (m !== null) perRound.set(round, m);
      }
      mets.set(name, perRound);
    }
    values.set(b, mets);
  }
  return { buckets, values, failures, rounds: [...rounds].sort((a, b) => a - b), tokens };
}
