/**
 * The shared per-turn budget for deferred work (lib/executors/turn_work.ts): all tasks together
 * spend at most the budget a turn (the first always runs), a task with more to do goes to the
 * back and one not reached keeps its place, a task is queued once, a throwing task is dropped
 * after the others ran, an empty queue schedules nothing; on real turns, I/O callbacks run
 * between turns, and the journal writers share the one budget.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { TURN_WORK, TurnWork } from "../../lib/executors/turn_work.ts";
import { JsonlWriter } from "../../lib/evidence/jsonl_writer.ts";

/** A manual clock and turn scheduler; `runTurn` runs the next scheduled turn. */
function fake(budget = 2.5) {
  const f = { now: 0, turns: [] as (() => void)[] };
  const work = new TurnWork(budget, () => f.now, (fn) => void f.turns.push(fn));
  return { f, work, runTurn: () => f.turns.shift()?.() };
}

/** A task of `n` items of `ms` each, that records which items ran on which turn. */
function items(f: { now: number }, name: string, n: number, ms: number, log: string[]) {
  let next = 0;
  return (until: number) => {
    do {
      log.push(`${name}${next++}`);
      f.now += ms;
    } while (next < n && f.now < until);
    return next < n;
  };
}

test("all tasks together spend one budget a turn; one with more goes to the back, one not reached keeps its place", () => {
  const { f, work, runTurn } = fake(2.5);
  const log: string[] = [];
  const a = items(f, "a", 4, 1, log), b = items(f, "b", 2, 1, log), c = items(f, "c", 1, 1, log);
  work.schedule(a);
  work.schedule(b);
  work.schedule(c);
  work.schedule(a);
  assert.equal(work.pending, 3, "a task is queued once");
  assert.equal(f.turns.length, 1, "one turn armed");
  const turns: string[][] = [];
  while (f.turns.length) {
    const from = log.length;
    runTurn();
    turns.push(log.slice(from));
  }
  // Turn 1: a spends the 2.5 ms (3 items); b and c not reached. Turn 2: b (2 items), c (1): 3 ms,
  // c reached at 2 ms. Turn 3: a's last item.
  assert.deepEqual(turns, [["a0", "a1", "a2"], ["b0", "b1", "c0"], ["a3"]]);
  assert.equal(work.pending, 0);
});

test("the first task runs even when the budget is zero; an empty queue arms nothing", () => {
  const { f, work, runTurn } = fake(0);
  const log: string[] = [];
  work.schedule(items(f, "a", 2, 1, log));
  work.schedule(items(f, "b", 1, 1, log));
  runTurn();
  assert.deepEqual(log, ["a0"], "one item of the first task, the rest wait");
  runTurn();
  runTurn();
  assert.deepEqual(log, ["a0", "b0", "a1"]);
  assert.equal(f.turns.length, 0);
  assert.equal(work.pending, 0);
});

test("a task scheduled while a turn runs waits for the next turn; one that ended may be scheduled again", () => {
  const { f, work, runTurn } = fake(10);
  const log: string[] = [];
  const late = items(f, "late", 1, 1, log);
  const once = (_until: number) => {
    log.push("once");
    work.schedule(late);
    work.schedule(once);
    return false;
  };
  work.schedule(once);
  runTurn();
  assert.deepEqual(log, ["once"]);
  assert.equal(work.pending, 1, "late is queued; once ended (its schedule while running was a no-op)");
  runTurn();
  assert.deepEqual(log, ["once", "late0"]);
  work.schedule(once);
  runTurn();
  assert.deepEqual(log, ["once", "late0", "once"]);
});

test("a task that throws is dropped after the others ran, and its error is thrown", () => {
  const { f, work, runTurn } = fake(10);
  const log: string[] = [];
  work.schedule(() => {
    throw new Error("bad task");
  });
  work.schedule(items(f, "b", 1, 1, log));
  assert.throws(() => runTurn(), /bad task/);
  assert.deepEqual(log, ["b0"]);
  assert.equal(work.pending, 0);
  assert.equal(f.turns.length, 0);
});

test("real turns: a timer runs between the turns of a long backlog", async () => {
  const work = new TurnWork(1);
  let turns = 0, between = 0;
  const seen: number[] = [];
  const spin = (ms: number) => {
    const t = performance.now();
    while (performance.now() - t < ms) { /* busy: the work itself */ }
  };
  let left = 12;
  work.schedule((until) => {
    turns++;
    seen.push(between);
    do spin(0.4);
    while (--left > 0 && performance.now() < until);
    return left > 0;
  });
  const iv = setInterval(() => between++, 0);
  while (work.pending) await new Promise((r) => setTimeout(r, 1));
  clearInterval(iv);
  assert.ok(turns >= 4, `12 items of 0.4 ms in turns of 1 ms: ${turns} turns`);
  assert.ok(seen.at(-1)! > seen[0], `timers ran between the turns: ${seen.join(",")}`);
});

test("the journal writers share the process's one budget: a turn encodes about 2 ms of rows of all three, not 2 ms each", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-turn-work-"));
  try {
    const ws = await Promise.all(["a", "b", "c"].map((n) => JsonlWriter.open(join(dir, `${n}.jsonl`))));
    // Rows that each take 0.25 ms to build (a CPU that is taken away only makes a turn hold fewer),
    // and a marker in the same log once a turn of the loop: rows between two markers were built on one turn.
    const log: string[] = [];
    const slow = (i: number) => () => {
      const t = performance.now();
      while (performance.now() - t < 0.25) { /* building the row */ }
      log.push("row");
      return { i };
    };
    for (const w of ws) for (let i = 0; i < 40; i++) w.writeLazy(slow(i));
    await new Promise<void>((done) => {
      const mark = () => {
        log.push("|");
        if (TURN_WORK.pending) setImmediate(mark);
        else done();
      };
      setImmediate(mark);
    });
    await Promise.all(ws.map((w) => w.close()));
    for (const n of ["a", "b", "c"]) assert.equal((await readFile(join(dir, `${n}.jsonl`), "utf8")).trim().split("\n").length, 40);
    const perTurn = log.join("").split("|").map((x) => x.length / 3).filter((n) => n > 0);
    // 2 ms / 0.25 ms: 8 rows, plus the one that crosses the line; three budgets would be ~24.
    assert.ok(Math.max(...perTurn) <= 12, `rows a turn: ${perTurn.join(",")}`);
    assert.ok(perTurn.length >= 10, `120 rows over ${perTurn.length} turns`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
