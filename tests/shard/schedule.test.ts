/** One numbered schedule for every shard: the same hash from any shard, the multiset split exactly by seq mod S, the timetable (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { PromptPool } from "../../lib/bench/prompt_pool.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";
import { levelStartsMs, plannedRequests, scheduleHash } from "../../lib/shard/schedule.ts";
import { ownsSeq } from "../../lib/shard/shard_spec.ts";

const prompts = loadBuiltinPromptSet().prompts;
const levels = (seed: number) => [2, 5].map((rate, i) => ({ name: `r${rate}`, seed: levelSeed(seed, i), offsetsMs: arrivalOffsetsMs({ ratePerS: rate, durationS: 20, seed: levelSeed(seed, i) }) }));

test("every shard computes the same schedule and hash; the shards' seqs partition it exactly", () => {
  const full = [...plannedRequests(new PromptPool(prompts), levels(7))];
  assert.ok(full.length > 60);
  assert.ok(full.some((r) => r.salt !== null), "reused prompts are salted");
  const h = scheduleHash(full);
  for (let k = 0; k < 3; k++) assert.equal(scheduleHash(plannedRequests(new PromptPool(prompts), levels(7))), h, `shard ${k} recomputes it`);
  const key = (r: { level: string; seq: number; promptId: string; salt: string | null }) => `${r.level}/${r.seq}/${r.promptId}/${r.salt}`;
  const union = [0, 1, 2].flatMap((k) => full.filter((r) => ownsSeq({ k, s: 3 }, r.seq)).map(key)).sort();
  assert.deepEqual(union, full.map(key).sort());
  // Salts are a function of (level, seq) in this schedule, never of the run: a second plan agrees.
  assert.deepEqual([...plannedRequests(new PromptPool(prompts), levels(7))].map(key), full.map(key));
  assert.notEqual(scheduleHash(plannedRequests(new PromptPool(prompts), levels(8))), h, "another seed, another schedule");
  const moved = full.map((r, i) => (i === 5 ? { ...r, offsetMs: r.offsetMs + 1e-9 } : r));
  assert.notEqual(scheduleHash(moved), h, "an offset moved by a nanosecond changes the hash");
});

test("timetable: start-at + earlier durations + j x gap; a gap below e2e_ref is refused", () => {
  assert.deepEqual(levelStartsMs(1_000_000, [30, 30, 60], 10), [1_000_000, 1_040_000, 1_080_000]);
  assert.deepEqual(levelStartsMs(0, [5], 0), [0]);
  assert.throws(() => levelStartsMs(0, [5, 5], 1, 2500), (e: unknown) => e instanceof IkError && e.code === 64 && /below the reference e2e 2500 ms/.test(e.oneLine()));
});
