/** lib/bench/schedule_note: the 10 % rule on the schedule's own rate, by hand. */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SCHEDULE_DEVIATION_LIMIT, scheduledRate, scheduleNote } from "../../lib/bench/schedule_note.ts";

const evenly = (n: number, gapMs: number) => Float64Array.from({ length: n }, (_, i) => (i + 1) * gapMs);
const facts = (offsetsMs: Float64Array, durationS: number | null, maxRequests: number | null = null) => ({ name: "r4", targetRps: 4, offsetsMs, durationS, maxRequests, burstiness: 1 });

describe("scheduleNote", () => {
  test("the issue's case: 29 arrivals in 10 s at 4 req/s (2.9 req/s) is noted, though it is ordinary Poisson noise", () => {
    assert.equal(SCHEDULE_DEVIATION_LIMIT, 0.1);
    const n = scheduleNote(facts(evenly(29, 340), 10));
    assert.match(n!, /^level r4: its seeded schedule offers 2\.9 req\/s \(29 arrivals in 10 s\), 28 % below the target 4 req\/s \(more than 10 %; Poisson noise: 40 ± 6\.3 arrivals expected\)/);
    assert.match(n!, /use --requests N/);
  });
  test("inside 10 % is silent; above is noted as above", () => {
    assert.equal(scheduleNote(facts(evenly(37, 260), 10)), null, "3.7 req/s is 7.5 % below");
    assert.equal(scheduleNote(facts(evenly(44, 220), 10)), null, "exactly 10 % above is not more than 10 %");
    assert.match(scheduleNote(facts(evenly(45, 220), 10))!, /4\.5 req\/s .* 13 % above the target .* offered more load/);
    assert.equal(scheduleNote(facts(new Float64Array(0), 10)), null);
  });
  test("a count (--requests N, or the cap) measures the rate over the arrivals' span", () => {
    assert.deepEqual(scheduledRate(facts(evenly(8, 250), null, 8)), { rps: 4, windowS: 2, bounded: true });
    assert.equal(scheduleNote(facts(evenly(8, 250), null, 8)), null);
    assert.match(scheduleNote(facts(evenly(8, 350), null, 8))!, /offers 2\.86 req\/s \(exactly 8 arrivals over 2\.8 s\), 29 % below .*the span of 8 gaps varies by about 35 %.*more --requests narrow it/);
    assert.match(scheduleNote(facts(evenly(8, 350), 30, 8))!, /8 arrivals \(the cap\) over 2\.8 s/);
    assert.deepEqual(scheduledRate(facts(evenly(8, 350), 30, 9)), { rps: 8 / 30, windowS: 30, bounded: false }, "a cap not reached: the window counts");
  });
});
