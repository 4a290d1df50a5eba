/**
 * The settings a measuring Bun process starts with (lib/runtime/_start_env.ts): the fetch cap, and
 * for a closed loop of many streams one collector setting (the full-collection trigger from 256
 * streams, the heap growth from 512), on the Bun line they were measured on, and never over or
 * beside the user's own collector value.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BUN_FETCH_LIMIT_ENV, COLLECTOR_ENV, COLLECTOR_MIN_STREAMS, COLLECTOR_VALUE, GROWTH_ENV, GROWTH_MIN_STREAMS, GROWTH_VALUE, measuringStartEnv } from "../../lib/runtime/mod.ts";
import { closedLoopStreams } from "../../lib/commands/bench_serve_modes.ts";

const none = () => undefined;
const CAP = { [BUN_FETCH_LIMIT_ENV]: "65336" };

test("a closed loop of many streams on Bun 1.4 starts with the fetch cap and one collector setting", () => {
  const GROW = { ...CAP, [GROWTH_ENV]: GROWTH_VALUE };
  const TRIGGER = { ...CAP, [COLLECTOR_ENV]: COLLECTOR_VALUE };
  assert.deepEqual(measuringStartEnv(none, "1.4.5", 1000), GROW);
  assert.deepEqual(measuringStartEnv(none, "1.4.5", GROWTH_MIN_STREAMS), GROW);
  assert.deepEqual(measuringStartEnv(none, "1.4.5", GROWTH_MIN_STREAMS - 1), TRIGGER);
  assert.deepEqual(measuringStartEnv(none, "1.4.5", COLLECTOR_MIN_STREAMS), TRIGGER);
  assert.equal(COLLECTOR_ENV, "BUN_JSC_minEdenToOldGenerationRatio");
  assert.ok(Number(COLLECTOR_VALUE) > 1 / 3 && Number(COLLECTOR_VALUE) < 1, "a trigger above JSC's default and below 1");
  assert.equal(GROWTH_ENV, "BUN_JSC_heapGrowthMaxIncrease");
  assert.ok(Number(GROWTH_VALUE) > 0 && Number(GROWTH_VALUE) < 2, "a growth below Bun's own 2.0, above none");
  assert.ok(COLLECTOR_MIN_STREAMS < GROWTH_MIN_STREAMS);
});

test("fewer streams (single mode, an open loop, selftest) keep JSC's default collector", () => {
  for (const n of [0, 1, 64, COLLECTOR_MIN_STREAMS - 1]) assert.deepEqual(measuringStartEnv(none, "1.4.5", n), CAP, `${n} streams`);
});

test("the user's own collector value is kept (not overridden, not added again), and ik adds none beside it", () => {
  for (const own of [COLLECTOR_ENV, GROWTH_ENV]) {
    const env = (n: string) => (n === own ? "0.5" : undefined);
    for (const n of [256, 1000]) assert.deepEqual(measuringStartEnv(env, "1.4.5", n), CAP, `${own} set, ${n} streams`);
  }
});

test("what is already set is left out: a rounds cell (fetch cap inherited) still gets the collector setting; nothing missing is no execve", () => {
  const cell = (n: string) => (n === BUN_FETCH_LIMIT_ENV ? "65336" : undefined);
  assert.deepEqual(measuringStartEnv(cell, "1.4.5", 1000), { [GROWTH_ENV]: GROWTH_VALUE }, "a 1,000-stream closed loop in a cell");
  assert.deepEqual(measuringStartEnv(cell, "1.4.5", 300), { [COLLECTOR_ENV]: COLLECTOR_VALUE }, "a 300-stream closed loop in a cell");
  assert.deepEqual(measuringStartEnv(cell, "1.4.5", 64), {}, "fewer streams: nothing to start with, so no execve");
  const user = (n: string) => (n === BUN_FETCH_LIMIT_ENV ? "300" : undefined);
  assert.deepEqual(measuringStartEnv(user, "1.4.5", 1000), { [GROWTH_ENV]: GROWTH_VALUE }, "the user's own fetch cap is not overridden");
  const both = (n: string) => (n === BUN_FETCH_LIMIT_ENV ? "65336" : n === GROWTH_ENV ? GROWTH_VALUE : undefined);
  assert.deepEqual(measuringStartEnv(both, "1.4.5", 1000), {}, "after the execve: nothing left, so no second one");
  const both256 = (n: string) => (n === BUN_FETCH_LIMIT_ENV ? "65336" : n === COLLECTOR_ENV ? COLLECTOR_VALUE : undefined);
  assert.deepEqual(measuringStartEnv(both256, "1.4.5", 256), {}, "after the execve at 256 streams");
  assert.deepEqual(measuringStartEnv((n) => (n === BUN_FETCH_LIMIT_ENV ? "" : undefined), "1.4.5", 64), CAP, "an empty value is no value");
});

test("a Bun line the collector options were not measured on gets only the fetch cap (JSC refuses an option it lacks)", () => {
  for (const v of ["1.5.0", "2.0.1", "1.3.9", "weird"]) for (const n of [256, 1000]) assert.deepEqual(measuringStartEnv(none, v, n), CAP, `${v}, ${n}`);
});

test("closedLoopStreams reads the largest closed-loop level from bench serve's parsed flags, else 0", () => {
  const serve = { cmd: "bench-serve", mode: "load" };
  assert.equal(closedLoopStreams({ ...serve, closedLoop: true, concurrency: ["1000"] }), 1000);
  assert.equal(closedLoopStreams({ ...serve, closedLoop: true, concurrency: ["64,512", " 256"] }), 512, "every level, flags given more than once");
  assert.equal(closedLoopStreams({ ...serve, closedLoop: false, concurrency: ["1000"] }), 0, "an open loop");
  assert.equal(closedLoopStreams({ ...serve, closedLoop: true, concurrency: ["auto"] }), 0);
  assert.equal(closedLoopStreams({ ...serve, closedLoop: true, concurrency: [] }), 0);
  assert.equal(closedLoopStreams({ cmd: "bench-rounds", closedLoop: true, concurrency: ["1000"] }), 0, "another command");
  assert.equal(closedLoopStreams({ cmd: "selftest" }), 0);
});
