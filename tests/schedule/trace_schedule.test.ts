/** A trace's own schedule: offsets from its first arrival, scaled, cut at --max-duration-s, and its mean rate counted as a level's offered rate is ((n - 1) gaps over the span). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { traceSchedule } from "../../lib/schedule/trace_schedule.ts";
import type { Prompt } from "../../lib/prompts/prompt.ts";

const at = (s: number, i: number): Prompt => ({ id: `r${i}`, bucket: "t", messages: [{ role: "user", content: "x" }], maxTokens: 4, kind: "chat", extra: { arrival_s: s } });

test("5 arrivals over 4.2 s: 4 gaps, 0.952 req/s (n / span said 1.19); scaled and cut", () => {
  const t = traceSchedule([0, 0.5, 1.5, 3, 4.2].map(at), "t", { timeScale: 1, maxDurationS: null });
  assert.deepEqual(Array.from(t.offsetsMs), [0, 500, 1500, 3000, 4200]);
  assert.ok(Math.abs(t.rateRps - 4 / 4.2) < 1e-12, String(t.rateRps));
  const slow = traceSchedule([0, 0.5, 1.5, 3, 4.2].map(at), "t", { timeScale: 2, maxDurationS: 3.5 });
  assert.deepEqual([Array.from(slow.offsetsMs), slow.dropped], [[0, 1000, 3000], 2]);
  assert.ok(Math.abs(slow.rateRps - 2 / 3) < 1e-12, String(slow.rateRps));
  // Two arrivals: one gap; a lone one: its count.
  assert.equal(traceSchedule([0, 2].map(at), "t", { timeScale: 1, maxDurationS: null }).rateRps, 0.5);
  assert.equal(traceSchedule([at(5, 0)], "t", { timeScale: 1, maxDurationS: null }).rateRps, 1);
});
