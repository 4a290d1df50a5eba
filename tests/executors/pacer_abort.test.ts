/**
 * waitUntil ends at once when its signal aborts, even in the middle of a long sleep (a sharded
 * shard waiting minutes for --start-at must stop on SIGTERM). Both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "../../lib/executors/mod.ts";

test("an abort ends a long wait within a few ms", async () => {
  const ac = new AbortController();
  const t0 = performance.now();
  setTimeout(() => ac.abort(), 30);
  await waitUntil(t0 + 60_000, undefined, { signal: ac.signal });
  const took = performance.now() - t0;
  assert.ok(took < 1000, `waited ${took.toFixed(0)} ms after the abort`);
});
