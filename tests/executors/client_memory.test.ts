/** The client-memory sampler (lib/executors/client_memory.ts): each part's peak over the level, in MiB. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type MemoryReading, startClientMemory } from "../../lib/executors/client_memory.ts";

const MIB = 1024 * 1024;
const reading = (rss: number, heap: number, ext: number, ab: number): MemoryReading => ({ rss: rss * MIB, heapUsed: heap * MIB, external: ext * MIB, arrayBuffers: ab * MIB });

test("each part's peak is its own maximum, read at the start, every interval and at the stop", async () => {
  const seq = [reading(50, 10, 3, 1), reading(80, 30, 2, 2), reading(60, 40, 9, 1.25)];
  let i = 0;
  const m = startClientMemory(() => seq[Math.min(i++, seq.length - 1)], 5);
  await new Promise((r) => setTimeout(r, 30));
  const rec = m.stop();
  assert.ok(rec.samples >= 3, `samples ${rec.samples}`);
  assert.deepEqual({ ...rec, samples: 0 }, { samples: 0, rss_peak_mib: 80, heap_used_peak_mib: 40, external_peak_mib: 9, array_buffers_peak_mib: 2 });
});

test("a reader that throws is skipped; none read gives nulls, not zeros", () => {
  const none = startClientMemory(() => {
    throw new Error("no /proc");
  }, 1000).stop();
  assert.deepEqual(none, { samples: 0, rss_peak_mib: null, heap_used_peak_mib: null, external_peak_mib: null, array_buffers_peak_mib: null });
  let k = 0;
  const some = startClientMemory(() => {
    if (k++ === 0) throw new Error("once");
    return reading(12.34, 1, 1, 0);
  }, 1000).stop();
  assert.equal(some.samples, 1);
  assert.equal(some.rss_peak_mib, 12.3);
});
