/**
 * `--startup-log ENGINE`: a startup log in that engine's format (tests/testdata/engines/<engine>/
 * startup.log), whose resolved-config lines carry the mock's own settings: max_num_seqs and its
 * equivalents = --max-batch, max_model_len = --max-model-len, KV size = --kv-tokens, seed = --seed.
 * @module
 */
import type { MockOptions, StartupLogEngine } from "./options.ts";
import { DEFAULT_KV_TOKENS } from "./state.ts";

/** A startup log in two parts: before listening (while "loading"), and once the port is known. */
export interface StartupLog {
  /** Lines printed at start, before any startup delay. */
  before: string[];
  /** Lines printed once listening on host:port. */
  after(host: string, port: number): string[];
}

/** Each engine's own default batch size, used when --max-batch is not given. */
const DEFAULT_BATCH: Record<StartupLogEngine, number> = {
  vllm: 256,
  sglang: 4096,
  llamacpp: 4,
  trtllm: 2048,
};

const p2 = (n: number) => String(n).padStart(2, "0");
const commas = (n: number) => n.toLocaleString("en-US");

function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "string") return `'${v}'`;
  return String(v);
}

function pyDict(o: Record<string, unknown>): string {
  return "{" + Object.entries(o).map(([k, v]) => `'${k}': ${pyRepr(v)}`).join(", ") + "}";
}

function uvicorn(prefix: string, pid: number, url: string): string[] {
  return [
    `${prefix}INFO:     Started server process [${pid}]`,
    `${prefix}INFO:     Waiting for application startup.`,
    `${prefix}INFO:     Application startup complete.`,
    `${prefix}INFO:     Uvicorn running on ${url} (Press CTRL+C to quit)`,
  ];
}

function vllmLog(o: MockOptions, pid: number, d: Date, batch: number, kv: number): StartupLog {
  const t = `${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${
    p2(d.getSeconds())
  }`;
  const api = (file: string, msg: string) => `(APIServer pid=${pid}) INFO ${t} [${file}] ${msg}`;
  const core = (file: string, msg: string) => `(EngineCore_DP0 pid=${pid}) INFO ${t} [${file}] ${msg}`;
  const spec = o.specDepth > 0 ? `{'method': 'ngram', 'num_speculative_tokens': ${o.specDepth}}` : "None";
  const args: Record<string, unknown> = {
    model_tag: o.model,
    host: o.host,
    port: o.port,
    model: o.model,
    max_model_len: o.maxModelLen,
    max_num_seqs: batch,
    seed: o.seed,
  };
  if (o.tokensPerEvent > 1) args.stream_interval = o.tokensPerEvent;
  return {
    before: [
      `INFO ${t} [__init__.py:216] Automatically detected platform cuda.`,
      api("api_server.py:1839", "vLLM API server version 0.11.0"),
      api("utils.py:233", `non-default args: ${pyDict(args)}`),
      api("model.py:1510", `Using max model len ${o.maxModelLen}`),
      api("scheduler.py:205", "Chunked prefill is enabled with max_num_batched_tokens=8192."),
      core(
        "core.py:77",
        `Initializing a V1 LLM engine (v0.11.0) with config: model='${o.model}', speculative_config=${spec}, tokenizer='${o.model}', dtype=torch.bfloat16, max_seq_len=${o.maxModelLen}, tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, seed=${o.seed}, served_model_name=${o.model}, enable_prefix_caching=True, chunked_prefill_enabled=True`,
      ),
      core("kv_cache_utils.py:1087", `GPU KV cache size: ${commas(kv)} tokens`),
      core(
        "kv_cache_utils.py:1091",
        `Maximum concurrency for ${commas(o.maxModelLen)} tokens per request: ${
          (kv / o.maxModelLen).toFixed(2)
        }x`,
      ),
    ],
    after: (host, port) => [
      api("api_server.py:1634", "Supported tasks: ['generate']"),
      api("api_server.py:1912", `Starting vLLM API server 0 on http://${host}:${port}`),
      api("launcher.py:34", "Available routes are:"),
      ...["/health", "/metrics", "/v1/models", "/v1/chat/completions", "/v1/completions"].map((r) =>
        api("launcher.py:42", `Route: ${r}, Methods: ${r.startsWith("/v1/c") ? "POST" : "GET"}`)
      ),
      ...uvicorn(`(APIServer pid=${pid}) `, pid, `http://${host}:${port}`).slice(0, 3),
    ],
  };
}

function sglangLog(o: MockOptions, pid: number, d: Date, batch: number, kv: number): StartupLog {
  const t = `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${
    p2(d.getMinutes())
  }:${p2(d.getSeconds())}`;
  const args = [
    `model_path='${o.model}'`,
    `tokenizer_path='${o.model}'`,
    `served_model_name='${o.model}'`,
    `context_length=${o.maxModelLen}`,
    `host='${o.host}'`,
    `port=${o.port}`,
    `max_running_requests=${o.maxBatch ?? "None"}`,
    `max_total_tokens=${o.kvTokens ?? "None"}`,
    `chunked_prefill_size=8192`,
    `schedule_policy='fcfs'`,
    `tp_size=1`,
    `stream_interval=${o.tokensPerEvent}`,
    `random_seed=${o.seed}`,
    `enable_metrics=${o.metrics ? "True" : "False"}`,
    `speculative_num_draft_tokens=${o.specDepth > 0 ? o.specDepth : "None"}`,
  ];
  return {
    before: [
      `[${t}] server_args=ServerArgs(${args.join(", ")})`,
      `[${t} TP0] Load weight begin. avail mem=138.71 GB`,
      `[${t} TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=137.64 GB, mem usage=1.07 GB.`,
      `[${t} TP0] KV Cache is allocated. #tokens: ${kv}, K size: 60.00 GB, V size: 60.00 GB`,
      `[${t} TP0] max_total_num_tokens=${kv}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=${batch}, context_len=${o.maxModelLen}, available_gpu_mem=16.25 GB`,
    ],
    after: (
      host,
      port,
    ) => [
      ...uvicorn(`[${t}] `, pid, `http://${host}:${port}`),
      `[${t}] The server is fired up and ready to roll!`,
    ],
  };
}

function llamacppLog(o: MockOptions, _pid: number, _d: Date, batch: number, kv: number): StartupLog {
  const slots = Array.from(
    { length: batch },
    (_, i) => `slot         init: id ${String(i).padStart(2)} | task -1 | new slot, n_ctx = ${o.maxModelLen}`,
  );
  return {
    before: [
      "build: 6123 (1c0ffee0) with cc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0 for x86_64-linux-gnu",
      "system info: n_threads = 16, n_threads_batch = 16, total_threads = 16",
      "main: loading model",
      `srv    load_model: loading model '${o.model}'`,
      `print_info: n_ctx_train      = ${o.maxModelLen}`,
      "llama_context: constructing llama_context",
      `llama_context: n_seq_max     = ${batch}`,
      `llama_context: n_ctx         = ${o.kvTokens ?? batch * o.maxModelLen}`,
      `llama_context: n_ctx_per_seq = ${o.maxModelLen}`,
      `llama_kv_cache: size = ${(kv / 1024).toFixed(2)} MiB (${kv} cells, 24 layers, ${batch}/${batch} seqs)`,
      `srv          init: initializing slots, n_slots = ${batch}`,
      ...slots,
      "main: model loaded",
    ],
    after: (
      host,
      port,
    ) => [
      `main: server is listening on http://${host}:${port}`,
      "main: starting the main loop...",
      "srv  update_slots: all slots are idle",
    ],
  };
}

function trtllmLog(o: MockOptions, pid: number, d: Date, batch: number, kv: number): StartupLog {
  const t = `${p2(d.getMonth() + 1)}/${p2(d.getDate())}/${d.getFullYear()}-${p2(d.getHours())}:${
    p2(d.getMinutes())
  }:${p2(d.getSeconds())}`;
  const info = (msg: string) => `[${t}] [TRT-LLM] [I] ${msg}`;
  return {
    before: [
      "[TensorRT-LLM] TensorRT-LLM version: 1.1.0",
      info("Using LLM with PyTorch backend"),
      info("Loading model weights..."),
      info(
        `max_seq_len=${o.maxModelLen}, max_num_requests=${batch}, max_num_tokens=8192, max_batch_size=${batch}`,
      ),
      info(`[MemUsageChange] Allocated 112.30 GiB for max tokens in paged KV cache (${kv}).`),
    ],
    after: (host, port) => uvicorn("", pid, `http://${host}:${port}`),
  };
}

/**
 * The startup log `engine` would print when started with the mock's settings.
 * @param pid the process id to show; @param now the time stamps to use
 */
export function startupLog(
  engine: StartupLogEngine,
  o: MockOptions,
  pid: number,
  now: Date = new Date(),
): StartupLog {
  const batch = o.maxBatch ?? DEFAULT_BATCH[engine];
  const kv = o.kvTokens ?? (engine === "llamacpp" ? batch * o.maxModelLen : DEFAULT_KV_TOKENS);
  const make = { vllm: vllmLog, sglang: sglangLog, llamacpp: llamacppLog, trtllm: trtllmLog }[engine];
  return make(o, pid, now, batch, kv);
}
