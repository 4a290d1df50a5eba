/** The reader of a thread's wait for a CPU: the schedstat file's second field, read in place; null where it cannot be read. */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openCpuWaitReader, threadCpuWaitMs } from "../../lib/executors/mod.ts";

test("the second field of a schedstat file, ns to ms, read again on each call", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-schedstat-"));
  try {
    const f = join(dir, "schedstat");
    await writeFile(f, "734412345 2500000 81\n");
    const read = openCpuWaitReader(f);
    assert.ok(read !== null);
    assert.equal(read(), 2.5);
    // Each call reads the file from its start again (a longer value, a shorter one).
    await writeFile(f, "734412345 1234567890123 90\n");
    assert.equal(read(), 1234567.890123);
    await writeFile(f, "1 7 2\n");
    assert.equal(read(), 0.000007);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("no reader for a missing file or one without a second number; a reader that later fails stays null", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-schedstat-"));
  try {
    assert.equal(openCpuWaitReader(join(dir, "absent")), null);
    const f = join(dir, "schedstat");
    await writeFile(f, "734412345\n");
    assert.equal(openCpuWaitReader(f), null, "one field only");
    await writeFile(f, "1 2 3\n");
    const read = openCpuWaitReader(f) as () => number | null;
    assert.equal(read(), 0.000002);
    await writeFile(f, "garbage\n");
    assert.equal(read(), null);
    await writeFile(f, "1 2 3\n");
    assert.equal(read(), null, "once broken, always null");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("this thread's real wait, where Linux reports it: a number that never goes down", () => {
  const a = threadCpuWaitMs();
  if (a === null) return void console.error("no /proc/thread-self/schedstat here: nothing to check");
  const t = performance.now();
  while (performance.now() - t < 5);
  const b = threadCpuWaitMs() as number;
  assert.ok(Number.isFinite(a) && a >= 0 && b >= a, `${a} then ${b}`);
});
