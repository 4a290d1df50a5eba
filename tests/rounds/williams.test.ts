/** lib/rounds/williams: the seed's Williams design, its period, default rounds and balance checks. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { carryoverCounts, checkBalance, defaultRounds, roundOrders, williamsPeriod, williamsSquare } from "../../lib/rounds/mod.ts";

const labelsOf = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + i));

describe("williamsSquare", () => {
  test("exact rows of the seed's construction", () => {
    assert.deepEqual(williamsSquare(0), []);
    assert.deepEqual(williamsSquare(1), [[0]]);
    assert.deepEqual(williamsSquare(2), [[0, 1], [1, 0]]);
    assert.deepEqual(williamsSquare(3), [[0, 1, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0], [0, 2, 1], [1, 0, 2]]);
    assert.deepEqual(williamsSquare(4), [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]);
    assert.deepEqual(williamsSquare(5)[0], [0, 1, 4, 2, 3]);
    assert.deepEqual(williamsSquare(5)[5], [3, 2, 4, 1, 0]);
    assert.deepEqual(williamsSquare(6)[0], [0, 1, 5, 2, 4, 3]);
    assert.deepEqual(williamsSquare(6)[2], [2, 3, 1, 4, 0, 5]);
  });

  test("period n for even n, 2n for odd n; default rounds the smallest multiple >= 3", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map(williamsPeriod), [1, 2, 6, 4, 10, 6, 14, 8]);
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => defaultRounds(n)), [3, 4, 6, 4, 10, 6, 14, 8]);
    assert.equal(defaultRounds(2, 12), 12);
    assert.equal(defaultRounds(3, 12), 12);
    assert.equal(defaultRounds(5, 12), 20);
    for (let n = 1; n <= 8; n++) assert.equal(williamsSquare(n).length, williamsPeriod(n));
  });
});

describe("balance for n = 1…8", () => {
  for (let n = 1; n <= 8; n++) {
    test(`n = ${n}: once per round, positions and carry-over equal over a period`, () => {
      const labels = labelsOf(n);
      const d = roundOrders(labels, williamsPeriod(n));
      assert.equal(d.balanced, true);
      for (const row of d.orders) assert.deepEqual([...row].sort(), labels);
      const perPos = williamsPeriod(n) / n;
      for (let pos = 0; pos < n; pos++) {
        for (const l of labels) assert.equal(d.orders.filter((r) => r[pos] === l).length, perPos, `${l} at position ${pos}`);
      }
      const carry = carryoverCounts(d.orders);
      const each = n === 1 ? 0 : (williamsPeriod(n) * (n - 1)) / (n * (n - 1));
      for (const a of labels) {
        for (const b of labels) if (a !== b) assert.equal(carry.get(`${a}>${b}`) ?? 0, each, `${a} before ${b}`);
        assert.equal(carry.get(`${a}>${a}`), undefined);
      }
      assert.deepEqual(checkBalance(labels, d.orders), { ok: true, problems: [] });
      // Two periods stay balanced too.
      assert.equal(checkBalance(labels, roundOrders(labels, 2 * williamsPeriod(n)).orders).ok, true);
    });
  }
});

describe("roundOrders", () => {
  test("labels by row, cycling; balanced false off whole periods", () => {
    const d = roundOrders(["a", "b"], 3);
    assert.deepEqual(d, { design: "williams", orders: [["a", "b"], ["b", "a"], ["a", "b"]], period: 2, balanced: false });
    assert.equal(roundOrders(["a", "b", "c"], 6).balanced, true);
    assert.equal(roundOrders(["a", "b", "c"], 3).balanced, false);
    assert.deepEqual(roundOrders([], 3), { design: "williams", orders: [], period: 0, balanced: false });
  });

  test("the checker finds an unbalanced block", () => {
    const labels = ["a", "b", "c"];
    const three = roundOrders(labels, 3).orders; // half of the doubled design
    const r = checkBalance(labels, three);
    assert.equal(r.ok, false);
    assert.match(r.problems.join(" "), /carry-over/);
    assert.match(checkBalance(labels, [["a", "b", "b"]]).problems[0], /exactly once/);
    assert.match(checkBalance(["a", "b"], [["a", "b"], ["a", "b"]]).problems.join(" "), /position 1/);
  });
});
