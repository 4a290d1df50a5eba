/** Executors on a manual clock: open loop sends on absolute deadlines, never early, catches up; closed loop keeps N in flight. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_SPIN_MARGIN_MS, type PacerTimers, pacingOf, PRECISE_SPIN_MARGIN_MS, REAL_TIMERS, runClosedLoop, runOpenLoop, setPreciseSleep, SPIN_SLICE_MS, TIMER_MIN_SLEEP_MS, waitUntil } from "../../lib/executors/mod.ts";
import { START_SLICE } from "../../lib/executors/closed_loop.ts";
import { runtime } from "../../lib/runtime/mod.ts";

/** A clock whose sleeps wake `lateMs` late, as real timers do, and whose yields take 0.01 ms. */
function manual(lateMs: number): PacerTimers & { now: number; sleeps: number; yields: number } {
  const t = {
    now: 0, sleeps: 0, yields: 0,
    clock: () => t.now,
    sleep: (ms: number) => {
      t.sleeps++;
      t.now += ms + lateMs;
      return Promise.resolve();
    },
    yieldNow: () => {
      t.yields++;
      t.now += 0.01;
      return Promise.resolve();
    },
  };
  return t;
}

describe("waitUntil", () => {
  test("sleeps to the margin, then yields: on time within a yield although timers wake late", async () => {
    const t = manual(1.0);
    await waitUntil(100, t, { spinMarginMs: 1.5 });
    assert.ok(t.now >= 100 && t.now < 100.02, `${t.now}`);
    assert.equal(t.sleeps, 1);
    const before = t.now;
    await waitUntil(50, t);
    assert.equal(t.now, before, "a past deadline returns at once");
  });
  test("a margin below the timers' lateness leaves that difference as lag (the CPU/precision trade)", async () => {
    const t = manual(0.8);
    await waitUntil(100, t, { spinMarginMs: 0.5 });
    assert.ok(Math.abs(t.now - 100.3) < 1e-9, `${t.now}`);
  });
  test(`a timer is never asked for less than ${TIMER_MIN_SLEEP_MS} ms: one that woke early into the last millisecond is spun, not slept again`, async () => {
    // Node's timers: a delay is truncated to whole ms, and one under 1 ms waits 1 ms.
    const t = manual(0);
    t.sleep = (ms: number) => {
      t.sleeps++;
      t.now += ms < 1 ? 1 : Math.trunc(ms);
      return Promise.resolve();
    };
    await waitUntil(10.9, t, { spinMarginMs: 0.5 });
    // 10.4 ms asked, 10 slept; 0.4 ms more would have been a whole millisecond (at 11.0, late).
    assert.equal(t.sleeps, 1);
    assert.ok(t.now >= 10.9 && t.now < 10.92, `${t.now}`);
    // A wait under the margin plus a timer's millisecond is spun from the start.
    const t2 = manual(0);
    await waitUntil(1.2, t2, { spinMarginMs: 0.5 });
    assert.deepEqual([t2.sleeps, t2.now >= 1.2 && t2.now < 1.22], [0, true]);
  });
  test("an aborted signal returns at once", async () => {
    const t = manual(0);
    const ac = new AbortController();
    ac.abort();
    await waitUntil(1e6, t, { signal: ac.signal });
    assert.equal(t.now, 0);
  });
});

/**
 * A manual clock with a precise sleep that wakes `lateMs` late (0.1 ms: Bun's waitAsync beside
 * timers) and records what it was asked; its whole-millisecond `sleep` must not be used.
 */
function precise(lateMs: number) {
  const t = manual(0);
  const asked: { ms: number; signal: AbortSignal | undefined }[] = [];
  const spins: [number, number][] = [];
  const timers: PacerTimers = {
    clock: t.clock,
    sleep: () => Promise.reject(new Error("the timer sleep was used although a precise one was given")),
    yieldNow: t.yieldNow,
    spinUntil: (deadline, clock) => {
      spins.push([deadline, clock()]);
      t.now = Math.max(t.now, deadline);
      return Promise.resolve();
    },
    sleepPrecise: (ms, signal) => {
      asked.push({ ms, signal });
      t.now += ms + lateMs;
      return Promise.resolve();
    },
  };
  return { t, timers, asked, spins };
}

describe("waitUntil with a precise sleep", () => {
  test(`sleeps precisely to ${PRECISE_SPIN_MARGIN_MS} ms before the deadline (not to a timer's margin), then spins only that`, async () => {
    // The sleep wakes late by half the margin (Bun's waitAsync beside timers wakes ~0.1 ms late).
    const late = PRECISE_SPIN_MARGIN_MS / 2;
    const p = precise(late);
    await waitUntil(100, p.timers);
    assert.deepEqual(p.asked.map((a) => a.ms), [100 - PRECISE_SPIN_MARGIN_MS]);
    assert.equal(p.spins.length, 1, "one spin");
    assert.ok(Math.abs(p.spins[0][1] - (100 - PRECISE_SPIN_MARGIN_MS + late)) < 1e-9, `the spin began at ${p.spins[0][1]}`);
    assert.equal(p.t.now, 100);
    assert.deepEqual(pacingOf(p.timers), { sleep: "precise", spin_margin_ms: PRECISE_SPIN_MARGIN_MS });
  });
  test("a caller's margin still rules; a sleep that wakes early is slept again; the signal reaches the sleep", async () => {
    const p = precise(0);
    const exact = p.timers.sleepPrecise!;
    let first = true;
    p.timers.sleepPrecise = async (ms, signal) => {
      await exact(ms, signal);
      if (first) p.t.now -= 3; // the first wake comes 3 ms early
      first = false;
    };
    const ac = new AbortController();
    await waitUntil(50, p.timers, { spinMarginMs: 1, signal: ac.signal });
    assert.deepEqual(p.asked.map((a) => a.ms), [49, 3]);
    assert.ok(p.asked.every((a) => a.signal === ac.signal), "each sleep can be cut short by the abort");
    assert.equal(p.t.now, 50);
    assert.deepEqual(pacingOf(p.timers, 1), { sleep: "precise", spin_margin_ms: 1 });
  });
  test("without one, the timer sleep and its margin, as before", () => {
    assert.deepEqual(pacingOf(manual(0)), { sleep: "timer", spin_margin_ms: DEFAULT_SPIN_MARGIN_MS });
  });
  test("REAL_TIMERS sleep with the runtime's precise sleep where it has one; setPreciseSleep swaps it, null takes it away", () => {
    const had = REAL_TIMERS.sleepPrecise;
    assert.equal(had, runtime.preciseSleep ?? undefined, "the runtime shim's sleep (Bun's), else none");
    const mine = () => Promise.resolve();
    try {
      setPreciseSleep(mine);
      assert.equal(REAL_TIMERS.sleepPrecise, mine);
      assert.equal(pacingOf(REAL_TIMERS).sleep, "precise");
      setPreciseSleep(null);
      assert.equal(REAL_TIMERS.sleepPrecise, undefined);
      assert.equal(pacingOf(REAL_TIMERS).sleep, "timer");
    } finally {
      setPreciseSleep(had ?? null);
    }
  });
});

describe("the real timers' spin", () => {
  test("waitUntil's last stretch is one spinUntil on the given clock, not a yield per turn", async () => {
    const t = manual(0);
    const spins: [number, number][] = [];
    const spinning = {
      ...t,
      clock: t.clock,
      spinUntil: (deadline: number, clock: () => number) => {
        spins.push([deadline, clock()]);
        t.now = deadline;
        return Promise.resolve();
      },
    };
    await waitUntil(10, spinning, { spinMarginMs: 0.5 });
    assert.deepEqual(spins, [[10, 9.5]], "one spin, from the margin to the deadline");
    assert.equal(t.yields, 0);
  });
  test("REAL_TIMERS.spinUntil resolves at the deadline on its clock (never early), and at once when aborted", async () => {
    const spin = REAL_TIMERS.spinUntil!;
    const start = performance.now();
    let reads = 0;
    const clock = () => {
      reads++;
      return performance.now();
    };
    await spin(start + 3, clock);
    assert.ok(performance.now() >= start + 3, "not before the deadline");
    // (Not "more than one read": a host that deschedules this process for 3 ms makes the first turn the last.)
    assert.ok(reads >= 1, "the deadline is judged on the given clock");
    const ac = new AbortController();
    const far = spin(performance.now() + 60_000, clock, ac.signal);
    ac.abort();
    const t0 = performance.now();
    await far;
    assert.ok(performance.now() - t0 < 1000, "an abort ends the spin within a turn");
  });
  test("the spin leaves the event loop free: timers and I/O callbacks run while it waits", async () => {
    // A spin that blocks (a busy-wait) lets no timer run at all; any tick proves the loop turned.
    // One tick is enough: a loaded host may deschedule this process for most of the spin.
    let ticks = 0;
    const iv = setInterval(() => ticks++, 1);
    try {
      await REAL_TIMERS.spinUntil!(performance.now() + 50, () => performance.now());
    } finally {
      clearInterval(iv);
    }
    assert.ok(ticks >= 1, `a 1 ms interval ran ${ticks} times during a 50 ms spin`);
  });
  test(`the spin yields every ${SPIN_SLICE_MS} ms or so, not every turn: a 20 ms spin turns the loop at most ~1,000 times`, async () => {
    // A chain of setImmediate runs once per turn of the loop. A spin that yielded every turn let it
    // run ~30,000 times in 20 ms (0.65 µs a turn, 2-vCPU AMD EPYC): ~50 bytes of garbage each.
    let turns = 0, on = true;
    const observe = () => {
      turns++;
      if (on) setImmediate(observe);
    };
    setImmediate(observe);
    try {
      await REAL_TIMERS.spinUntil!(performance.now() + 20, () => performance.now());
    } finally {
      on = false;
    }
    assert.ok(turns >= 1, "the loop turned");
    assert.ok(turns <= 2 * (20 / SPIN_SLICE_MS), `${turns} turns of the loop in a 20 ms spin`);
  });
  test("a clock that never moves still yields (each slice reads it a bounded number of times): an abort ends the spin", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 5);
    const t0 = performance.now();
    await REAL_TIMERS.spinUntil!(1, () => 0, ac.signal);
    assert.ok(performance.now() - t0 < 5000, "the spin ended on the abort");
  });
});

describe("runOpenLoop", () => {
  test("each send is told the loop thread's wait for a CPU over its own wait for its deadline (read before and after)", async () => {
    const t = manual(0);
    let wait = 10;
    // The wait grows by 2 ms during every sleep: what each request's stretch saw.
    const timers = { ...t, sleep: (ms: number) => {
      wait += 2;
      t.now += ms;
      return Promise.resolve();
    } };
    const got: [number, number | null][] = [];
    const keep = <T>(into: T[], v: T) => (into.push(v), Promise.resolve());
    await runOpenLoop((i, _due, cpuWait) => keep(got, [i, cpuWait]), { offsetsMs: [5, 10, 10], timers, spinMarginMs: 0, cpuWaitMs: () => wait });
    assert.deepEqual(got, [[0, 2], [1, 2], [2, 0]], "a request already due when its turn came waited no CPU in between");
    const none: (number | null)[] = [];
    await runOpenLoop((_i, _due, cpuWait) => keep(none, cpuWait), { offsetsMs: [1, 2], timers: manual(0) });
    assert.deepEqual(none, [null, null], "a caller's timers without a reader: not read");
    const broken: (number | null)[] = [];
    await runOpenLoop((_i, _due, cpuWait) => keep(broken, cpuWait), { offsetsMs: [1], timers: manual(0), cpuWaitMs: () => null });
    assert.deepEqual(broken, [null], "a reader that cannot read");
  });
  test("each request at t0 + offset (never early), lag recorded by the caller, all awaited", async () => {
    const t = manual(0.8);
    const sends: { i: number; due: number; at: number }[] = [];
    let ended = 0;
    const offsets = [10, 20, 20.5, 200];
    const out = await runOpenLoop(async (i, due) => {
      sends.push({ i, due, at: t.now });
      await Promise.resolve();
      ended++;
    }, { offsetsMs: offsets, timers: t, spinMarginMs: 1.5 });
    assert.equal(out.sent, 4);
    assert.equal(ended, 4);
    assert.deepEqual(out.pacing, { sleep: "timer", spin_margin_ms: 1.5 }, "the outcome says how it paced");
    for (const s of sends) {
      assert.equal(s.due, out.t0Ms + offsets[s.i]);
      assert.ok(s.at >= s.due && s.at - s.due < 0.02, `request ${s.i}: lag ${s.at - s.due}`);
    }
  });
  test("on a precise sleep each request is on time, and the outcome says so", async () => {
    const p = precise(0.1);
    const lags: number[] = [];
    const out = await runOpenLoop((_i, due) => {
      lags.push(p.t.now - due);
      return Promise.resolve();
    }, { offsetsMs: [5, 7.25, 30], timers: p.timers });
    assert.equal(out.sent, 3);
    assert.ok(lags.every((l) => l >= 0 && l < 1e-9), `lags ${lags}`);
    assert.deepEqual(out.pacing, { sleep: "precise", spin_margin_ms: PRECISE_SPIN_MARGIN_MS });
  });
  test("behind schedule it sends at once; a failing send does not stop the level; abort stops sending", async () => {
    const t = manual(0);
    const seen: number[] = [];
    const ac = new AbortController();
    const out = await runOpenLoop((i) => {
      seen.push(i);
      t.now += 50; // the caller's own work ran long
      if (i === 1) return Promise.reject(new Error("boom"));
      if (i === 3) ac.abort();
      return Promise.resolve();
    }, { offsetsMs: [1, 2, 3, 4, 5, 6], timers: t, signal: ac.signal });
    assert.deepEqual(seen, [0, 1, 2, 3]);
    assert.equal(out.sent, 4);
  });
  test(`a burst due at once (--request-rate inf) is sent ${START_SLICE} per turn of the event loop`, async () => {
    const t = manual(0);
    const yieldsAt: number[] = [];
    const out = await runOpenLoop(() => {
      yieldsAt.push(t.yields);
      return Promise.resolve();
    }, { offsetsMs: new Float64Array(50), timers: t });
    assert.equal(out.sent, 50);
    for (let k = 0; k < 50; k++) assert.equal(yieldsAt[k], Math.floor((k + 1) / START_SLICE), `send ${k}`);
  });
});

describe("runClosedLoop", () => {
  test("N workers back to back until the duration or the cap", async () => {
    const t = manual(0);
    let inFlight = 0, maxInFlight = 0;
    const send = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await Promise.resolve();
      t.now += 10 / 4; // each of the 4 workers' turns advances the shared clock
      await Promise.resolve();
      inFlight--;
    };
    const out = await runClosedLoop(send, { workers: 4, durationS: 1, timers: t });
    assert.equal(maxInFlight, 4);
    assert.ok(out.sent >= 395 && out.sent <= 405, `${out.sent}`);
    const capped = await runClosedLoop(send, { workers: 4, durationS: 1000, maxRequests: 9, timers: t });
    assert.equal(capped.sent, 9);
  });

  test(`every start, the first ones and each worker's next, goes ${START_SLICE} per turn of the event loop`, async () => {
    let turns = 0;
    const now = 0;
    const timers = { clock: () => now, yieldNow: () => new Promise<void>((r) => setImmediate(r)).then(() => void turns++) };
    const startsByTurn = new Map<number, number>();
    let inFlight = 0, maxInFlight = 0;
    // Requests that end at once (a closed loop of equal lengths): the next ones would all start on that turn.
    const send = async () => {
      startsByTurn.set(turns, (startsByTurn.get(turns) ?? 0) + 1);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
    };
    const out = await runClosedLoop(send, { workers: 40, durationS: 1000, maxRequests: 200, timers });
    assert.equal(out.sent, 200);
    assert.equal(maxInFlight, 40, "all 40 workers in flight at once");
    const counts = [...startsByTurn.values()];
    assert.equal(counts.reduce((a, b) => a + b, 0), 200);
    assert.ok(Math.max(...counts) <= START_SLICE, `starts per turn: ${counts.join(" ")}`);
    assert.equal(startsByTurn.get(0), START_SLICE, "the first slice starts at once");
  });
});
