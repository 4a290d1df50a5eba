/**
 * No timer of the mock ever gets a delay above 2^31 − 1 ms (past it setTimeout fires at once and
 * the runtimes warn): deadlines further off are reached in several timers. Every setTimeout is
 * watched while the mock sleeps towards far deadlines; well under a second.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_TIMER_MS } from "../../lib/cli/limits.ts";
import { createMock, parseFault } from "../../lib/mock/mod.ts";
import { DeadlineSleeper, nowMs, sleepUntil } from "../../lib/mock/token_source.ts";
import { chatBody } from "./_helpers.ts";

/** Runs `fn` with setTimeout wrapped, returning every delay asked for. */
async function watchTimers(fn: () => Promise<void>): Promise<number[]> {
  const real = globalThis.setTimeout;
  const delays: number[] = [];
  globalThis.setTimeout = ((cb: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return real(cb, ms);
  }) as typeof setTimeout;
  try {
    await fn();
  } finally {
    globalThis.setTimeout = real;
  }
  return delays;
}

const post = (body: unknown) =>
  new Request("http://mock/v1/chat/completions", { method: "POST", body: JSON.stringify(body) });

describe("timers stay within 2^31 − 1 ms", () => {
  it("sleepUntil a deadline 50 days off waits (one capped timer) instead of firing", async () => {
    const stop = new AbortController();
    let settled: boolean | null = null;
    const delays = await watchTimers(async () => {
      const p = sleepUntil(nowMs() + 50 * 86_400_000, stop.signal).then((r) => (settled = r));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(settled, null, "still waiting after 100 ms");
      stop.abort();
      await p;
    });
    assert.equal(settled, false);
    assert.ok(delays.length > 0 && delays.every((d) => d <= MAX_TIMER_MS), `delays ${delays}`);
  });

  it("the timing model, stall and slow-headers, and the simulator's steps, at their largest", async () => {
    const delays = await watchTimers(async () => {
      // TTFT = ttft + prefill × prompt tokens, two stalls, a prefill step: each far past one timer.
      const mocks = [
        createMock({ ttftMs: MAX_TIMER_MS, prefillMsPerToken: MAX_TIMER_MS }),
        createMock({ ttftMs: 0, faults: [parseFault("stall:2147483"), parseFault("stall:2147483")] }),
        createMock({ ttftMs: 0, faults: [parseFault("slow-headers:2147483")] }),
        createMock({ maxBatch: 1, stepMs: MAX_TIMER_MS, prefillMsPerToken: MAX_TIMER_MS }),
      ];
      const readers = mocks.map(async (m) => {
        const r = await m.fetch(post(chatBody("far", { max_tokens: 3 })));
        const reader = r.body!.getReader();
        // Read what comes (role chunk, first token) so the writer goes on to its far deadline.
        while (!(await reader.read()).done) { /* until close() ends it */ }
      });
      await new Promise((r) => setTimeout(r, 100));
      for (const m of mocks) m.close();
      await Promise.all(readers.map((p) => p.catch(() => {})));
    });
    const over = delays.filter((d) => d > MAX_TIMER_MS);
    assert.deepEqual(over, [], `timers over the limit: ${over}`);
    assert.ok(delays.some((d) => d === MAX_TIMER_MS), "the far deadlines were capped, not dropped");
  });
});

describe("DeadlineSleeper", () => {
  it("wakes at its deadline, never before; a past deadline at once; cancel wakes a sleep false and ends later ones", async () => {
    const s = new DeadlineSleeper();
    const t0 = nowMs();
    assert.equal(await s.until(t0 + 30), true);
    assert.ok(nowMs() >= t0 + 30, `woke ${(t0 + 30 - nowMs()).toFixed(2)} ms early`);
    assert.equal(await s.until(nowMs() - 5), true);
    let settled: boolean | null = null;
    const p = s.until(nowMs() + 50 * 86_400_000).then((r) => (settled = r));
    assert.throws(() => s.until(nowMs() + 10), /one sleep at a time/);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(settled, null, "still sleeping");
    s.cancel();
    await p;
    assert.equal(settled, false);
    assert.equal(s.cancelled, true);
    assert.equal(await s.until(nowMs() + 10_000), false, "after cancel: at once");
    assert.equal(await s.until(nowMs() - 1), false, "after cancel, even a past deadline");
  });

  it("asks no timer for more than 2^31 − 1 ms", async () => {
    const s = new DeadlineSleeper();
    const delays = await watchTimers(async () => {
      const p = s.until(nowMs() + 50 * 86_400_000);
      await new Promise((r) => setTimeout(r, 10));
      s.cancel();
      await p;
    });
    assert.ok(delays.length > 0 && delays.every((d) => d <= MAX_TIMER_MS), `delays ${delays}`);
  });
});
