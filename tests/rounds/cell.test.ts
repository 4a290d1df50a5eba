/**
 * One rounds cell in process, over the compiled binary as engine (`ik mock`) and as the child
 * `bench serve`: a group that cannot be proven gone makes an ok cell `stop_failed`; GPU memory is
 * read before the launch and waited for after the stop; the serve command honours a
 * `--serve-cmd` template; an engine that exits mid-measurement is `engine_exited` and not chained
 * into the engine's record (both runtimes, ~12 s).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../_helpers/ports.ts";
import { after, before, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import type { ExecFn } from "../../lib/gpu/mod.ts";
import { type CellConfig, runCell } from "../../lib/rounds/cell.ts";
import type { EngineSpec } from "../../lib/rounds/manifest.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { ikBin } from "../_helpers/ik.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-cell-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});


function spec(port: number): EngineSpec {
  return {
    label: "m", name: "vllm", kind: "vllm", kind_source: "name", version: null, launch: [ikBin(), "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", "1", "--startup-log", "vllm"],
    env: {}, port, host: "127.0.0.1", ready_check: "/v1/models", metrics_path: null, role: null, cwd: null, expect: {},
  };
}

function config(rt: typeof runtime, exec: ExecFn, over: Partial<CellConfig> = {}): CellConfig {
  const set = loadBuiltinPromptSet({ limitPerBucket: 1 });
  return {
    rt, exec, runDir: dir, storeRoot: join(dir, "runs"), promptsArg: "builtin:default", warmupPrompts: set.prompts.slice(0, 8), mode: "single",
    startupTimeoutMs: 20_000, stopTimeoutMs: 100, serveTimeoutMs: 60_000, warmup: 1, warmupMaxTokens: 4, pollMs: 50, gpuMemToleranceMib: 512,
    gpuMemWaitMs: 5_000, serveCmd: null, serveArgs: ["--max-tokens", "4", "--warmup", "0", "--limit-per-bucket", "1"], passEnv: [], modelId: null, maxFail: null,
    extraBody: null, chatTemplateKwargs: null, childEnv: { IK_KEY_FILE: join(dir, "key") }, lastEvidence: {}, schedule: null, ...over,
  };
}

const noGpu: ExecFn = () => Promise.resolve({ code: 127, stdout: "" });

test("an ok cell whose group still shows a member after SIGKILL is stop_failed, naming the survivor", { skip: existsSync(ikBin()) ? false : "needs dist/ik" }, async () => {
  const fake = { ...runtime, groupMembers: () => [4242] };
  // In a test process selfArgv is the test runner: a template without placeholders names the program.
  const c = await runCell(spec(await freePort()), 1, 0, config(fake, noGpu, { serveCmd: `${ikBin()} bench serve` }));
  assert.equal(c.stop?.signal, "SIGKILL");
  assert.equal(c.stop?.group_gone, false);
  assert.equal(c.status, "stop_failed");
  assert.match(String(c.detail), /4242/);
  assert.deepEqual(runtime.groupMembers(c.pid as number), [], "the real group is gone");
});

test("GPU memory: the baseline before launch, the wait after the stop; the template's placeholders are filled", { skip: existsSync(ikBin()) ? false : "needs dist/ik" }, async () => {
  let calls = 0;
  // nvidia-smi's real CSV: the engine's 30 GiB are still held for the first two readings after the stop.
  const exec: ExecFn = (argv) => {
    if (!argv.join(" ").includes("memory.used,name")) return Promise.resolve({ code: 0, stdout: "" });
    calls++;
    return Promise.resolve({ code: 0, stdout: `${calls === 1 || calls > 3 ? 700 : 30_000}, NVIDIA H200\n` });
  };
  const tpl = `${ikBin()} bench serve --base-url {base_url} --model {model} --prompts {prompts} --label {label}-r{round} --engine-kind {engine_kind} --rounds 1`;
  const c = await runCell(spec(await freePort()), 3, 1, config(runtime, exec, { serveCmd: tpl, stopTimeoutMs: 5000 }));
  assert.equal(c.status, "ok", String(c.detail));
  assert.equal(c.stop?.signal, "SIGTERM");
  assert.equal(c.gpu_memory?.ok, true);
  assert.equal(c.gpu_memory?.skipped, false);
  assert.deepEqual(c.gpu_memory?.baseline, [700]);
  assert.deepEqual(c.gpu_memory?.last, [700]);
  assert.ok(calls >= 4);
  const argv = c.serve?.argv as string[];
  assert.equal(argv[argv.indexOf("--label") + 1], "m-r3");
  assert.equal(argv[argv.indexOf("--engine-kind") + 1], "vllm");
  // The base URL is stored only as its keyed HMAC, the same tag the child's record carries.
  const tag = argv[argv.indexOf("--base-url") + 1];
  assert.match(tag, /^hmac-sha256:[0-9a-f]{64}$/);
  assert.ok(!argv.join(" ").includes("127.0.0.1"), argv.join(" "));
  assert.ok(readFileSync(join(dir, "runs", String(c.serve?.evidence_id), "evidence.json"), "utf8").includes(tag), "the child's record has the same tag");
  assert.equal(c.resolved_config?.status, "RESOLVED");
  assert.equal(c.served_model, "mock-model");
});

test("an engine that exits mid-measurement: engine_exited with its failures, and the next round does not extend its record (issue 18, ~4 s)", { skip: existsSync(ikBin()) ? false : "needs dist/ik" }, async () => {
  const s = spec(await freePort());
  s.launch.push("--exit-after-s", "1.5");
  s.launch[s.launch.indexOf("--tpot-ms") + 1] = "30";
  const cfg = config(runtime, noGpu, { serveCmd: `${ikBin()} bench serve`, warmup: 0, serveArgs: ["--max-tokens", "40", "--warmup", "0", "--limit-per-bucket", "1"], stopTimeoutMs: 2000 });
  const c = await runCell(s, 1, 0, cfg);
  assert.equal(c.status, "engine_exited", String(c.detail));
  assert.match(String(c.detail), /^the engine exited with code 1 during the measurement, before ik stopped it; [1-9]\d* of \d+ requests failed/);
  assert.equal(typeof c.serve?.evidence_id, "string", "bench serve wrote its record");
  assert.deepEqual(cfg.lastEvidence, {}, "a round that is not comparable is not chained into the engine's record");
  const ok = config(runtime, noGpu, { serveCmd: `${ikBin()} bench serve`, warmup: 0 });
  const c2 = await runCell(spec(await freePort()), 1, 0, ok);
  assert.equal(c2.status, "ok", String(c2.detail));
  assert.deepEqual(Object.keys(ok.lastEvidence), ["m"], "an ok round is");
});
