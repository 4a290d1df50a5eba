/**
 * `--engine-kind auto`: which engine a server is, from what it says about itself (wire-formats.md):
 *
 * 1. `/v1/models` `owned_by`: vllm, sglang, llamacpp, tensorrt_llm.
 * 2. Self-description endpoints: llama.cpp `/props`, SGLang `/get_server_info` (or `/server_info`),
 *    vLLM's dev-mode `/server_info` (`vllm_config`). `/version` alone answers `{"version"}` on vLLM,
 *    SGLang and TRT-LLM alike, so it only tells whether TRT-LLM is still possible.
 * 3. `/metrics` name prefixes (`vllm:`, `sglang:`, `llamacpp:`), but ONLY once TRT-LLM is ruled out:
 *    trtllm-serve's `/metrics` is a JSON queue that every read drains. While TRT-LLM is possible,
 *    only its opt-in `/prometheus/metrics` is looked at.
 * 4. Otherwise `generic`.
 *
 * Every request is a bounded GET (short timeout, capped body); a failed one only means "no answer".
 * @module
 */
import { type Endpoint, rootUrl } from "../client/endpoint.ts";
import { listModels, type ModelsAnswer } from "../client/models.ts";
import { readCappedText } from "../client/read_capped.ts";
import type { EngineKind } from "./profiles.ts";

/** How the engine kind was chosen. */
export type EngineKindSource = "flag" | "owned_by" | "version_endpoint" | "metrics" | "fallback";

/** The detected engine kind and how it was found. */
export interface DetectedEngine {
  /** The resolved kind (never "auto"). */
  kind: EngineKind;
  /** Which evidence decided it. */
  source: EngineKindSource;
  /** The evidence in a few words, e.g. `owned_by=llamacpp`. */
  detail: string;
}

/** Options for {@link detectEngine}. */
export interface DetectOptions {
  /** The fetch to use; default the global fetch. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Bearer token, sent to the same server only. */
  apiKey?: string;
  /** Aborting it stops detection (the result is then `generic`, fallback). */
  signal?: AbortSignal;
  /** Limit per request in ms (default 2000). */
  timeoutMs?: number;
  /** A `/v1/models` answer already fetched (saves a request). */
  models?: ModelsAnswer;
  /** Never read the metrics endpoints (a sharded run: only shard 0's sampler scrapes, and every shard must detect alike). */
  noMetrics?: boolean;
}

/** Default per-request limit for detection requests. */
export const DETECT_TIMEOUT_MS = 2000;
/** The most body bytes read from one detection answer. */
const MAX_BODY_BYTES = 256 * 1024;

const OWNERS: Readonly<Record<string, EngineKind>> = {
  vllm: "vllm",
  sglang: "sglang",
  llamacpp: "llamacpp",
  "llama.cpp": "llamacpp",
  tensorrt_llm: "trtllm",
  "tensorrt-llm": "trtllm",
  trtllm: "trtllm",
};

/** The engine an `owned_by` value names, or null (`system`, `openai`, anything else). */
export function kindFromOwnedBy(ownedBy: string | null | undefined): EngineKind | null {
  if (!ownedBy) return null;
  return OWNERS[ownedBy.trim().toLowerCase()] ?? null;
}

const METRIC_PREFIXES: readonly [string, EngineKind][] = [
  ["vllm:", "vllm"],
  ["sglang:", "sglang"],
  ["llamacpp:", "llamacpp"],
  ["trtllm_", "trtllm"],
];

/** The engine whose metric names a Prometheus text uses (the first sample name that matches), or null. */
export function kindFromMetricNames(text: string): { kind: EngineKind; name: string } | null {
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? "";
    for (const [prefix, kind] of METRIC_PREFIXES) if (name.startsWith(prefix)) return { kind, name };
  }
  return null;
}

/** What one bounded GET returned: status 0 when nothing came back. */
interface Answer {
  status: number;
  text: string;
  json: unknown;
}

async function getBounded(url: string, opts: DetectOptions): Promise<Answer> {
  const doFetch = opts.fetch ?? fetch;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error("timeout")), opts.timeoutMs ?? DETECT_TIMEOUT_MS);
  const onAbort = () => ac.abort(new Error("aborted"));
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const headers: Record<string, string> = { accept: "application/json, text/plain" };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  try {
    const res = await doFetch(url, { method: "GET", headers, signal: ac.signal, redirect: "manual" });
    const { text } = await readCappedText(res, MAX_BODY_BYTES);
    let json: unknown = undefined;
    try {
      json = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: res.status, text, json };
  } catch {
    return { status: 0, text: "", json: undefined };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Detects the engine behind `ep`. Never throws; `generic` (source "fallback") when nothing matches.
 *
 * @example
 * ```ts
 * const d = await detectEngine(parseEndpoint("http://127.0.0.1:8080"));
 * // { kind: "llamacpp", source: "owned_by", detail: "owned_by=llamacpp" }
 * ```
 */
export async function detectEngine(ep: Endpoint, opts: DetectOptions = {}): Promise<DetectedEngine> {
  const models = opts.models ??
    await listModels(ep, {
      fetch: opts.fetch,
      apiKey: opts.apiKey,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? DETECT_TIMEOUT_MS,
    });
  const owners = [...new Set(models.models.map((m) => m.ownedBy).filter((o): o is string => !!o))];
  for (const o of owners) {
    const kind = kindFromOwnedBy(o);
    if (kind) return { kind, source: "owned_by", detail: `owned_by=${o}` };
  }
  const seen: string[] = [models.ok ? `owned_by=${owners.join(",") || "none"}` : "/v1/models: no list"];
  const get = (path: string) => getBounded(rootUrl(ep, path), opts);

  const props = await get("/props");
  if (
    props.status === 200 && isObject(props.json) &&
    ("default_generation_settings" in props.json || "total_slots" in props.json)
  ) {
    return { kind: "llamacpp", source: "version_endpoint", detail: "/props has default_generation_settings" };
  }
  for (const path of ["/get_server_info", "/server_info"]) {
    const info = await get(path);
    if (info.status !== 200 || !isObject(info.json)) continue;
    if ("vllm_config" in info.json) {
      return { kind: "vllm", source: "version_endpoint", detail: `${path} has vllm_config` };
    }
    if ("model_path" in info.json && ("tp_size" in info.json || "served_model_name" in info.json)) {
      return { kind: "sglang", source: "version_endpoint", detail: `${path} has SGLang server args` };
    }
  }
  const version = await get("/version");
  const versionAnswered = version.status === 200 && isObject(version.json) &&
    typeof version.json.version === "string";
  seen.push(
    versionAnswered ? `/version=${String((version.json as { version: string }).version)}` : "no /version",
  );
  // TRT-LLM always answers /version and always says owned_by=tensorrt_llm: either missing rules it out.
  const trtllmOut = (models.ok && models.models.length > 0) || (version.status !== 0 && !versionAnswered);
  if (opts.noMetrics) {
    seen.push("metrics not read (a sharded run: only shard 0 scrapes; give --engine-kind)");
    return { kind: "generic", source: "fallback", detail: seen.join("; ") };
  }
  if (!trtllmOut) {
    const prom = await get("/prometheus/metrics");
    const hit = prom.status === 200 ? kindFromMetricNames(prom.text) : null;
    if (hit) return { kind: hit.kind, source: "metrics", detail: `/prometheus/metrics has ${hit.name}` };
    seen.push("/metrics not read (TensorRT-LLM not ruled out)");
    return { kind: "generic", source: "fallback", detail: seen.join("; ") };
  }
  const metrics = await get("/metrics");
  const hit = metrics.status === 200 ? kindFromMetricNames(metrics.text) : null;
  if (hit) return { kind: hit.kind, source: "metrics", detail: `/metrics has ${hit.name}` };
  seen.push(metrics.status === 200 ? "/metrics has no engine names" : "no /metrics");
  return { kind: "generic", source: "fallback", detail: seen.join("; ") };
}

/** An engine's version as the server states it, and where it was read. */
export interface EngineVersion {
  version: string;
  /** The endpoint and field (`/version`, `/props build_info`, `/get_server_info version`). */
  source: string;
}

/**
 * The version the server states (wire-formats.md): llama.cpp `/props` `build_info` (`b10587-3f545be`),
 * SGLang `/get_server_info` `version` (else `/version`), vLLM and TensorRT-LLM `/version`. Null when
 * the server says none (a generic server, an unreachable route); the caller's `--engine-version` wins.
 */
export async function engineVersion(ep: Endpoint, kind: EngineKind, opts: Omit<DetectOptions, "models" | "noMetrics"> = {}): Promise<EngineVersion | null> {
  const field = async (path: string, key: string, source: string): Promise<EngineVersion | null> => {
    const a = await getBounded(rootUrl(ep, path), opts);
    const v = a.status === 200 && isObject(a.json) ? a.json[key] : undefined;
    return typeof v === "string" && v.trim() && v.length <= 200 ? { version: v.trim(), source } : null;
  };
  if (kind === "llamacpp") return await field("/props", "build_info", "/props build_info");
  if (kind === "sglang") return await field("/get_server_info", "version", "/get_server_info version") ?? await field("/version", "version", "/version");
  if (kind === "vllm" || kind === "trtllm") return await field("/version", "version", "/version");
  return null;
}
