/**
 * Per-engine readers of the startup lines that show the configuration an engine really ran with
 * (the fixture logs of ../shared/fixtures/engines/<engine>/startup.log show each format).
 * Keys keep each engine's own setting names; counts the engine prints but has no setting for are
 * named `kv_cache_tokens` (KV capacity in tokens) on every engine.
 * @module
 */
import { parseKwargList, rawScalar } from "./resolved_config_kwargs.ts";
import { type JsonValue, parsePyValue, setOwn } from "./resolved_config_pyliteral.ts";

/** What one engine's reader found in a log. */
export interface EngineFindings {
  /** The merged configuration: launch arguments, overridden by what the engine resolved. */
  config: Record<string, JsonValue>;
  /** 1-based numbers of the lines that contributed. */
  lines: number[];
  /** Which kinds of line contributed, e.g. "vllm non-default args". */
  sources: string[];
  /** The engine's version, when the log prints it. */
  version: string | null;
  /** Oddities worth reporting (unreadable lines, disagreeing values). */
  warnings: string[];
}

/** Collects values in three layers: hints (fill only absent or null), launch args, resolved values. */
class Collector {
  readonly args: Record<string, JsonValue> = {};
  readonly resolved: Record<string, JsonValue> = {};
  readonly hints: Record<string, JsonValue> = {};
  readonly lines = new Set<number>();
  readonly sources: string[] = [];
  readonly warnings: string[] = [];
  version: string | null = null;

  put(layer: "args" | "resolved" | "hints", key: string, value: JsonValue, line: number, source: string): void {
    setOwn(this[layer], key, value);
    this.lines.add(line);
    if (!this.sources.includes(source)) this.sources.push(source);
  }
  putAll(layer: "args" | "resolved", values: Record<string, JsonValue>, line: number, source: string): void {
    for (const [k, v] of Object.entries(values)) this.put(layer, k, v, line, source);
  }
  /** The resolved value of `key`, else its launch argument. */
  get(key: string): JsonValue | undefined {
    return Object.hasOwn(this.resolved, key) ? this.resolved[key] : this.args[key];
  }
  done(): EngineFindings {
    const config: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries({ ...this.args, ...this.resolved })) setOwn(config, k, v);
    for (const [k, v] of Object.entries(this.hints)) if (config[k] === undefined || config[k] === null) setOwn(config, k, v);
    return {
      config,
      lines: [...this.lines].sort((a, b) => a - b),
      sources: this.sources,
      version: this.version,
      warnings: this.warnings,
    };
  }
}

/** One log line and its 1-based number. */
export type Line = { n: number; text: string };

const int = (s: string) => Number(s.replace(/,/g, ""));

/** vLLM: `non-default args: {...}` (launch args) and `... LLM engine (vX) with config: k=v, ...` (resolved). */
export function readVllm(lines: Line[]): EngineFindings {
  const c = new Collector();
  for (const { n, text } of lines) {
    let m = text.match(/non-default args: (\{.*\})\s*$/);
    if (m) {
      const v = parsePyValue(m[1]);
      if (v.ok && v.value !== null && typeof v.value === "object" && !Array.isArray(v.value)) {
        c.putAll("args", v.value, n, "vllm non-default args");
      } else c.warnings.push(`line ${n}: unreadable non-default args`);
      continue;
    }
    m = text.match(/LLM engine \(v([^)\s]+)\) with config: (.*)$/);
    if (m) {
      c.version ??= m[1];
      const kw = parseKwargList(m[2]);
      if (!kw.complete) c.warnings.push(`line ${n}: engine config read only in part`);
      c.putAll("resolved", kw.values, n, "vllm engine config");
      continue;
    }
    if ((m = text.match(/vLLM API server version (\S+)/))) c.version = m[1];
    else if ((m = text.match(/Using max model len (\d+)/))) {
      c.put("resolved", "max_model_len", int(m[1]), n, "vllm startup lines");
    } else if ((m = text.match(/Chunked prefill is enabled with max_num_batched_tokens=(\d+)/))) {
      c.put("resolved", "max_num_batched_tokens", int(m[1]), n, "vllm startup lines");
      c.put("hints", "enable_chunked_prefill", true, n, "vllm startup lines");
    } else if ((m = text.match(/GPU KV cache size: ([\d,]+) tokens/))) {
      c.put("resolved", "kv_cache_tokens", int(m[1]), n, "vllm startup lines");
    } else if ((m = text.match(/num_gpu_blocks is: (\d+)/))) {
      c.put("resolved", "num_gpu_blocks", int(m[1]), n, "vllm startup lines");
    }
  }
  return c.done();
}

/** SGLang: `server_args=ServerArgs(...)` (launch args) and the scheduler's `max_total_num_tokens=...` line (resolved). */
export function readSglang(lines: Line[]): EngineFindings {
  const c = new Collector();
  for (const { n, text } of lines) {
    let m = text.match(/server_args=(ServerArgs\(.*\))\s*$/);
    if (m) {
      const v = parsePyValue(m[1]);
      if (v.ok && v.value !== null && typeof v.value === "object" && !Array.isArray(v.value)) {
        c.putAll("args", v.value, n, "sglang server_args");
      } else c.warnings.push(`line ${n}: unreadable server_args`);
      continue;
    }
    m = text.match(/\b(max_total_num_tokens=.*)$/);
    if (m) {
      c.putAll("resolved", parseKwargList(m[1]).values, n, "sglang scheduler line");
      continue;
    }
    if ((m = text.match(/KV Cache is allocated\. #tokens: (\d+)/))) {
      c.put("resolved", "kv_cache_tokens", int(m[1]), n, "sglang startup lines");
    } else if ((m = text.match(/Attention backend not explicitly specified\. Use (\w+) backend by default/))) {
      c.put("hints", "attention_backend", m[1], n, "sglang startup lines");
    } else if ((m = text.match(/\bsglang(?: version)?[ :=]+v?(\d+\.\d+[\w.]*)/i))) c.version ??= m[1];
  }
  // The scheduler prints the resolved values of settings left to "auto" (None) in ServerArgs.
  for (const [setting, printed] of [["context_length", "context_len"], ["max_total_tokens", "max_total_num_tokens"]]) {
    const v = c.resolved[printed];
    if (v !== undefined && (c.get(setting) ?? null) === null) setOwn(c.resolved, setting, v);
  }
  return c.done();
}

/** `name = value` pairs (llama.cpp's style), values through {@link rawScalar}; 'x' quotes dropped. */
function eqPairs(text: string): [string, JsonValue][] {
  const out: [string, JsonValue][] = [];
  for (const m of text.matchAll(/\b([a-z_][a-z0-9_]*)\s+=\s+('[^']*'|"[^"]*"|[^\s,()]+)/gi)) {
    const raw = m[2].replace(/^(['"])(.*)\1$/, "$2");
    const v = rawScalar(raw);
    out.push([m[1], v === "true" ? true : v === "false" ? false : v]);
  }
  return out;
}

/** llama.cpp (llama-server): its `n_slots`, `n_ctx_slot`, `llama_context: n_ctx = ...` and other startup lines. */
export function readLlamacpp(lines: Line[]): EngineFindings {
  const c = new Collector();
  const src = "llamacpp startup lines";
  const slotCtx = new Set<JsonValue>();
  for (const { n, text } of lines) {
    let m: RegExpMatchArray | null;
    if ((m = text.match(/^build: (\d+) \(([0-9a-f]+)\)/))) c.version = `b${m[1]}`;
    else if ((m = text.match(/load_model: loading model '([^']*)'/))) c.put("resolved", "model_path", m[1], n, src);
    else if ((m = text.match(/llama_context:\s+([a-z_][a-z0-9_]*)\s+=\s+(.+?)\s*$/i))) {
      c.put("resolved", m[1], rawScalar(m[2]), n, src);
    } else if ((m = text.match(/(?:^|\s)print_info:\s+([a-z_][a-z0-9_]*)\s+=\s+(.+?)\s*$/i))) {
      c.put("resolved", m[1], rawScalar(m[2]), n, src);
    } else if ((m = text.match(/new slot, n_ctx = (\d+)/))) {
      slotCtx.add(int(m[1]));
      c.put("resolved", "n_ctx_slot", int(m[1]), n, src);
    } else if ((m = text.match(/new prompt, n_ctx_slot = (\d+)/))) {
      c.put("hints", "n_ctx_slot", int(m[1]), n, src);
    } else if ((m = text.match(/llama_kv_cache: size = .*?\(\s*(\d+) cells/))) {
      c.put("resolved", "kv_cache_tokens", int(m[1]), n, src);
    } else if ((m = text.match(/listening on https?:\/\/([^\s/]+):(\d+)/))) {
      c.put("resolved", "host", m[1], n, src);
      c.put("resolved", "port", int(m[2]), n, src);
    } else if ((m = text.match(/(load_model: initializing,|init: initializing slots,|setting n_parallel|system info:|threadpool init,)(.*)$/))) {
      for (const [k, v] of eqPairs(m[2].startsWith(" =") ? `n_parallel${m[2]}` : m[2])) c.put("resolved", k, v, n, src);
    }
  }
  if (slotCtx.size > 1) c.warnings.push(`slots disagree on n_ctx: ${[...slotCtx].join(", ")}`);
  return c.done();
}

/** TensorRT-LLM: its version, `[TRT-LLM] [I] max_seq_len=..., max_batch_size=...` lines and KV-cache allocation. */
export function readTrtllm(lines: Line[]): EngineFindings {
  const c = new Collector();
  const src = "trtllm startup lines";
  for (const { n, text } of lines) {
    let m: RegExpMatchArray | null;
    if ((m = text.match(/TensorRT-LLM version: (\S+)/))) c.version = m[1];
    else if ((m = text.match(/\[TRT-LLM\] \[[IWD]\] ([A-Za-z_]\w*=.*)$/))) {
      const kw = parseKwargList(m[1]);
      if (kw.complete) c.putAll("resolved", kw.values, n, src);
    } else if ((m = text.match(/in paged KV cache \((\d+)\)/))) {
      c.put("resolved", "kv_cache_tokens", int(m[1]), n, src);
    } else if ((m = text.match(/\[TRT-LLM\] \[I\] Using LLM with (\w+) backend/))) {
      c.put("hints", "backend", m[1].toLowerCase(), n, src);
    }
  }
  return c.done();
}
