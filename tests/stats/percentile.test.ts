/** lib/stats/percentile: the one median/percentile definition (nearest rank), checked by hand. */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { median, nearestRank, nearestRankIndex, nearestRankSorted } from "../../lib/stats/mod.ts";
import { rankSorted } from "../../lib/metrics/mod.ts";
import { median as selftestMedian } from "../../lib/selftest/checks.ts";

describe("nearest rank", () => {
  test("an observed value: ceil(p/100·n)-th smallest; the median of an even count is the lower middle", () => {
    const xs = [683, 1321, 400, 2000];
    assert.equal(nearestRank(xs, 50), 683);
    assert.equal(median(xs), 683, "not (683 + 1321) / 2 = 1002");
    assert.equal(nearestRank(xs, 95), 2000);
    assert.equal(nearestRank(xs, 25), 400);
    assert.equal(nearestRank(xs, 0), 400);
    assert.equal(nearestRank(xs, 100), 2000);
    assert.equal(median([5, 1, 3]), 3);
    assert.equal(median([]), null);
    assert.equal(nearestRankIndex(10, 95), 9);
    assert.equal(nearestRankIndex(20, 95), 18);
  });
  test("every entry point gives the same number", () => {
    const xs = [9, 2, 7, 4, 4, 11, 1, 8];
    const sorted = Float64Array.from(xs).sort();
    for (const p of [1, 25, 50, 90, 95, 99]) {
      const want = nearestRank(xs, p);
      assert.equal(nearestRankSorted(sorted, p), want, `p${p}`);
      assert.equal(rankSorted(sorted, p), want, `metrics p${p}`);
    }
    assert.equal(nearestRankSorted(Float64Array.from([1, 2, 3, 99, 99]), 50, 3), 2, "only the first n count");
    assert.equal(selftestMedian([4, 1, 3, 2, Number.NaN]), 2, "selftest: finite values, the same rule");
  });
});
