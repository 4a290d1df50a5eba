/**
 * The streaming loop's one deadline timer (lib/client/_deadlines.ts): requests are looked at when
 * the earliest of them asked, each says when to look again, and one whose check throws keeps being
 * watched (its limits must not silently go away).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeadlineWatch, type Watched } from "../../lib/client/_deadlines.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("each request's limit is acted on when it comes, the earliest first, and a request leaves once it says it is done", async () => {
  const w = new DeadlineWatch();
  const t0 = performance.now();
  const expired: Record<string, number> = {};
  // A request with a deadline: every look says how long is left, and the look after it expires it.
  const request = (name: string, afterMs: number): Watched => ({
    due: () => {
      const left = t0 + afterMs - performance.now();
      if (left > 0) return left;
      expired[name] = performance.now() - t0;
      return null;
    },
  });
  w.add(request("late", 300), 300);
  w.add(request("early", 30), 30);
  await sleep(200);
  assert.ok(expired.early >= 30 && expired.early < 200, `early expired at ${expired.early} ms`);
  assert.equal(expired.late, undefined, "the late one is not due yet");
  assert.equal(w.size, 1);
  await sleep(400);
  assert.ok(expired.late >= 300 && expired.late < 600, `late expired at ${expired.late} ms`);
  assert.equal(w.size, 0, "nothing stays watched");
});

test("a request whose check throws stays watched (looked at again later), until removed", async () => {
  const w = new DeadlineWatch();
  let calls = 0;
  const bad: Watched = {
    due: () => {
      calls++;
      throw new Error("a broken clock");
    },
  };
  w.add(bad, 5);
  await sleep(60);
  assert.equal(calls, 1);
  assert.equal(w.size, 1, "still watched after its check threw");
  w.remove(bad);
  assert.equal(w.size, 0);
});
