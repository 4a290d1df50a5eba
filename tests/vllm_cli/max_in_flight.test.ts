/** The open loop's cap on requests in flight (vLLM's --max-concurrency over open-loop arrivals), on real short timers (< 1 s). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runOpenLoop } from "../../lib/executors/mod.ts";

describe("runOpenLoop maxInFlight", () => {
  test("never more than the cap in flight; arrivals keep their order; a held request keeps its own deadline (its lag includes the wait)", async () => {
    let inFlight = 0, peak = 0;
    const order: number[] = [];
    const lags: number[] = [];
    const out = await runOpenLoop(async (i, due) => {
      order.push(i);
      lags.push(performance.now() - due);
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 30));
      inFlight--;
    }, { offsetsMs: new Float64Array(8), maxInFlight: 2 });
    assert.equal(out.sent, 8);
    assert.equal(peak, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7]);
    // All due at 0 (rate inf): the last pair waited for three pairs of 30 ms before it.
    assert.ok(lags[7] >= 80, `lag of the last request ${lags[7]} ms`);
  });
  test("without a cap all due at once go at once; abort while held stops sending", async () => {
    let peak = 0, inFlight = 0;
    await runOpenLoop(async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 10));
      inFlight--;
    }, { offsetsMs: new Float64Array(6) });
    assert.equal(peak, 6);
    const ac = new AbortController();
    const seen: number[] = [];
    const out = await runOpenLoop(async (i) => {
      seen.push(i);
      if (i === 0) setTimeout(() => ac.abort(), 20);
      await new Promise((r) => setTimeout(r, 200));
    }, { offsetsMs: new Float64Array(5), maxInFlight: 1, signal: ac.signal });
    assert.deepEqual(seen, [0]);
    assert.equal(out.sent, 1);
  });
});
