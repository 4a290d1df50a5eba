/** lib/stats: t quantiles, seeded resampling, cluster and paired-ratio bootstrap intervals. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { clusterBootstrapCi, median, normalQuantile, pairedRatioCi, SeededRng, tQuantile } from "../../lib/stats/mod.ts";

describe("quantiles", () => {
  test("normal and t quantiles against tables", () => {
    assert.ok(Math.abs(normalQuantile(0.975) - 1.959964) < 1e-6);
    assert.ok(Math.abs(normalQuantile(0.01) + 2.326348) < 1e-6);
    for (const [df, q] of [[1, 12.706], [2, 4.303], [4, 2.776], [9, 2.262], [29, 2.045], [40, 2.021], [120, 1.980]]) {
      assert.ok(Math.abs(tQuantile(0.975, df) - q) < 0.005, `t(0.975, ${df}) = ${tQuantile(0.975, df)}, table ${q}`);
    }
    assert.ok(Math.abs(tQuantile(0.95, 5) - 2.015) < 0.01);
    assert.equal(tQuantile(0.025, 4), -tQuantile(0.975, 4));
  });
});

describe("SeededRng", () => {
  test("the same seed gives the same stream; another seed another", () => {
    const a = new SeededRng(7, 1), b = new SeededRng(7, 1), c = new SeededRng(7, 2);
    const xs = Array.from({ length: 5 }, () => a.next());
    assert.deepEqual(Array.from({ length: 5 }, () => b.next()), xs);
    assert.notDeepEqual(Array.from({ length: 5 }, () => c.next()), xs);
    assert.ok(xs.every((x) => x >= 0 && x < 1));
  });
});

describe("clusterBootstrapCi", () => {
  const vals = [10, 11, 12, 30, 31, 32, 20, 21, 22];
  const rounds = [0, 0, 0, 1, 1, 1, 2, 2, 2];
  test("nearest-rank estimate, an interval around it, reproducible by seed", () => {
    const a = clusterBootstrapCi(vals, rounds, [50, 95], { seed: 3 });
    assert.equal(a[50].value, 21);
    assert.equal(a[95].value, 32);
    const [lo, hi] = a[50].ci!;
    assert.ok(lo < 21 && 21 < hi);
    assert.deepEqual(clusterBootstrapCi(vals, rounds, [50, 95], { seed: 3 }), a);
    assert.notDeepEqual(clusterBootstrapCi(vals, rounds, [50], { seed: 4 })[50].ci, a[50].ci);
  });
  test("rounds as the unit: a between-round spread widens the interval beyond a per-request one", () => {
    const cluster = clusterBootstrapCi(vals, rounds, [50])[50].ci!;
    const naive = clusterBootstrapCi(vals, null, [50])[50].ci!;
    assert.ok(cluster[1] - cluster[0] > 2 * (naive[1] - naive[0]), `${cluster} vs ${naive}`);
  });
  test("fewer than two rounds: no interval; non-finite values are dropped", () => {
    assert.equal(clusterBootstrapCi([1, 2, 3], [0, 0, 0], [50])[50].ci, null);
    assert.equal(clusterBootstrapCi([], null, [50])[50].value, null);
    assert.equal(clusterBootstrapCi([1, NaN, 3, 5], [0, 0, 1, 1], [50])[50].value, 3);
    assert.throws(() => clusterBootstrapCi([1, 2], [0], [50]), /2 values but 1 units/);
  });

  test("positive data never gets an interval reaching 0: two very different rounds get the t interval on the log scale", () => {
    // Round 0 answered in ~5 ms, round 1 in ~400 ms: estimate ± t(1 df) × SD would go far below 0.
    const values = [5, 5.1, 4.9, 5, 400, 410, 390, 405];
    const units = [0, 0, 0, 0, 1, 1, 1, 1];
    const r = clusterBootstrapCi(values, units, [50, 95], { resamples: 500, seed: 3 });
    for (const p of [50, 95]) {
      const ci = r[p].ci!;
      assert.ok(ci[0] > 0, `p${p}: ${ci}`);
      assert.ok(ci[0] <= (r[p].value as number) && (r[p].value as number) <= ci[1], `p${p}: ${r[p].value} in ${ci}`);
      // Still t-scaled (1 degree of freedom): far wider than the data, but positive.
      assert.ok(ci[1] > 410, `p${p}: ${ci}`);
    }
    // Data that can be 0 or negative keeps the symmetric interval.
    const signed = clusterBootstrapCi(values.map((v) => v - 200), units, [50], { resamples: 500, seed: 3 })[50].ci!;
    assert.ok(signed[0] < -400, `${signed}`);
  });
});

describe("clusterBootstrapCi where the data rule a value out", () => {
  test("a tail percentile from 5 rounds never gets an interval below the smallest observation (it reached below the median)", () => {
    // 5 rounds of 8 requests near 31 ms, one round with two slow ones: the p95 resamples swing
    // between ~31 and ~450 ms, and estimate − t × SD lands far below every observation.
    const values: number[] = [], units: number[] = [];
    for (let r = 0; r < 5; r++) {
      for (let i = 0; i < 8; i++) {
        values.push(r === 2 && i < 2 ? 450 + i : 31 + 0.1 * i + 0.05 * r);
        units.push(r);
      }
    }
    const out = clusterBootstrapCi(values, units, [50, 95, 99]);
    const min = Math.min(...values);
    for (const p of [50, 95, 99]) {
      const [lo, hi] = out[p].ci!;
      assert.ok(lo >= min, `p${p}: lower ${lo} below the smallest observation ${min}`);
      assert.ok(lo <= (out[p].value as number) && (out[p].value as number) <= hi, `p${p}: the estimate inside its interval`);
    }
    // The median's interval may not pass the largest observation (0.5^40 rules that out); the p99's
    // upper end may (0.99^40 ≈ 67 %: the sample's largest value is no bound on the population's p99).
    assert.ok(out[50].ci![1] <= Math.max(...values));
  });
});

describe("clusterBootstrapCi: the clamp counts rounds, not requests", () => {
  test("rounds that drift together (100 requests each): 2 rounds' p50 intervals still cover the truth (a per-request clamp cut them to 76 %)", () => {
    const rng = new SeededRng(12345);
    const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
    let cover = 0;
    const trials = 150;
    for (let t = 0; t < trials; t++) {
      const v: number[] = [], g: number[] = [];
      for (let r = 0; r < 2; r++) {
        const drift = 0.3 * gauss();
        for (let i = 0; i < 100; i++) {
          v.push(100 * Math.exp(drift + 0.05 * gauss()));
          g.push(r);
        }
      }
      const [lo, hi] = clusterBootstrapCi(v, g, [50], { resamples: 300, seed: t })[50].ci!;
      if (lo <= 100 && hi >= 100) cover++;
    }
    assert.ok(cover / trials >= 0.86, `covered ${cover} of ${trials}`);
  });
});

describe("pairedRatioCi", () => {
  test("ratio of medians, an interval on the log scale, pairs resampled together", () => {
    const base = [100, 120, 90, 110, 105];
    const other = base.map((b) => b * 1.5); // a round slow for one is slow for both
    const r = pairedRatioCi(base, other);
    assert.equal(r.nPairs, 5);
    assert.ok(Math.abs(r.ratio! - 1.5) < 1e-12);
    assert.ok(Math.abs(r.ci![0] - 1.5) < 1e-9 && Math.abs(r.ci![1] - 1.5) < 1e-9, `perfectly paired: ${r.ci}`);
    const noisy = pairedRatioCi(base, [150, 170, 140, 170, 160]);
    assert.ok(noisy.ci![0] < noisy.ratio! && noisy.ratio! < noisy.ci![1]);
    assert.ok(Math.abs(Math.log(noisy.ci![1] / noisy.ratio!) - Math.log(noisy.ratio! / noisy.ci![0])) < 1e-9, "symmetric in log");
  });
  test("no interval for one pair or a non-positive value; mismatched lengths throw", () => {
    assert.equal(pairedRatioCi([1], [2]).ci, null);
    assert.equal(pairedRatioCi([1, 0], [2, 3]).ci, null);
    assert.throws(() => pairedRatioCi([1, 2], [1]), /2 base values but 1 others/);
    assert.equal(median([4, 1, 3, 2]), 2, "nearest rank: the lower middle value, not the mean of the two");
  });
});

describe("orderStatisticCi", () => {
  test("brackets the quantile by binomial ranks; covers the truth about 95% of the time", async () => {
    const { orderStatisticCi } = await import("../../lib/stats/mod.ts");
    assert.equal(orderStatisticCi([1, 2, 3], 95), null);
    const rng = new SeededRng(3);
    let hit = 0;
    for (let r = 0; r < 400; r++) {
      const xs = Float64Array.from({ length: 400 }, () => rng.next()).sort();
      const ci = orderStatisticCi(xs, 95)!;
      if (ci[0] <= 0.95 && 0.95 <= ci[1]) hit++;
    }
    assert.ok(hit / 400 > 0.92 && hit / 400 < 0.99, `coverage ${hit / 400}`);
  });
});
