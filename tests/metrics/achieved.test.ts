/**
 * A level is eligible for N* only where it sent at least 0.9 x the rate its schedule asked for;
 * else it is "not achieved", says what capped it, and N* stops below it (a lower bound when the
 * SLO held there). Pure, both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ACHIEVED_FRACTION, notAchieved, nStar, scheduleRate } from "../../lib/metrics/mod.ts";

const base = { targetRps: 10, scheduledRps: 10, offeredRps: 10, clientLimited: null, maxRequests: null, sent: 50 };
const held = { ok: true, value: 1, target: 2 };
const failed = { ok: false, value: 3, target: 2 };

test("the schedule's rate uses the offered rate's estimator: (n - 1) / span", () => {
  assert.equal(scheduleRate([0, 100, 200, 1000]), 3);
  assert.equal(scheduleRate([5]), null);
  assert.equal(scheduleRate(null), null);
  assert.equal(scheduleRate([0, 0, 0]), Infinity);
});

test("offered at 0.9 x the schedule is achieved; just under is not, naming the numbers", () => {
  assert.equal(notAchieved({ ...base, offeredRps: 10 * ACHIEVED_FRACTION }), null);
  const why = notAchieved({ ...base, offeredRps: 8.9 });
  assert.match(why ?? "", /offered 8\.90 of the 10\.0 req\/s scheduled \(< 0\.9 x\)/);
  // Closed loops and levels with under two sends have nothing to judge.
  assert.equal(notAchieved({ ...base, targetRps: null, offeredRps: 1 }), null);
  assert.equal(notAchieved({ ...base, offeredRps: null }), null);
});

test("the reference is the seeded schedule, not the nominal target: a short Poisson draw is load at that rate", () => {
  // The schedule drew 2.88 req/s at a 4 req/s target and the client sent it on time: achieved.
  assert.equal(notAchieved({ ...base, targetRps: 4, scheduledRps: 2.88, offeredRps: 2.86 }), null);
  // A schedule due all at once (a huge target) has no finite rate: the target is the reference.
  assert.match(notAchieved({ ...base, targetRps: 1e9, scheduledRps: Infinity, offeredRps: 3200, maxRequests: 20, sent: 20 }) ?? "", /offered 3200 of the 1000000000 req\/s scheduled/);
});

test("what capped it: the request cap and the client's own limit are named", () => {
  const capped = notAchieved({ ...base, targetRps: 1e9, scheduledRps: 1e9, offeredRps: 3200, maxRequests: 20, sent: 20 }) ?? "";
  assert.match(capped, /--max-requests-per-level 20 let only 20 requests go/);
  assert.match(notAchieved({ ...base, offeredRps: 5, clientLimited: "send lag p99 40.0 ms > 5 ms" }) ?? "", /the client could not send faster \(send lag p99 40\.0 ms > 5 ms\)/);
});

test("N* stops at a level not achieved: a lower bound below it where the SLO held there, no claim at it", () => {
  const levels = [
    { level: 5, sloOk: true, checks: { ttft_p95_ms: held } },
    { level: 1e9, sloOk: true, checks: { ttft_p95_ms: held }, notAchieved: "offered 3200 of the 1e9 req/s scheduled" },
  ];
  const s = nStar(levels);
  assert.equal(s.value, 5);
  assert.equal(s.lowerBound, true);
  assert.match(s.reason, /level 1000000000 was not achieved, offered 3200/);
  // Only the unachieved level: no N* at all (it was "max rate = 1000000000" before).
  const only = nStar([levels[1]]);
  assert.equal(only.value, null);
  assert.match(only.reason, /no level below it held the SLO/);
  // Failing the SLO at a lower load than scheduled is a failure like any other, its shortfall named.
  const f = nStar([levels[0], { ...levels[1], sloOk: false, checks: { ttft_p95_ms: failed } }]);
  assert.equal(f.value, 5);
  assert.equal(f.lowerBound, false);
  assert.match(f.reason, /SLO first fails at level 1000000000 \(ttft_p95_ms\); that level was not achieved/);
  // An achieved level above does not rescue one not achieved below it.
  const gap = nStar([levels[0], levels[1], { level: 2e9, sloOk: true, checks: { ttft_p95_ms: held } }]);
  assert.equal(gap.value, 5);
});
