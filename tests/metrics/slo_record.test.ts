/** The record forms of an SLO and of the event-loop monitor (record schema 2), and reading schema-1 records' camelCase. */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { sloFromRecord, sloRecord } from "../../lib/metrics/mod.ts";
import { loopLagFromRecord, loopLagRecord } from "../../lib/executors/mod.ts";
import { RECORD_SCHEMA } from "../../lib/evidence/mod.ts";

describe("record forms (schema 2)", () => {
  test("an SLO is written snake_case and read back from either form", () => {
    assert.equal(RECORD_SCHEMA, 2);
    const slo = { ttftP95Ms: 500, tpotP95Ms: null, e2eP95Ms: 900, maxFail: 1 };
    const rec = sloRecord(slo);
    assert.deepEqual(rec, { ttft_p95_ms: 500, tpot_p95_ms: null, e2e_p95_ms: 900, max_fail: 1 });
    assert.deepEqual(sloFromRecord(rec), slo);
    assert.deepEqual(sloFromRecord({ ttftP95Ms: 500, tpotP95Ms: null, e2eP95Ms: 900, maxFail: 1 }), slo, "a schema-1 record's keys");
    assert.deepEqual(sloFromRecord({ ttft_p95_ms: 7 }), { ttftP95Ms: 7, tpotP95Ms: null, e2eP95Ms: null, maxFail: null });
    assert.equal(sloFromRecord(null), null);
    assert.equal(sloFromRecord({}), null);
    assert.equal(sloFromRecord([1]), null);
  });
  test("the event-loop monitor is written snake_case and read back from either form", () => {
    const rec = loopLagRecord({ samples: 5, p50Ms: 0.1, p99Ms: 2, maxMs: 3, ownP99Ms: 1, ownMaxMs: 1.5, cpuWaitMs: 4 });
    assert.deepEqual(rec, { samples: 5, p50_ms: 0.1, p99_ms: 2, max_ms: 3, own_p99_ms: 1, own_max_ms: 1.5, cpu_wait_ms: 4 });
    assert.deepEqual(loopLagFromRecord(rec), rec);
    const old = { samples: 5, p50_ms: 0.1, p99_ms: 2, max_ms: 3, own_p99_ms: null, own_max_ms: null, cpu_wait_ms: null };
    assert.deepEqual(loopLagFromRecord({ samples: 5, p50Ms: 0.1, p99Ms: 2, maxMs: 3 }), old, "a schema-1 record's keys");
    assert.deepEqual(loopLagFromRecord({ samples: 5, p50_ms: 0.1, p99_ms: 2, max_ms: 3 }), old, "a record from before the CPU wait was read");
    assert.deepEqual(loopLagFromRecord(undefined), { samples: 0, p50_ms: null, p99_ms: null, max_ms: null, own_p99_ms: null, own_max_ms: null, cpu_wait_ms: null });
  });
});
