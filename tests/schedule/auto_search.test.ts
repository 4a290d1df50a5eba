/**
 * The `--rates auto` / `--concurrency auto` level search (lib/schedule/auto_search.ts), against a
 * known capacity: doubling, then bisection to the precision; the first level failing halves; an
 * unjudged probe stops it; noise (a held level above a failed one) keeps the bracket honest.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AutoSearch, roundLevel } from "../../lib/schedule/auto_search.ts";

/** Runs the search against "the SLO holds at and below `cap`". */
function against(s: AutoSearch, holds: (level: number) => boolean | null) {
  const seen: number[] = [];
  for (let l = s.next(); l !== null; l = s.next()) {
    seen.push(l);
    const h = holds(l);
    s.record(l, h === null ? "unjudged" : h ? "held" : "failed");
  }
  return { seen, st: s.state() };
}

test("rate: from 1/e2e, doubling then at most ceil(log2(1 / 0.05)) = 5 bisections bracket the capacity within 5 %", () => {
  for (const cap of [50, 37, 61.3, 12.6, 99]) {
    const { seen, st } = against(new AutoSearch({ kind: "rate", start: 12.5, precision: 0.05, maxLevels: 12 }), (l) => l <= cap);
    const grow = seen.findIndex((l) => l > cap) + 1;
    assert.ok(seen.length - grow <= 5, `cap ${cap}: ${seen.length} levels (${seen.join(", ")})`);
    assert.ok(seen.length <= 9, `cap ${cap}: ${seen.length} levels`);
    assert.ok(st.held !== null && st.failed !== null, `cap ${cap}: bracketed`);
    assert.ok(st.held <= cap && st.failed > cap, `cap ${cap}: [${st.held}, ${st.failed})`);
    assert.ok((st.failed - st.held) <= 0.05 * st.held + 1e-9, `cap ${cap}: within 5 %: [${st.held}, ${st.failed})`);
    assert.match(String(st.stopped), /bracketed within 5\.0 %/);
    assert.deepEqual(seen.slice(0, 2), [12.5, 25]);
  }
});

test("concurrency: integer levels, stops when no integer lies between", () => {
  const { seen, st } = against(new AutoSearch({ kind: "concurrency", start: 1, precision: 0.05, maxLevels: 20 }), (l) => l <= 11);
  assert.deepEqual(seen.slice(0, 5), [1, 2, 4, 8, 16]);
  assert.equal(st.held, 11);
  assert.equal(st.failed, 12);
  assert.ok(seen.every(Number.isInteger));
  assert.equal(new Set(seen).size, seen.length, "no level measured twice");
});

test("the first level fails: halve until one holds (rate), or stop at 1 (concurrency)", () => {
  const r = against(new AutoSearch({ kind: "rate", start: 40, precision: 0.05, maxLevels: 12 }), (l) => l <= 7);
  assert.deepEqual(r.seen.slice(0, 4), [40, 20, 10, 5]);
  assert.ok(r.st.held !== null && r.st.held <= 7 && (r.st.failed as number) > 7);
  const c = against(new AutoSearch({ kind: "concurrency", start: 1, precision: 0.05, maxLevels: 12 }), () => false);
  assert.deepEqual(c.seen, [1]);
  assert.equal(c.st.held, null);
  assert.match(String(c.st.stopped), /failed at the lowest level tried \(1\)/);
  const never = against(new AutoSearch({ kind: "rate", start: 8, precision: 0.05, maxLevels: 20, maxShrink: 3 }), () => false);
  assert.deepEqual(never.seen, [8, 4, 2, 1]);
});

test("an unjudged probe ends the search; --max-levels bounds it; the SLO never failing is a lower bound", () => {
  const u = against(new AutoSearch({ kind: "rate", start: 2, precision: 0.05, maxLevels: 12 }), (l) => (l >= 8 ? null : true));
  assert.deepEqual(u.seen, [2, 4, 8]);
  assert.match(String(u.st.stopped), /level 8 could not be judged/);
  const m = against(new AutoSearch({ kind: "rate", start: 1, precision: 0.05, maxLevels: 4 }), () => true);
  assert.deepEqual(m.seen, [1, 2, 4, 8]);
  assert.equal(m.st.failed, null);
  assert.match(String(m.st.stopped), /reached --max-levels 4/);
});

test("noise: a level that holds above one that failed does not move the bracket past the failure", () => {
  // 20 fails (noise), 30 holds, 40 fails: the answer stays below 20.
  const s = new AutoSearch({ kind: "rate", start: 10, precision: 0.05, maxLevels: 12 });
  assert.equal(s.next(), 10);
  s.record(10, "held");
  assert.equal(s.next(), 20);
  s.record(20, "failed");
  const next = s.next() as number;
  assert.ok(next > 10 && next < 20, `bisects below the failure: ${next}`);
  s.record(next, "held");
  assert.equal(s.state().failed, 20);
  assert.throws(() => s.record(99, "held"), /no pending probe/);
});

test("roundLevel: 3 significant digits for rates, integers for concurrency; bad settings are refused", () => {
  assert.equal(roundLevel("rate", 37.5), 37.5);
  assert.equal(roundLevel("rate", 1 / 0.0813), 12.3);
  assert.equal(roundLevel("rate", 1234.5), 1230);
  assert.equal(roundLevel("concurrency", 2.5), 3);
  assert.equal(roundLevel("concurrency", 0.2), 1);
  assert.throws(() => new AutoSearch({ kind: "rate", start: 0, precision: 0.05, maxLevels: 3 }), /start/);
  assert.throws(() => new AutoSearch({ kind: "rate", start: 1, precision: 1, maxLevels: 3 }), /precision/);
  assert.throws(() => new AutoSearch({ kind: "rate", start: 1, precision: 0.05, maxLevels: 0 }), /maxLevels/);
});
