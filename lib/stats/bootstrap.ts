/**
 * Bootstrap confidence intervals for the numbers ik publishes.
 *
 * Requests inside one round share the server's state (its clocks, caches, thermal drift), so
 * they are not independent: the round is the unit that is resampled (a cluster bootstrap). With
 * the few rounds a benchmark affords (3 to 10), a plain percentile interval from the resampled
 * statistic is too narrow: with 5 rounds it covers the truth about 81% of the time where 95% is
 * claimed. ik therefore uses a **t-scaled cluster bootstrap**: the bootstrap gives the standard
 * error of the statistic, and the interval is `estimate ± t(level, G − 1) · SE`, with G the number
 * of rounds; the t quantile pays for estimating the spread from G clusters. (A nested
 * studentized bootstrap would be more exact and costs resamples² work.) Ratios are handled on the
 * log scale, so their intervals are multiplicative and never cross zero.
 * @module
 */
import { median, nearestRankSorted } from "./percentile.ts";
import { SeededRng } from "./prng.ts";
import { tQuantile } from "./t_quantile.ts";

/** Resamples used when the caller does not say (the seeds' default). */
export const DEFAULT_RESAMPLES = 2000;

/** How an interval was made; recorded in every record's definitions. */
export const CI_METHOD_T_CLUSTER =
  "t-scaled cluster bootstrap: estimate ± t(0.975, rounds − 1) × bootstrap SE, rounds resampled with replacement; " +
  "never below the smallest observation (above the largest) where every one of the G rounds lying above (below) the percentile has a chance under 0.1 %";

/**
 * What the same interval is worth for a tail percentile, measured (`npm run bench:coverage`, 500
 * seeded repetitions of 3, 5 and 10 rounds of 8 requests, a normal round effect 0 to 3 × the
 * request noise): the median's covers 92–96 %, p95's 73–94 %, p99's 56–81 %. A few rounds' effects
 * spread less than the population's, so a tail read from them sits low, and a bootstrap that
 * resamples those same rounds cannot see it; and with fewer than 100 values a nearest-rank p99 is their maximum.
 */
export const CI_TAIL_COVERAGE =
  "the p95 and p99 intervals cover the truth less often than 95 %: 73–94 % (p95) and 56–81 % (p99) in simulation with 3–10 rounds of 8 requests, " +
  "lowest when rounds differ (bench:coverage); read them as the spread over these rounds, and the median's interval (92–96 %) as the one to rank by";

/** The chance under which the data rule a percentile out beyond their smallest or largest value. */
const RULED_OUT = 0.001;

/** Options shared by the interval functions. */
export interface BootstrapOptions {
  /** Bootstrap resamples (default 2000). */
  resamples?: number;
  /** Seed of the resampling stream (default 0); the same seed gives the same interval. */
  seed?: number;
  /** Two-sided confidence level (default 0.95). */
  level?: number;
}

/** A two-sided interval. */
export type Interval = [lo: number, hi: number];

/** Nearest-rank percentile of a sorted typed array (the first `n` entries), by the one definition. */
function rankOf(sorted: Float64Array, n: number, p: number): number {
  return nearestRankSorted(sorted, p, n) as number;
}

function sd(xs: Float64Array): number {
  let m = 0;
  for (let i = 0; i < xs.length; i++) m += xs[i];
  m /= xs.length;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += (xs[i] - m) ** 2;
  return Math.sqrt(s / Math.max(1, xs.length - 1));
}

/** Groups values by unit, keeping the order units first appear in. */
function clusters(values: readonly number[], units: readonly (string | number)[] | null): Float64Array[] {
  if (units === null) return values.map((v) => Float64Array.of(v));
  const by = new Map<string | number, number[]>();
  for (let i = 0; i < values.length; i++) {
    const g = by.get(units[i]);
    if (g) g.push(values[i]);
    else by.set(units[i], [values[i]]);
  }
  return [...by.values()].map((g) => Float64Array.from(g));
}

/**
 * Nearest-rank percentiles of `values` with their t-scaled cluster-bootstrap intervals.
 *
 * @param values the observations (non-finite ones are dropped, with their units)
 * @param units the cluster of each value (the round), or null to treat every value as its own unit
 *   (a per-request bootstrap: only right when requests are independent)
 * @param ps the percentiles wanted, e.g. [50, 95]
 * @returns per percentile the estimate and its interval (null with fewer than 2 clusters): estimate ±
 *   t × the resamples' SD, or, for positive data where that would reach 0, the same on the log scale
 *   (estimate × exp(± t × SD of the log resamples): a time or a rate never gets an interval below 0)
 * @example clusterBootstrapCi([10, 11, 12, 13], [0, 0, 1, 1], [50]) // {50: {value: 11, ci95: [..]}}
 */
export function clusterBootstrapCi(
  values: readonly number[],
  units: readonly (string | number)[] | null,
  ps: readonly number[],
  opts: BootstrapOptions = {},
): Record<number, { value: number | null; ci: Interval | null; clusters: number }> {
  if (units !== null && units.length !== values.length) {
    throw new RangeError(`bootstrap: ${values.length} values but ${units.length} units`);
  }
  const keep = values.map((v, i) => [v, units ? units[i] : i] as const).filter(([v]) => Number.isFinite(v));
  const groups = clusters(keep.map(([v]) => v), units ? keep.map(([, u]) => u) : null);
  const all = Float64Array.from(keep.map(([v]) => v)).sort();
  const out: Record<number, { value: number | null; ci: Interval | null; clusters: number }> = {};
  for (const p of ps) out[p] = { value: all.length ? rankOf(all, all.length, p) : null, ci: null, clusters: groups.length };
  if (groups.length < 2) return out;
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const t = tQuantile(1 - (1 - (opts.level ?? 0.95)) / 2, groups.length - 1);
  const rng = new SeededRng(opts.seed ?? 0, 0x626f6f74);
  let maxLen = 0;
  for (const g of groups) maxLen = Math.max(maxLen, g.length);
  const scratch = new Float64Array(maxLen * groups.length);
  const reps = ps.map(() => new Float64Array(resamples));
  for (let b = 0; b < resamples; b++) {
    let n = 0;
    for (let k = 0; k < groups.length; k++) {
      const g = groups[rng.int(groups.length)];
      scratch.set(g, n);
      n += g.length;
    }
    const s = scratch.subarray(0, n).sort();
    for (let j = 0; j < ps.length; j++) reps[j][b] = rankOf(s, n, ps[j]);
  }
  // Positive data (times, rates) cannot have a percentile ≤ 0: where the symmetric interval would
  // reach it (few, very different rounds), the same t-scaled interval is built on the log scale.
  // A percentile cannot lie where the data rule it out. Rounds are the independent units (requests
  // in a round share its drift), so with G rounds the population's p-th percentile lies below the
  // smallest observation only if every round's smallest did (each at most 1 − p: chance at most
  // (1 − p)^G), above the largest only if every round's largest fell below it (at most p^G). Where
  // that chance is under 0.1 %, the t interval (which from few rounds can reach below every
  // observation, even below the median, for a tail percentile) is clamped at that observation.
  const positive = all.length > 0 && all[0] > 0;
  const n = groups.length, last = all.length - 1;
  ps.forEach((p, j) => {
    const v = out[p].value as number;
    const half = t * sd(reps[j]);
    let lo: number, hi: number;
    if (positive && v - half <= 0) {
      const logHalf = t * sd(reps[j].map(Math.log));
      [lo, hi] = [v * Math.exp(-logHalf), v * Math.exp(logHalf)];
    } else [lo, hi] = [v - half, v + half];
    const q = p / 100;
    if ((1 - q) ** n < RULED_OUT) lo = Math.max(lo, all[0]);
    if (q ** n < RULED_OUT) hi = Math.min(hi, all[last]);
    out[p].ci = [lo, hi];
  });
  return out;
}

/**
 * The ratio median(other) / median(base) over paired rounds, with a t-scaled paired bootstrap
 * interval on the log scale (pairs are resampled together, so a round that was slow for both
 * engines does not widen the interval).
 * @param base the reference engine's per-round values (the best engine)
 * @param other the compared engine's values for the same rounds, in the same order
 * @returns the ratio, its interval (null with fewer than 2 pairs or a non-positive value) and the pair count
 */
export function pairedRatioCi(
  base: readonly number[],
  other: readonly number[],
  opts: BootstrapOptions = {},
): { ratio: number | null; ci: Interval | null; nPairs: number } {
  if (base.length !== other.length) throw new RangeError(`pairedRatioCi: ${base.length} base values but ${other.length} others`);
  const pairs = base.map((b, i) => [b, other[i]] as const).filter(([b, o]) => Number.isFinite(b) && Number.isFinite(o));
  const mb = median(pairs.map(([b]) => b));
  const mo = median(pairs.map(([, o]) => o));
  const ratio = mb !== null && mo !== null && mb !== 0 ? mo / mb : null;
  if (ratio === null || pairs.length < 2 || pairs.some(([b, o]) => !(b > 0 && o > 0))) return { ratio, ci: null, nPairs: pairs.length };
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const rng = new SeededRng(opts.seed ?? 0, 0x72617469);
  const bs: number[] = new Array(pairs.length);
  const os: number[] = new Array(pairs.length);
  const logs = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let k = 0; k < pairs.length; k++) {
      const [b, o] = pairs[rng.int(pairs.length)];
      bs[k] = b;
      os[k] = o;
    }
    logs[r] = Math.log((median(os) as number) / (median(bs) as number));
  }
  const half = tQuantile(1 - (1 - (opts.level ?? 0.95)) / 2, pairs.length - 1) * sd(logs);
  const l = Math.log(ratio);
  return { ratio, ci: [Math.exp(l - half), Math.exp(l + half)], nPairs: pairs.length };
}
