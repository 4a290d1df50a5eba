/** GPU memory: the real nvidia-smi CSV, waiting back to baseline with an injected clock, and no nvidia-smi. */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runtimeExec } from "../../lib/commands/_exec.ts";
import {
  GPU_MEMORY_QUERY,
  gpuMemoryUsedMib,
  parseGpuMemoryCsv,
  waitGpuMemory,
} from "../../lib/engines_host/gpu_memory.ts";
import type { ExecFn } from "../../lib/gpu/nvidia_smi.ts";
import { runtime } from "../../lib/runtime/mod.ts";

// What `nvidia-smi --query-gpu=memory.used,name --format=csv,noheader,nounits` prints.
const CSV_2 = (a: number, b: number) => `${a}, NVIDIA H200\n${b}, NVIDIA H200\n`;

/** A fake exec printing successive outputs (the last one repeats), recording argv. */
function fakeExec(outputs: string[], calls: string[][] = []): ExecFn {
  let i = 0;
  return (argv) => {
    calls.push(argv);
    const out = outputs[Math.min(i++, outputs.length - 1)];
    return Promise.resolve({ code: 0, stdout: out });
  };
}

/** A fake clock advanced only by the injected sleep. */
function fakeClock() {
  let t = 1000;
  const sleeps: number[] = [];
  return { now: () => t, sleep: (ms: number) => (sleeps.push(ms), t += ms, Promise.resolve()), sleeps };
}

test("parses one line per GPU; [N/A] stays a GPU with null", () => {
  assert.deepEqual(parseGpuMemoryCsv("1234, NVIDIA H200\n0, NVIDIA H200\n[N/A], NVIDIA A100-SXM4-80GB MIG 3g.40gb\n\ngarbage\n"), [
    { index: 0, name: "NVIDIA H200", usedMib: 1234 },
    { index: 1, name: "NVIDIA H200", usedMib: 0 },
    { index: 2, name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb", usedMib: null },
  ]);
});

test("gpuMemoryUsedMib sends the documented query", async () => {
  const calls: string[][] = [];
  const r = await gpuMemoryUsedMib(fakeExec([CSV_2(100, 200)], calls));
  assert.deepEqual(calls[0], ["nvidia-smi", "--query-gpu=memory.used,name", "--format=csv,noheader,nounits"]);
  assert.deepEqual(GPU_MEMORY_QUERY, calls[0]);
  assert.equal(r.available, true);
  assert.deepEqual(r.gpus.map((g) => g.usedMib), [100, 200]);
});

test("waits until every GPU is back within the tolerance", async () => {
  const c = fakeClock();
  const exec = fakeExec([CSV_2(40000, 300), CSV_2(9000, 300), CSV_2(812, 300), CSV_2(0, 0)]);
  const r = await waitGpuMemory([300, 200], { exec, sleep: c.sleep, now: c.now });
  assert.equal(r.ok, true);
  assert.equal(r.skipped, false);
  assert.deepEqual(r.last, [812, 300], "812 ≤ 300 + 512");
  assert.equal(r.waitedMs, 1000);
  assert.deepEqual(c.sleeps, [500, 500]);
  assert.match(r.note ?? "", /back within 512 MiB of baseline after 1000 ms/);
});

test("at once when already back: no note", async () => {
  const c = fakeClock();
  const r = await waitGpuMemory(await gpuMemoryUsedMib(fakeExec([CSV_2(500, 10)])), {
    exec: fakeExec([CSV_2(600, 10)]), sleep: c.sleep, now: c.now,
  });
  assert.deepEqual([r.ok, r.waitedMs, r.note, c.sleeps.length], [true, 0, null, 0]);
});

test("times out after 60 s (injected clock), naming the GPU still above", async () => {
  const c = fakeClock();
  const r = await waitGpuMemory([300, 300], { exec: fakeExec([CSV_2(300, 5000)]), sleep: c.sleep, now: c.now });
  assert.equal(r.ok, false);
  assert.equal(r.waitedMs, 60000);
  assert.equal(c.sleeps.length, 120);
  assert.match(r.note ?? "", /not back after 60000 ms: still above baseline \+ 512 MiB: GPU 1: 5000 MiB \(baseline 300\)/);
  const short = await waitGpuMemory(100, { exec: fakeExec([CSV_2(1000, 0)]), sleep: c.sleep, now: c.now, timeoutMs: 1200, toleranceMib: 100 });
  assert.equal(short.ok, false);
  assert.equal(short.waitedMs, 1200);
});

test("no nvidia-smi: skipped with a note, never a failure", async () => {
  const c = fakeClock();
  const missing: ExecFn = () => Promise.resolve({ code: 127, stdout: "" });
  const before = await gpuMemoryUsedMib(missing);
  assert.equal(before.available, false);
  const r = await waitGpuMemory(before, { exec: missing, sleep: c.sleep, now: c.now });
  assert.deepEqual([r.ok, r.skipped], [true, true]);
  assert.match(r.note ?? "", /skipped: no baseline \(no nvidia-smi on PATH\)/);
  const gone = await waitGpuMemory([100], { exec: () => Promise.reject(new Error("ENOENT")), sleep: c.sleep, now: c.now, timeoutMs: 2000 });
  assert.deepEqual([gone.ok, gone.skipped], [true, true]);
  assert.match(gone.note ?? "", /could not be run/);
  const vanished = await waitGpuMemory([100], { exec: missing, sleep: c.sleep, now: c.now });
  assert.deepEqual([vanished.ok, vanished.skipped, vanished.waitedMs], [true, true, 0]);
});

test("a fake nvidia-smi script run through the real runtime exec", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-fake-smi-"));
  try {
    const script = join(dir, "nvidia-smi");
    await writeFile(script, `#!/bin/sh\n[ "$1" = "--query-gpu=memory.used,name" ] || exit 2\nprintf '1536, NVIDIA H200\\n0, NVIDIA H200\\n'\n`);
    await chmod(script, 0o755);
    const real = runtimeExec(runtime);
    const exec: ExecFn = (argv, o) => real([script, ...argv.slice(1)], o);
    const r = await gpuMemoryUsedMib(exec);
    assert.deepEqual(r, {
      available: true,
      note: null,
      gpus: [{ index: 0, name: "NVIDIA H200", usedMib: 1536 }, { index: 1, name: "NVIDIA H200", usedMib: 0 }],
    });
    const w = await waitGpuMemory([1024, 0], { exec });
    assert.equal(w.ok, true);
    const none = await gpuMemoryUsedMib((argv, o) => real([join(dir, "absent"), ...argv.slice(1)], o));
    assert.equal(none.available, false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
