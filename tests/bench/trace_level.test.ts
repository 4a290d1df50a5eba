/**
 * A replay's level, in process (a fetch that answers at once, offsets of a few hundred ms): no
 * seeded-schedule note (a replay has no target to stray from; its rate is the trace's mean, (n − 1)
 * / span, as data.trace.mean_rate_rps), no rate for arrivals with no span, and an interrupted
 * replay's windows end at the interrupt, which the level records. About 1 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type LevelSpec, runLevel } from "../../lib/bench/load_level.ts";
import { PromptPool } from "../../lib/bench/prompt_pool.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { traceSchedule } from "../../lib/schedule/trace_schedule.ts";
import type { Prompt } from "../../lib/prompts/prompt.ts";
import { fakeRunner, levelWriters, ONE_TOKEN_SSE } from "./_level_fixture.ts";

const answer = () => Promise.resolve(new Response(ONE_TOKEN_SSE, { status: 200, headers: { "content-type": "text/event-stream" } }));
const at = (s: number, i: number): Prompt => ({ ...loadBuiltinPromptSet().prompts[0], id: `r${i}`, extra: { arrival_s: s } });

/** Runs a replay of arrivals `times` (s) as bench serve does: its grid value is the schedule's rateRps. */
async function replay(times: number[], signal?: AbortSignal) {
  const dir = await mkdtemp(join(tmpdir(), "ik-trace-level-"));
  try {
    const t = traceSchedule(times.map(at), "t", { timeScale: 1, maxDurationS: null });
    const notes: string[] = [];
    const w = await levelWriters(dir);
    const spec: LevelSpec = {
      index: 0, level: t.rateRps, name: "trace", ratePerS: t.rateRps, workers: null, durationS: Infinity, maxRequests: t.offsetsMs.length,
      offsetsMs: t.offsetsMs, replay: true, burstiness: 1, seed: [1],
    };
    const res = await runLevel(spec, { runner: fakeRunner(answer), pool: new PromptPool(t.prompts), slo: {}, gpuCount: 0, label: "t", ...w, signal, onNote: (l) => notes.push(l) });
    await Promise.all([w.journal.close(), w.outputs.close(), w.inputs.close()]);
    return { t, res, notes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("a replay of 5 rows: no schedule note, its scheduled rate the trace's mean (n − 1) / span", async () => {
  const { t, res, notes } = await replay([0, 0.05, 0.15, 0.3, 0.42]);
  assert.deepEqual(notes, [], "no 'seeded schedule … above the target' note");
  assert.equal(res.schedule_note, null);
  assert.ok(Math.abs((res.scheduled_rate_rps as number) - 4 / 0.42) < 1e-9, String(res.scheduled_rate_rps));
  assert.equal(res.scheduled_rate_rps, t.meanRateRps);
  assert.equal(res.target_rate_rps, t.rateRps);
  assert.equal(res.interrupted_at_s, null);
});

test("a replay with no span (every row at one instant): no rate scheduled nor targeted", async () => {
  const { t, res } = await replay([2, 2, 2]);
  assert.equal(t.meanRateRps, null);
  assert.equal(res.sent, 3);
  assert.equal(res.scheduled_rate_rps, null);
  assert.equal(res.target_rate_rps, null);
  assert.equal(res.schedule_note, null);
});

test("an interrupted replay: its windows end at the interrupt, which the level records", async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 400);
  const { res } = await replay([0, 0.1, 1.1, 2.1, 3.1], ac.signal);
  assert.equal(res.interrupted, true);
  assert.equal(res.sent, 2);
  assert.ok(typeof res.interrupted_at_s === "number" && res.interrupted_at_s >= 0.35 && res.interrupted_at_s < 1.1, String(res.interrupted_at_s));
  assert.deepEqual(res.windows?.map((w) => [w.t_s, w.trace_rps, w.sent_rps]), [[0, 2, 2]], "nothing due after the interrupt is on the windows");
});
