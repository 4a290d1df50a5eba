/**
 * Through the binary: `ik prompts info/synth` and the GPU identity a local bench serve reads from
 * nvidia-smi (a fake one on PATH printing the real CSV format). ~3 s.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let dir = "";
let mock: MockProc;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-prompts-gpu-"));
  mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1"]);
});
after(async () => {
  await mock.stop();
  await rm(dir, { recursive: true, force: true });
});

test("prompts info --json of the built-in set; synth writes a set and its manifest that validate", async () => {
  const info = await runIk(["prompts", "info", "builtin:default", "--json"]);
  assert.equal(info.code, 0, info.stderr);
  const d = JSON.parse(info.stdout);
  assert.equal(d.name, "builtin:default");
  assert.deepEqual(Object.keys(d.buckets), ["very_short", "short", "medium", "long"]);
  const out = join(dir, "s.jsonl.gz");
  const s = await runIk(["prompts", "synth", "--bucket", "short:20:8,long:200:16", "--per-bucket", "3", "--out", out, "--json"]);
  assert.equal(s.code, 0, s.stderr);
  const v = await runIk(["prompts", "validate", out, "--json"]);
  assert.equal(v.code, 0, v.stderr);
  assert.equal(JSON.parse(v.stdout).sha256, JSON.parse(s.stdout).sha256, "the manifest's sha256 matches the uncompressed bytes");
  assert.equal(JSON.parse(v.stdout).n, 6);
  const bad = await runIk(["prompts", "synth", "--bucket", "short-20-8", "--out", out]);
  assert.equal(bad.code, 64);
});

test("a local server: the record's GPU comes from nvidia-smi; --gpu-name wins", async () => {
  await writeFile(join(dir, "nvidia-smi"), "#!/bin/sh\nprintf '0, NVIDIA H200, 143771, 512, 570.86.15, GPU-aa\\n1, NVIDIA H200, 143771, 0, 570.86.15, GPU-bb\\n'\n");
  await chmod(join(dir, "nvidia-smi"), 0o755);
  const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key"), PATH: `${dir}:${runtime.env("PATH")}` };
  const args = ["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "1", "--warmup", "0", "--limit-per-bucket", "1", "--max-tokens", "4", "--json"];
  const r = await runIk(args, { env });
  assert.equal(r.code, 0, r.stderr);
  const rec = JSON.parse(r.stdout);
  assert.equal(rec.identity.gpu.name, "NVIDIA H200");
  assert.equal(rec.identity.gpu.count, 2);
  assert.equal(rec.identity.gpu.source, "nvidia-smi");
  assert.ok(!rec.missing.some((m: string) => /gpu identity/.test(m)));
  const g = await runIk([...args, "--gpu-name", "A100-80GB", "--gpu-count", "8"], { env });
  assert.equal(JSON.parse(g.stdout).identity.gpu.name, "A100-80GB");
  assert.equal(JSON.parse(g.stdout).identity.gpu.count, 8);
});
