/**
 * parseResolvedConfig on the engines' real line formats (the fixture startup logs, the real
 * llama.cpp b10587 log) and on the mock's own `--startup-log` output; the self-reported line.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { knownEngineKind, parseResolvedConfig, type ResolvedConfig } from "../../lib/engines_host/resolved_config.ts";
import { resolveMockOptions, startupLog, STARTUP_LOG_ENGINES } from "../../lib/mock/mod.ts";
import { ikBin, ROOT } from "../_helpers/ik.ts";

const TESTDATA = join(ROOT, "tests", "testdata", "engines");
const SHARED = join(ROOT, "..", "shared", "fixtures", "engines");
const read = (dir: string, engine: string) => readFileSync(join(dir, engine, "startup.log"), "utf8");
/** The lines of llama-server b10587's startup log (../shared/fixtures/engines/llamacpp/real-b10587) that carry config. */
const REAL_B10587 = [
  "0.00.004.672 I srv    load_model: loading model '/tmp/llama/tiny.gguf'",
  "0.00.070.140 I cmn          init: llama threadpool init, n_threads = 2",
  "0.00.072.291 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 2048, kv_unified = 'false'",
  "0.00.074.120 I srv  llama_server: listening on http://127.0.0.1:18080",
];

/** Asserts key = value and that one of the cited lines shows `text`. */
function shows(r: ResolvedConfig, log: string, key: string, value: unknown, text: string): void {
  assert.deepEqual(r.config[key], value, key);
  const lines = log.split("\n");
  assert.ok(r.lines.some((n) => lines[n - 1].includes(text)), `${key}: a cited line shows ${text}`);
}

const FIXTURE_DIRS = [TESTDATA, ...(existsSync(SHARED) ? [SHARED] : [])];

test("vLLM fixture: non-default args and the engine-config line", () => {
  for (const dir of FIXTURE_DIRS) {
    const log = read(dir, "vllm");
    const r = parseResolvedConfig(log, "vllm");
    assert.equal(r.status, "RESOLVED");
    assert.match(r.source, /vllm non-default args/);
    assert.match(r.source, /vllm engine config/);
    assert.equal(r.version, "0.11.0");
    shows(r, log, "max_num_seqs", 256, "'max_num_seqs': 256");
    shows(r, log, "gpu_memory_utilization", 0.9, "'gpu_memory_utilization': 0.9");
    shows(r, log, "max_seq_len", 32768, "max_seq_len=32768");
    shows(r, log, "enable_prefix_caching", true, "enable_prefix_caching=True");
    shows(r, log, "served_model_name", "Qwen/Qwen2.5-0.5B-Instruct", "served_model_name=Qwen/Qwen2.5-0.5B-Instruct");
    shows(r, log, "quantization", null, "quantization=None");
    shows(r, log, "dtype", "torch.bfloat16", "dtype=torch.bfloat16");
    shows(r, log, "max_num_batched_tokens", 8192, "max_num_batched_tokens=8192");
    shows(r, log, "kv_cache_tokens", 9812224, "9,812,224 tokens");
    assert.deepEqual(r.warnings, []);
  }
});

test("SGLang fixture: server_args=ServerArgs(...) and the scheduler's resolved values", () => {
  for (const dir of FIXTURE_DIRS) {
    const log = read(dir, "sglang");
    const r = parseResolvedConfig(log, "sglang");
    assert.equal(r.status, "RESOLVED");
    assert.match(r.source, /sglang server_args/);
    shows(r, log, "mem_fraction_static", 0.88, "mem_fraction_static=0.88");
    shows(r, log, "schedule_policy", "fcfs", "schedule_policy='fcfs'");
    shows(r, log, "disable_radix_cache", false, "disable_radix_cache=False");
    shows(r, log, "port", 30000, "port=30000");
    // ServerArgs says None (auto); the scheduler line prints what it became.
    shows(r, log, "max_running_requests", 4096, "max_running_requests=4096");
    shows(r, log, "context_length", 32768, "context_len=32768");
    shows(r, log, "max_total_tokens", 10485760, "max_total_num_tokens=10485760");
    shows(r, log, "available_gpu_mem", "16.25 GB", "available_gpu_mem=16.25 GB");
    shows(r, log, "attention_backend", "flashinfer", "Use flashinfer backend");
  }
});

test("llama.cpp fixture: n_slots, n_ctx_slot and llama_context lines", () => {
  for (const dir of FIXTURE_DIRS) {
    const log = read(dir, "llamacpp");
    const r = parseResolvedConfig(log, "llamacpp");
    assert.equal(r.status, "RESOLVED");
    assert.equal(r.version, "b6123");
    shows(r, log, "n_slots", 4, "initializing slots, n_slots = 4");
    shows(r, log, "n_ctx_slot", 4096, "new slot, n_ctx = 4096");
    shows(r, log, "n_ctx", 16384, "n_ctx         = 16384");
    shows(r, log, "n_batch", 2048, "n_batch       = 2048");
    shows(r, log, "n_parallel", 4, "setting n_parallel = 4");
    shows(r, log, "kv_unified", true, "kv_unified = true");
    shows(r, log, "model_path", "qwen2.5-0.5b-instruct-q8_0.gguf", "loading model 'qwen2.5");
    shows(r, log, "port", 8080, "listening on http://127.0.0.1:8080");
  }
});

test("llama.cpp: the real b10587 log", () => {
  const path = join(SHARED, "llamacpp", "real-b10587", "startup.log");
  const real = existsSync(path) ? readFileSync(path, "utf8") : REAL_B10587.join("\n");
  for (const line of REAL_B10587) assert.ok(real.includes(line), "the embedded lines are the real log's");
  const r = parseResolvedConfig(real, "llama.cpp");
  assert.equal(r.status, "RESOLVED");
  assert.equal(r.engine, "llamacpp");
  shows(r, real, "n_slots", 4, "n_slots = 4, n_ctx_slot = 2048");
  shows(r, real, "n_ctx_slot", 2048, "n_ctx_slot = 2048");
  shows(r, real, "kv_unified", false, "kv_unified = 'false'");
  shows(r, real, "model_path", "/tmp/llama/tiny.gguf", "loading model '/tmp/llama/tiny.gguf'");
  shows(r, real, "port", 18080, "listening on http://127.0.0.1:18080");
  assert.equal(r.config.verbosity, undefined, "common_params_print_info is not print_info");
});

test("TensorRT-LLM fixture: version, limits line and KV-cache allocation", () => {
  for (const dir of FIXTURE_DIRS) {
    const log = read(dir, "trtllm");
    const r = parseResolvedConfig(log, "trtllm");
    assert.equal(r.status, "RESOLVED");
    assert.equal(r.version, "1.1.0");
    shows(r, log, "max_batch_size", 2048, "max_batch_size=2048");
    shows(r, log, "max_num_tokens", 8192, "max_num_tokens=8192");
    shows(r, log, "max_seq_len", 32768, "max_seq_len=32768");
    shows(r, log, "kv_cache_tokens", 1024000, "paged KV cache (1024000)");
    shows(r, log, "backend", "pytorch", "PyTorch backend");
  }
});

test("the mock's startup logs carry its flags", () => {
  const o = resolveMockOptions({ maxBatch: 24, maxModelLen: 4096, seed: 7, model: "m-x" });
  const want: Record<string, Record<string, unknown>> = {
    vllm: { max_num_seqs: 24, max_model_len: 4096, max_seq_len: 4096, seed: 7, model: "m-x" },
    sglang: { max_running_requests: 24, context_length: 4096, random_seed: 7, model_path: "m-x" },
    llamacpp: { n_slots: 24, n_ctx_slot: 4096, n_seq_max: 24, model_path: "m-x" },
    trtllm: { max_batch_size: 24, max_num_requests: 24, max_seq_len: 4096 },
  };
  for (const engine of STARTUP_LOG_ENGINES) {
    const s = startupLog(engine, o, 4242);
    const r = parseResolvedConfig([...s.before, ...s.after("127.0.0.1", 18123)].join("\n"), engine);
    assert.equal(r.status, "RESOLVED", engine);
    for (const [k, v] of Object.entries(want[engine])) assert.deepEqual(r.config[k], v, `${engine} ${k}`);
  }
});

test("dist/ik mock --startup-log vllm --max-batch 12: the printed log resolves to its flags", { skip: !existsSync(ikBin()), timeout: 30_000 }, async () => {
  const out = await new Promise<string>((ok) => {
    const child = spawn(ikBin(), ["mock", "--startup-log", "vllm", "--port", "0", "--max-batch", "12"], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    const done = () => (clearTimeout(timer), child.kill("SIGKILL"), ok(text));
    const timer = setTimeout(done, 15_000);
    const take = (d: unknown) => (text += String(d), text.includes("Starting vLLM API server") && done());
    child.stdout!.on("data", take);
    child.stderr!.on("data", take); // the mock prints its startup log on stderr
    child.on("close", () => (clearTimeout(timer), ok(text)));
  });
  const r = parseResolvedConfig(out, "vllm");
  assert.equal(r.status, "RESOLVED", out.slice(0, 500));
  assert.equal(r.config.max_num_seqs, 12);
});

const SELF = 'ik_resolved_config {"max_num_seqs": 64, "enable_prefix_caching": false}';

test("self-reported line: SELF_REPORTED for an unknown engine, ignored for the four known ones", () => {
  const mine = parseResolvedConfig(`starting\n[x] ${SELF}\nready`, "my-engine");
  assert.equal(mine.status, "SELF_REPORTED");
  assert.deepEqual(mine.config, { max_num_seqs: 64, enable_prefix_caching: false });
  assert.deepEqual(mine.lines, [2]);
  assert.deepEqual(mine.self_reported, ["max_num_seqs", "enable_prefix_caching"]);
  const alt = parseResolvedConfig('inferencekit_resolved_config {"a": 1}', "custom");
  assert.equal(alt.status, "SELF_REPORTED");
  assert.deepEqual(alt.config, { a: 1 });

  const vllmLog = read(TESTDATA, "vllm");
  const withSelf = parseResolvedConfig(`${vllmLog}\n${SELF}`, "vllm");
  assert.equal(withSelf.status, "RESOLVED");
  assert.equal(withSelf.config.max_num_seqs, 256, "the engine's own line wins, the self-report is ignored");
  assert.deepEqual(withSelf.self_reported, []);
  assert.ok(withSelf.warnings.some((w) => w.includes("ignored")));
  for (const engine of ["vllm", "sglang", "llamacpp", "trtllm", "TensorRT-LLM"]) {
    const only = parseResolvedConfig(SELF, engine);
    assert.equal(only.status, "UNPROVEN", engine);
    assert.deepEqual(only.config, {});
  }
  assert.equal(parseResolvedConfig(vllmLog, "generic").status, "UNPROVEN", "unknown names never match known formats");
  assert.equal(parseResolvedConfig("ik_resolved_config {not json", "x").status, "UNPROVEN");
  assert.equal(parseResolvedConfig("ik_resolved_config [1]", "x").status, "UNPROVEN");
});

test("nothing found, garbage, huge input: UNPROVEN, never a throw", () => {
  for (const e of ["vllm", "sglang", "llamacpp", "trtllm", "other"]) {
    for (const log of ["", "\x00\xff{{{", "non-default args: {'a': ", "server_args=ServerArgs(a=", "[TRT-LLM] [I] x=("]) {
      const r = parseResolvedConfig(log, e);
      assert.equal(r.status, "UNPROVEN", `${e}: ${JSON.stringify(log)}`);
      assert.equal(r.source, "none");
    }
  }
  assert.equal(parseResolvedConfig(undefined as unknown as string, "vllm").status, "UNPROVEN");
  const long = parseResolvedConfig("x".repeat(300 * 1024) + "\n" + "[".repeat(200_000), "sglang");
  assert.equal(long.status, "UNPROVEN");
  assert.ok(long.warnings.some((w) => w.includes("skipped")));
  const colour = parseResolvedConfig("\x1b[32mINFO\x1b[0m non-default args: {'max_num_seqs': 8}", "vllm");
  assert.equal(colour.config.max_num_seqs, 8);
});

test("knownEngineKind", () => {
  assert.equal(knownEngineKind("vLLM"), "vllm");
  assert.equal(knownEngineKind("llama.cpp"), "llamacpp");
  assert.equal(knownEngineKind("trt-llm"), "trtllm");
  assert.equal(knownEngineKind("mock"), null);
  assert.equal(knownEngineKind(7), null);
});
