/**
 * The clock limitation a slice and a merge state from a host's adjtimex state (issue 12): unsynced
 * or an estimated error over 5 ms is named, an unreadable state is named, a synced host within
 * 5 ms is not. Pure; both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CLOCK_ERROR_LIMIT_MS, clockLimitation } from "../../lib/shard/slice_record.ts";

const synced = { source: "adjtimex", state: 0, state_name: "TIME_OK", unsynced: false, est_error_ms: 0.8, max_error_ms: 12 };

test("a synced host within 5 ms needs no limitation; unsynced, over 5 ms and unreadable do", () => {
  assert.equal(CLOCK_ERROR_LIMIT_MS, 5);
  assert.equal(clockLimitation(synced, "shard 0/2"), null);
  assert.equal(clockLimitation({ ...synced, est_error_ms: 5 }, "shard 0/2"), null);
  assert.match(clockLimitation({ ...synced, est_error_ms: 5.001 }, "shard 1/2") ?? "", /^shard 1\/2: .*estimated error of 5\.001 ms \(> 5 ms\)/);
  assert.match(clockLimitation({ ...synced, unsynced: true, state: 5, state_name: "TIME_ERROR", est_error_ms: 16000 }, "shard 3/4") ?? "", /^shard 3\/4: .*not synchronised \(TIME_ERROR, estimated error 16000\.000 ms\)/);
  assert.match(clockLimitation({ source: "unavailable", reason: "this build has no FFI to call adjtimex" }, "shard 0/1") ?? "", /could not be read \(this build has no FFI/);
  assert.match(clockLimitation(undefined, "shard 0/1") ?? "", /could not be read/);
});
