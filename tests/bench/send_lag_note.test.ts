/** Why a level's send lag flags it client-limited: the p99 over the limit, and what is left of it without the loop thread's wait for a CPU. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { sendLagNote } from "../../lib/bench/load_level.ts";

test("a send-lag note: over the limit only, with the lag less the loop thread's wait for a CPU where it was read", () => {
  assert.equal(sendLagNote(4.9, null, 5), null);
  assert.equal(sendLagNote(null, 1, 5), null);
  assert.equal(sendLagNote(7.25, null, 5), "send lag p99 7.3 ms > 5 ms");
  assert.equal(sendLagNote(7.25, undefined, 5), "send lag p99 7.3 ms > 5 ms", "a record made before the wait was read");
  assert.match(sendLagNote(7.25, 0.8, 5) as string, /^send lag p99 7\.3 ms > 5 ms \(0\.8 ms less the loop thread's wait for a CPU: the rest was the host/);
  assert.equal(sendLagNote(9, 6, 5), "send lag p99 9.0 ms > 5 ms (6.0 ms less the loop thread's wait for a CPU)");
});
