/** Arrival schedules: seeded, inside the window, the right mean rate, burstiness as the gap's CV. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { arrivalOffsetsMs, concurrencyToRate, gammaDeviate, levelSeed } from "../../lib/schedule/mod.ts";
import { SeededRng } from "../../lib/stats/mod.ts";

function gapStats(o: Float64Array) {
  const g = Array.from(o, (t, i) => t - (i ? o[i - 1] : 0));
  const m = g.reduce((a, b) => a + b, 0) / g.length;
  const v = g.reduce((a, b) => a + (b - m) ** 2, 0) / (g.length - 1);
  return { mean: m, cv: Math.sqrt(v) / m };
}

describe("arrivalOffsetsMs", () => {
  test("Poisson: ascending, inside the window, mean gap 1/rate, CV 1; same seed same schedule", () => {
    const o = arrivalOffsetsMs({ ratePerS: 200, durationS: 50, seed: levelSeed(7, 0) });
    assert.ok(o.length > 9000 && o.length < 11000, `${o.length}`);
    for (let i = 1; i < o.length; i++) assert.ok(o[i] > o[i - 1]);
    assert.ok(o[0] > 0 && o[o.length - 1] < 50_000);
    const s = gapStats(o);
    assert.ok(Math.abs(s.mean - 5) < 0.15, `mean ${s.mean}`);
    assert.ok(Math.abs(s.cv - 1) < 0.05, `cv ${s.cv}`);
    assert.deepEqual(arrivalOffsetsMs({ ratePerS: 200, durationS: 50, seed: levelSeed(7, 0) }), o);
    assert.notDeepEqual(arrivalOffsetsMs({ ratePerS: 200, durationS: 50, seed: levelSeed(7, 1) }).slice(0, 5), o.slice(0, 5));
  });
  test("burstiness is the gamma shape: CV = 1/sqrt(shape), the mean rate unchanged", () => {
    for (const shape of [0.25, 4]) {
      const s = gapStats(arrivalOffsetsMs({ ratePerS: 100, durationS: 100, burstiness: shape, seed: [1] }));
      assert.ok(Math.abs(s.mean - 10) < 0.4, `shape ${shape}: mean ${s.mean}`);
      assert.ok(Math.abs(s.cv - 1 / Math.sqrt(shape)) < 0.08, `shape ${shape}: cv ${s.cv}`);
    }
  });
  test("max requests caps the count; bad input throws", () => {
    assert.equal(arrivalOffsetsMs({ ratePerS: 100, durationS: 100, maxRequests: 7, seed: [1] }).length, 7);
    assert.throws(() => arrivalOffsetsMs({ ratePerS: 0, durationS: 1, seed: [1] }), /positive/);
    assert.throws(() => arrivalOffsetsMs({ ratePerS: 1, durationS: 0, seed: [1] }), /duration/);
    assert.throws(() => gammaDeviate(new SeededRng(1), 0), /shape/);
  });
  test("concurrency N becomes rate N / e2e_ref", () => {
    assert.equal(concurrencyToRate(8, 2000), 4);
    assert.throws(() => concurrencyToRate(8, 0));
  });
});
