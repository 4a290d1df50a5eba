/**
 * The event-loop monitor: a late timer's lag, and how much of it the loop thread spent waiting for
 * a CPU (an oversubscribed host) rather than running ik's own work. Budget: about 1 s.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { loopBlockNote, loopBlockNoteOfRecord, type LoopLag, startLoopLag, threadCpuWaitMs } from "../../lib/executors/mod.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* hold the loop */ }
};

test("a block of ik's own work is its own lag; a wait for a CPU is taken out of it", async () => {
  // No wait for a CPU at all: the whole lag is the loop's own.
  const own = startLoopLag(10, undefined, () => 0);
  await sleep(25);
  busy(40);
  await sleep(25);
  const a = own.stop();
  assert.ok((a.maxMs ?? 0) >= 30, `the 40 ms block is seen (${a.maxMs})`);
  assert.equal(a.ownMaxMs, a.maxMs, "nothing waited for a CPU: every ms of lag is the loop's own");
  assert.equal(a.cpuWaitMs, 0);

  // The thread waited 1 s for a CPU between any two ticks: no lag is the loop's own.
  let w = 0;
  const waited = startLoopLag(10, undefined, () => (w += 1000));
  await sleep(25);
  busy(40);
  await sleep(25);
  const b = waited.stop();
  assert.ok((b.maxMs ?? 0) >= 30);
  assert.equal(b.ownMaxMs, 0, "a wait as long as the lag explains all of it");
  assert.ok((b.cpuWaitMs ?? 0) >= 1000);

  // No reader: the lag alone, and the own figures are unknown (null), never zero.
  const none = startLoopLag(10, undefined, () => null).stop();
  assert.equal(none.ownMaxMs, null);
  assert.equal(none.cpuWaitMs, null);
});

test("loopBlockNote names the cause: ik's own block, or a host whose CPUs other work held", () => {
  const lag = (maxMs: number, ownMaxMs: number | null): LoopLag => ({ samples: 10, p50Ms: 0, p99Ms: maxMs, maxMs, ownP99Ms: ownMaxMs, ownMaxMs, cpuWaitMs: ownMaxMs === null ? null : maxMs - ownMaxMs });
  assert.equal(loopBlockNote(lag(9, 9), 10), null);
  assert.equal(loopBlockNote(lag(31, null), 10), "event loop blocked 31.0 ms > 10 ms");
  assert.match(loopBlockNote(lag(31, 28), 10) as string, /blocked 31\.0 ms > 10 ms \(ik's loop's own longest block 28\.0 ms\)$/);
  assert.equal(loopBlockNoteOfRecord({ samples: 9, p50_ms: 0, p99_ms: 12, max_ms: 12, own_max_ms: null }, 10), "event loop blocked 12.0 ms > 10 ms", "a record from before the wait was read");
  assert.match(loopBlockNoteOfRecord({ samples: 9, p50_ms: 0, p99_ms: 12, max_ms: 12, own_max_ms: 11 }, 10) as string, /\(ik's loop's own longest block 11\.0 ms\)$/);
  assert.match(loopBlockNote(lag(31, 2), 10) as string, /\(ik's loop's own longest block 2\.0 ms; the rest was waiting for a CPU that other work held: the host's CPUs are oversubscribed\)$/);
});

test("threadCpuWaitMs reads this thread's wait on Linux and grows, or is null elsewhere", () => {
  const a = threadCpuWaitMs();
  if (a === null) return void console.error("no /proc/thread-self/schedstat here: nothing to check");
  busy(5);
  const b = threadCpuWaitMs() as number;
  assert.ok(Number.isFinite(a) && a >= 0 && b >= a, `${a} then ${b}`);
});
