/**
 * The settings a measuring Bun process starts with (lib/runtime/_start_env.ts): the fetch cap, and
 * the collector's full-collection trigger only where it was measured and not set by the user.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BUN_FETCH_LIMIT_ENV, COLLECTOR_ENV, COLLECTOR_VALUE, measuringStartEnv } from "../../lib/runtime/mod.ts";

const none = () => undefined;

test("a measuring Bun 1.4 process starts with the fetch cap and the collector setting", () => {
  assert.deepEqual(measuringStartEnv(none, "1.4.5"), { [BUN_FETCH_LIMIT_ENV]: "65336", [COLLECTOR_ENV]: COLLECTOR_VALUE });
  assert.equal(COLLECTOR_ENV, "BUN_JSC_minEdenToOldGenerationRatio");
  assert.ok(Number(COLLECTOR_VALUE) > 1 / 3 && Number(COLLECTOR_VALUE) < 1, "a trigger above JSC's default and below 1");
});

test("the user's own collector value is kept (not overridden, not added again)", () => {
  const env = (n: string) => (n === COLLECTOR_ENV ? "0.5" : undefined);
  assert.deepEqual(measuringStartEnv(env, "1.4.5"), { [BUN_FETCH_LIMIT_ENV]: "65336" });
});

test("a Bun line the collector option was not measured on gets only the fetch cap (JSC refuses an option it lacks)", () => {
  for (const v of ["1.5.0", "2.0.1", "1.3.9", "weird"]) assert.deepEqual(measuringStartEnv(none, v), { [BUN_FETCH_LIMIT_ENV]: "65336" }, v);
});
