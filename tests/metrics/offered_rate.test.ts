/**
 * offeredRate: on the schedule's own basis (sent over its window, or up to a late last send), so a
 * client on time offers exactly the scheduled rate (5 arrivals in a 2 s window: 2.5, never the
 * 3.3 that (n − 1) over first to last send read) and one that fell behind offers less; without a
 * window, (sent − 1) over the send span. < 1 s, both runtimes.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { offeredRate } from "../../lib/metrics/mod.ts";

describe("offered rate", () => {
  test("on time: sent over the schedule's window, the scheduled rate itself", () => {
    // 5 sends at 300 … 1500 ms of a 2 s level whose schedule starts at t = 1000 ms.
    const r = offeredRate({ sent: 5, firstSendMs: 1300, lastSendMs: 2500, originMs: 1000, scheduleWindowS: 2 });
    assert.equal(r, 2.5);
  });

  test("behind: the last send 3 s into a 2 s window offers less than scheduled", () => {
    const r = offeredRate({ sent: 5, firstSendMs: 1300, lastSendMs: 4000, originMs: 1000, scheduleWindowS: 2 });
    assert.equal(r, 5 / 3);
  });

  test("no window (a shard's slice): (sent − 1) over first to last send; nothing sent: null", () => {
    assert.equal(offeredRate({ sent: 5, firstSendMs: 1000, lastSendMs: 3000, originMs: 1000, scheduleWindowS: null }), 2);
    assert.equal(offeredRate({ sent: 0, firstSendMs: null, lastSendMs: null, originMs: 1000, scheduleWindowS: 2 }), null);
    assert.equal(offeredRate({ sent: 1, firstSendMs: 1000, lastSendMs: 1000, originMs: null, scheduleWindowS: null }), null);
  });
});
