/**
 * A load level whose seeded schedule holds no arrival in its duration is refused before anything
 * is sent (64, naming the duration that gives it one): a level that sends nothing measures no
 * verdict. Pure (the schedule only), both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { ExitCode } from "../../lib/cli/exit_codes.ts";
import { refuseEmptyLevels } from "../../lib/bench/serve_load.ts";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";

const base = { levelKind: "rate" as const, burstiness: 1, maxRequestsPerLevel: null, seed: 0 };

test("a rate level with no arrival in its duration is refused with 64 and the duration that would give one", () => {
  // At 0.01 req/s the first arrival of level 0 comes long after 1 s.
  const first = arrivalOffsetsMs({ ratePerS: 0.01, durationS: 1e9, maxRequests: 1, seed: levelSeed(0, 0) })[0] / 1000;
  assert.ok(first > 1);
  assert.throws(() => refuseEmptyLevels({ ...base, grid: [0.01, 5], durationS: 1 }, (r) => r), (e: unknown) => {
    assert.ok(e instanceof IkError);
    assert.equal(e.code, ExitCode.USAGE);
    assert.match(e.message, /level r0\.01 would send no request in 1 s \(seed 0: its first arrival is at [\d.]+ s\)/);
    assert.match(`${e.message} ${e.hint}`, new RegExp(`--duration-s ${Math.ceil(first)} or more`));
    return true;
  });
  // The suggested duration is enough: refused no more.
  refuseEmptyLevels({ ...base, grid: [0.01, 5], durationS: Math.ceil(first) }, (r) => r);
});

test("levels that each have an arrival pass; the level's own seed decides (level i uses levelSeed(seed, i))", () => {
  refuseEmptyLevels({ ...base, grid: [5, 10, 20], durationS: 2 }, (r) => r);
  // Find a (seed, level) pair the schedule leaves empty at rate 1 over 1 s (about 1 in 3 are), and check it is named.
  let found = false;
  for (let seed = 0; seed < 50 && !found; seed++) {
    const empty = arrivalOffsetsMs({ ratePerS: 1, durationS: 1, seed: levelSeed(seed, 1) }).length === 0;
    const firstOk = arrivalOffsetsMs({ ratePerS: 1, durationS: 1, seed: levelSeed(seed, 0) }).length > 0;
    if (!empty || !firstOk) continue;
    found = true;
    assert.throws(() => refuseEmptyLevels({ ...base, seed, grid: [1, 1.0000001], durationS: 1 }, (r) => r), /level r1\.0000001 would send no request/);
  }
  assert.ok(found, "some seed leaves level 1 empty at 1 req/s over 1 s");
});
