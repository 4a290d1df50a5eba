/** nvidia-smi CSV: real shapes (one GPU, eight, MIG [N/A] fields), and the identity a record keeps. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { gpuIdentity, parseGpuCsv, queryGpus } from "../../lib/gpu/mod.ts";

test("parses one line per GPU; [N/A] and [Not Supported] become null", () => {
  const text = "0, NVIDIA H200, 143771, 0, 570.86.15, GPU-1b2c\n1, NVIDIA H200, 143771, 1024, 570.86.15, GPU-3d4e\n" +
    "2, NVIDIA A100-SXM4-80GB MIG 3g.40gb, [N/A], [Not Supported], 535.104.05, [N/A]\n\ngarbage\n";
  const g = parseGpuCsv(text);
  assert.equal(g.length, 3);
  assert.deepEqual(g[1], { index: 1, name: "NVIDIA H200", memoryTotalMib: 143771, memoryUsedMib: 1024, driverVersion: "570.86.15", uuid: "GPU-3d4e" });
  assert.equal(g[2].memoryTotalMib, null);
  assert.equal(g[2].uuid, null);
  const id = gpuIdentity(g)!;
  assert.equal(id.name, "NVIDIA H200");
  assert.equal(id.count, 3);
  assert.deepEqual(id.names, ["NVIDIA H200", "NVIDIA A100-SXM4-80GB MIG 3g.40gb"]);
  assert.equal(gpuIdentity([]), null);
});

test("no nvidia-smi, or a failing one: no GPUs, never an exception", async () => {
  assert.deepEqual(await queryGpus(() => Promise.reject(new Error("ENOENT"))), []);
  assert.deepEqual(await queryGpus(() => Promise.resolve({ code: 9, stdout: "NVIDIA-SMI has failed" })), []);
  assert.equal((await queryGpus(() => Promise.resolve({ code: 0, stdout: "0, Tesla T4, 15360, 0, 550.1, GPU-x\n" })))[0].name, "Tesla T4");
});
