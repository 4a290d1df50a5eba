/**
 * `ik bench vllm`'s flags checked and turned into a plan (usage errors, 64, name the flag): the
 * not-honoured flags (refused, or a warning each), vLLM's space-separated `--goodput` and
 * `--metadata` lists, the backend and endpoint (ik's API), the request rate (`inf`), the
 * percentile metrics and percentiles, the sampling flags as body fields.
 * @module
 */
import { type IkError, usageError } from "../cli/errors.ts";
import { camelOf, NOT_HONOURED, notHonouredLine } from "./not_honoured.ts";
import { type Goodput, PERCENTILE_METRICS } from "./result_file.ts";

/** A usage error (64) whose hint ends with this command's own help. */
function bad(flag: string, what: string, hint = ""): IkError {
  return usageError(flag, what, hint ? `${hint}; see 'ik bench vllm --help'` : "see 'ik bench vllm --help'");
}

/** What the run does, from the flags. */
export interface VllmPlan {
  api: "chat" | "completions";
  baseUrl: string;
  requestRate: number;
  goodput: Goodput | null;
  metadata: [string, string][];
  percentileMetrics: string[];
  percentiles: number[];
  /** Sampling flags and --extra-body merged (extra body wins, as vLLM). */
  body: Record<string, unknown>;
  /** One line each, for stderr. */
  warnings: string[];
}

/** The parsed values this module reads (a subset of the command's flags). */
export interface VllmFlagValues {
  backend: string;
  baseUrl?: string;
  host: string;
  port: number;
  endpoint?: string;
  requestRate: string;
  goodput: readonly string[];
  metadata: readonly string[];
  words: readonly string[];
  percentileMetrics?: string;
  metricPercentiles: string;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  extraBody?: string;
  [k: string]: unknown;
}

const BACKENDS: Readonly<Record<string, "chat" | "completions">> = { openai: "completions", vllm: "completions", "openai-chat": "chat" };
const PATHS = { completions: "/v1/completions", chat: "/v1/chat/completions" } as const;

/** Refuses or warns for each not-honoured flag given. */
function notHonoured(f: VllmFlagValues, warnings: string[]): void {
  for (const [flag, n] of Object.entries(NOT_HONOURED)) {
    const v = f[camelOf(flag)];
    const given = n.takes === "flag" ? v === true : n.takes === "list" ? Array.isArray(v) && v.length > 0 : v !== undefined;
    if (!given) continue;
    if (n.action === "refuse") throw bad(flag, notHonouredLine(flag), "drop it");
    warnings.push(notHonouredLine(flag));
  }
}

function parseGoodput(pairs: readonly string[]): Goodput | null {
  if (!pairs.length) return null;
  const g: Goodput = {};
  for (const p of pairs) {
    const m = /^([a-z0-9_]+):([^:]+)$/.exec(p.trim());
    const v = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(v)) throw bad("--goodput", `'${p}' is not KEY:VALUE (a metric name and milliseconds)`, "e.g. --goodput ttft:100 tpot:50");
    if (m[1] !== "ttft" && m[1] !== "tpot" && m[1] !== "e2el") throw bad("--goodput", `'${m[1]}' is not one of ttft, tpot, e2el`, "e.g. --goodput ttft:100");
    if (v < 0) throw bad("--goodput", `'${p}': the value must be non-negative`);
    g[m[1]] = v;
  }
  return g;
}

/** Checks the flags and makes the plan. */
export function vllmPlan(f: VllmFlagValues): VllmPlan {
  const warnings: string[] = [];
  notHonoured(f, warnings);
  // vLLM's --goodput and --metadata take space-separated lists: the words after them.
  const goodputWords = [...f.goodput], metaWords = [...f.metadata];
  for (const w of f.words) {
    if (/^(ttft|tpot|e2el):/.test(w)) goodputWords.push(w);
    else if (/^[^=\s]+=/.test(w)) metaWords.push(w);
    else throw bad("ik bench vllm", `unexpected argument '${w}'`, "values go after their flag");
  }
  if (goodputWords.length && !f.goodput.length) throw bad("ik bench vllm", `'${goodputWords[0]}' has no --goodput before it`, "e.g. --goodput ttft:100 tpot:50");
  if (metaWords.length && !f.metadata.length) throw bad("ik bench vllm", `'${metaWords[0]}' has no --metadata before it`, "e.g. --metadata version=0.3.3 tp=1");
  const metadata = metaWords.map((w): [string, string] => {
    const i = w.indexOf("=");
    if (i <= 0) throw bad("--metadata", `'${w}' is not KEY=VALUE`, "e.g. --metadata version=0.3.3");
    return [w.slice(0, i).trim(), w.slice(i + 1).trim()];
  });
  const api = BACKENDS[f.backend];
  if (!api) throw bad("--backend", `'${f.backend}': ik speaks the OpenAI API only`, "use --backend openai (or vllm: completions) or openai-chat");
  // vLLM's api_url is base_url + endpoint: a path before the API's own (a router's prefix) is kept.
  if (f.endpoint !== undefined && !f.endpoint.endsWith(PATHS[api])) {
    throw bad("--endpoint", `'${f.endpoint}' is not the ${api} endpoint of --backend ${f.backend}`, `use --endpoint ${PATHS[api]} (after any path prefix), or --backend ${api === "chat" ? "openai" : "openai-chat"} for ${api === "chat" ? PATHS.completions : PATHS.chat}`);
  }
  const endpointPrefix = f.endpoint !== undefined ? f.endpoint.slice(0, f.endpoint.length - PATHS[api].length).replace(/\/+$/, "") : "";
  if (endpointPrefix && !endpointPrefix.startsWith("/")) throw bad("--endpoint", `'${f.endpoint}' does not start with /`, `e.g. --endpoint /proxy${PATHS[api]}`);
  if (f.baseUrl !== undefined && (f.host !== "127.0.0.1" || f.port !== 8000)) warnings.push("--base-url is given: --host and --port are ignored, as vLLM does");
  const host = f.host.includes(":") && !f.host.startsWith("[") ? `[${f.host}]` : f.host;
  const baseUrl = (f.baseUrl ?? `http://${host}:${f.port}`).replace(/\/+$/, "") + endpointPrefix;
  const raw = f.requestRate.trim().toLowerCase();
  const requestRate = raw === "inf" || raw === "infinity" ? Infinity : Number(raw);
  if (!(requestRate > 0) || Number.isNaN(requestRate)) throw bad("--request-rate", `'${f.requestRate}' is not a positive number or inf`, "e.g. --request-rate 4, or inf (every request at time 0)");
  const percentileMetrics = (f.percentileMetrics ?? "ttft,tpot,itl").split(",").map((s) => s.trim()).filter(Boolean);
  for (const m of percentileMetrics) {
    if (!(PERCENTILE_METRICS as readonly string[]).includes(m)) throw bad("--percentile-metrics", `'${m}' is not one of ${PERCENTILE_METRICS.join(", ")}`);
  }
  const percentiles = f.metricPercentiles.split(",").map((s) => s.trim()).filter(Boolean).map((s) => {
    const p = Number(s);
    if (!Number.isFinite(p) || p < 0 || p > 100) throw bad("--metric-percentiles", `'${s}' is not a percentile in [0, 100]`, "e.g. --metric-percentiles 50,90,99");
    return p;
  });
  if (!percentiles.length) throw bad("--metric-percentiles", "is empty", "e.g. --metric-percentiles 99");
  const sampling: Record<string, unknown> = {};
  for (const [k, v] of [["top_p", f.topP], ["top_k", f.topK], ["min_p", f.minP], ["temperature", f.temperature], ["frequency_penalty", f.frequencyPenalty], ["presence_penalty", f.presencePenalty], ["repetition_penalty", f.repetitionPenalty]] as const) {
    if (v !== undefined) sampling[k] = v;
  }
  let extra: Record<string, unknown> = {};
  if (f.extraBody !== undefined) {
    let v: unknown;
    try {
      v = JSON.parse(f.extraBody);
    } catch (e) {
      throw bad("--extra-body", `not valid JSON (${(e as Error).message})`, "pass a JSON object, e.g. '{\"top_k\": 20}'");
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) throw bad("--extra-body", "must be a JSON object");
    extra = v as Record<string, unknown>;
  }
  return { api, baseUrl, requestRate, goodput: parseGoodput(goodputWords), metadata, percentileMetrics, percentiles, body: { ...sampling, ...extra }, warnings };
}
