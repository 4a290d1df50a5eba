/**
 * The precise sleep the open-loop pacer uses on Bun (lib/runtime/_precise_sleep.ts): on a fake
 * `waitAsync` what it asks and when it resolves; on the real runtime that it is Bun's alone, never
 * ends before its time, ends on an abort, and keeps a process alive while it waits (a pending
 * `waitAsync` alone does not). Both runtimes (the real-runtime parts where the runtime has one).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { atomicsWaitAsync, KEEP_ALIVE_SLACK_MS, type WaitAsync, waitAsyncSleep } from "../../lib/runtime/_precise_sleep.ts";
import { runtime } from "../../lib/runtime/mod.ts";

/** A waitAsync that records each call and resolves only when told. */
function fakeWaitAsync() {
  const calls: { cell: Int32Array; index: number; value: number; timeout: number; end: () => void }[] = [];
  const fn: WaitAsync = (cell, index, value, timeout) => {
    let end = () => {};
    const value_ = new Promise<"ok" | "timed-out">((ok) => (end = () => ok("timed-out")));
    calls.push({ cell, index, value, timeout, end });
    return { async: true, value: value_ };
  };
  return { fn, calls };
}

describe("waitAsyncSleep on a fake waitAsync", () => {
  test("waits on one shared cell for the fractional time asked, and resolves when the wait ends", async () => {
    const w = fakeWaitAsync();
    const sleep = waitAsyncSleep(w.fn);
    let done = false;
    const p = sleep(0.7).then(() => (done = true));
    const q = sleep(2.25);
    assert.equal(w.calls.length, 2);
    assert.deepEqual(w.calls.map((c) => [c.index, c.value, c.timeout]), [[0, 0, 0.7], [0, 0, 2.25]]);
    assert.equal(w.calls[0].cell, w.calls[1].cell, "one cell");
    assert.equal(w.calls[0].cell[0], 0, "the cell holds the value waited on");
    await Promise.resolve();
    assert.equal(done, false, "not before the wait ends");
    w.calls[0].end();
    await p;
    assert.equal(done, true);
    w.calls[1].end();
    await q;
  });
  test("nothing to wait for (0, negative, NaN, an aborted signal) resolves at once without waiting", async () => {
    const w = fakeWaitAsync();
    const sleep = waitAsyncSleep(w.fn);
    const ac = new AbortController();
    ac.abort();
    await Promise.all([sleep(0), sleep(-1), sleep(Number.NaN), sleep(5, ac.signal)]);
    assert.equal(w.calls.length, 0);
  });
  test(`a wait the runtime never ends is ended by the keep-alive timer, ${KEEP_ALIVE_SLACK_MS} ms after its time`, async () => {
    const w = fakeWaitAsync();
    const t0 = performance.now();
    await waitAsyncSleep(w.fn)(5);
    const took = performance.now() - t0;
    assert.equal(w.calls.length, 1);
    assert.ok(took >= 5 + KEEP_ALIVE_SLACK_MS - 50, `ended after ${took.toFixed(0)} ms, before the keep-alive timer`);
  });
  test("a wait longer than a timer can hold is capped; a wait the runtime ends at once resolves", async () => {
    const w = fakeWaitAsync();
    const sleep = waitAsyncSleep(w.fn);
    const p = sleep(1e12);
    assert.equal(w.calls[0].timeout, 2_000_000_000);
    w.calls[0].end();
    await p;
    await waitAsyncSleep(() => ({ async: false, value: "timed-out" }))(3);
  });
});

const precise = runtime.preciseSleep;

describe("the runtime's precise sleep", () => {
  test("Bun has one (waitAsync's timeout keeps fractions of a ms); Deno and Node do not (theirs is no better than a timer)", () => {
    assert.equal(precise !== null, runtime.name === "bun", `${runtime.name}: ${precise === null ? "none" : "one"}`);
    if (runtime.name === "bun") assert.notEqual(atomicsWaitAsync(), null);
  });
  test("never ends before its time on performance.now", { skip: precise === null ? "no precise sleep on this runtime" : false }, async () => {
    for (const ms of [0.05, 0.3, 0.75, 1.5, 2.2]) {
      const t0 = performance.now();
      await precise!(ms);
      const took = performance.now() - t0;
      assert.ok(took >= ms - 0.01, `${ms} ms asked, ${took.toFixed(3)} ms slept`);
    }
  });
  test("an abort ends a long sleep at once", { skip: precise === null ? "no precise sleep on this runtime" : false }, async () => {
    const ac = new AbortController();
    const t0 = performance.now();
    setTimeout(() => ac.abort(), 20);
    await precise!(5_000, ac.signal);
    const took = performance.now() - t0;
    assert.ok(took < 2_000, `slept ${took.toFixed(0)} ms of 5,000 after an abort at 20 ms`);
  });
  test("a process whose only work is the sleep stays alive until it ends", { skip: precise === null ? "no precise sleep on this runtime" : false }, () => {
    const mod = fileURLToPath(new URL("../../lib/runtime/_precise_sleep.ts", import.meta.url));
    const script = `import { atomicsWaitAsync, waitAsyncSleep } from ${JSON.stringify(mod)};
const sleep = waitAsyncSleep(atomicsWaitAsync());
sleep(80).then(() => console.log("woke"));`;
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 20_000, env: { ...process.env, BUN_BE_BUN: "1" } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), "woke", "the process ended before the sleep did");
  });
});
