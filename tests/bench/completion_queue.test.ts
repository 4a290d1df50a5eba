/**
 * The completion queue: jobs in completion order, at most the budget of work per turn (the rest
 * on later turns), an idle queue schedules nothing, drain waits for every job and reports the
 * first error a job threw.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CompletionQueue } from "../../lib/bench/completion_queue.ts";
import { TurnWork } from "../../lib/executors/turn_work.ts";

/** A fake clock and turn scheduler: each job "takes" 1 ms; turns run when `runTurn` is called. */
function fake() {
  const f = { now: 0, turns: [] as (() => void)[], scheduled: 0 };
  const work = new TurnWork(2.5, () => f.now, (fn) => {
    f.scheduled++;
    f.turns.push(fn);
  });
  const q = new CompletionQueue(2.5, () => f.now, work);
  return { f, q, work, runTurn: () => f.turns.shift()?.() };
}

test("jobs run in order, a budget's worth per turn: 3 at once (the turn's budget), then 3 a turn", () => {
  const { f, q, runTurn } = fake();
  const ran: [number, number][] = [];
  let turn = 0;
  for (let i = 0; i < 9; i++) q.push(() => (ran.push([i, turn]), f.now += 1));
  // 0 ms, 1 ms, 2 ms spent: under 2.5, so three run on the pushing turn.
  assert.deepEqual(ran.map(([i]) => i), [0, 1, 2]);
  assert.equal(q.pending, 6);
  for (turn = 1; turn < 5 && q.pending; turn++) runTurn();
  assert.deepEqual(ran.map(([i]) => i), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(ran.map(([, t]) => t), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
});

test("an idle queue schedules nothing after its last turn", () => {
  const { f, q, runTurn } = fake();
  q.push(() => (f.now += 0.1));
  assert.equal(f.scheduled, 1, "one turn to reset the budget");
  runTurn();
  assert.equal(f.turns.length, 0, "and nothing after it");
});

test("once a turn has emptied the queue, the next turn's budget is whole again: a later job runs at once", () => {
  const { f, q, runTurn } = fake();
  const ran: number[] = [];
  for (let i = 0; i < 4; i++) q.push(() => (ran.push(i), f.now += 1));
  assert.deepEqual([ran, q.pending], [[0, 1, 2], 1], "the pushing turn's budget spent");
  runTurn();
  assert.deepEqual([ran, q.pending], [[0, 1, 2, 3], 0]);
  q.push(() => void ran.push(4));
  assert.deepEqual([ran, q.pending], [[0, 1, 2, 3, 4], 0], "run as it is pushed, not queued");
});

test("drain waits for every job (real turns), and rethrows the first error a job threw", async () => {
  const q = new CompletionQueue(0.0001);
  const seen: number[] = [];
  for (let i = 0; i < 50; i++) q.push(() => void seen.push(i));
  assert.ok(q.pending > 0, "over budget: the rest wait for later turns");
  await q.drain();
  assert.equal(seen.length, 50);
  assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
  const bad = new CompletionQueue();
  bad.push(() => {
    throw new Error("first");
  });
  bad.push(() => {
    throw new Error("second");
  });
  await assert.rejects(bad.drain(), /first/);
});

test("the turn's budget is shared: what another deferred task spent is not the queue's", () => {
  const { f, q, work, runTurn } = fake();
  // Another deferred task (a journal's encoding) queued first: 2 ms a turn, for two turns.
  let other = 0;
  work.schedule(() => ((f.now += 2), ++other < 2));
  const ran: number[] = [];
  for (let i = 0; i < 6; i++) q.push(() => (ran.push(i), f.now += 1));
  assert.deepEqual(ran, [0, 1, 2], "three at once as the requests end (the queue's own budget)");
  runTurn();
  // The other task took 2 ms of the turn's 2.5: one job, where the first test's turns ran three.
  assert.deepEqual([ran, other], [[0, 1, 2, 3], 1]);
  runTurn();
  assert.deepEqual([ran, other], [[0, 1, 2, 3, 4], 2]);
  runTurn();
  assert.deepEqual(ran, [0, 1, 2, 3, 4, 5]);
  assert.equal(f.turns.length, 0, "nothing left, nothing scheduled");
});
