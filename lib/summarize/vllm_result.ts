/**
 * One `vllm bench serve --save-result` file, with the version drift of
 * ../shared/spec/vllm-result-format.md smoothed over: an appended (`--append-result`) file holds
 * several objects and the last is the run's; `request_rate` may be the string `"inf"`; legacy
 * `benchmark_serving.py` wrote `request_goodput:` with a trailing colon, and its early versions the
 * request rate as `request_inthroughput`.
 * @module
 */
import { clipText } from "./clip_text.ts";
import { JsonTextError, parseJsonValues } from "./lenient_json.ts";

/** A result object (keys as vLLM wrote them, after the normalisation above). */
export type VllmResult = Record<string, unknown>;

/** A read result, or why there is none. */
export type ReadResult =
  | { ok: true; result: VllmResult; appended: number }
  | { ok: false; reason: string };

/**
 * Parses a result file's text.
 * @returns the (last) result object and how many objects the file held, or the reason it is unusable
 */
export function readVllmResult(text: string): ReadResult {
  let values: unknown[];
  try {
    values = parseJsonValues(text);
  } catch (e) {
    if (e instanceof JsonTextError) return { ok: false, reason: `line ${e.line}: ${e.message}` };
    throw e;
  }
  if (!values.length) return { ok: false, reason: "the file is empty" };
  const last = values[values.length - 1];
  if (last === null || typeof last !== "object" || Array.isArray(last)) {
    return { ok: false, reason: Array.isArray(last) ? "a JSON array (a `vllm bench sweep` summary.json?), not one result object" : "not a JSON object" };
  }
  const result: VllmResult = { ...(last as VllmResult) };
  if (result.request_goodput == null && result["request_goodput:"] !== undefined) result.request_goodput = result["request_goodput:"];
  if (result.request_throughput == null && result.request_inthroughput !== undefined) result.request_throughput = result.request_inthroughput;
  if (typeof result.request_rate === "string" && /^\+?inf(inity)?$/i.test(result.request_rate)) result.request_rate = Infinity;
  return { ok: true, result, appended: values.length };
}

/**
 * The first of `keys` that holds a number (vLLM names the 50th percentile both `p50_*` and
 * `median_*`, and fields moved between versions).
 */
export function pickNumber(res: VllmResult, ...keys: string[]): number | null {
  for (const k of keys) {
    const v = res[k];
    if (typeof v === "number") return v;
  }
  return null;
}

/** Keys of a vLLM result whose value must be a count: a non-negative integer. */
const COUNT_KEYS = ["num_prompts", "completed", "failed", "total_input_tokens", "total_output_tokens"];
/**
 * Keys (or key patterns) whose value must be a finite non-negative number: the throughputs vLLM
 * writes by name (not every key ending in `_throughput`), the duration and the percentile blocks.
 */
const METRIC_KEYS = [
  /^duration$/,
  /^(request|output|total_token|input|input_sequence|diffusion_committed)_throughput$/,
  /^request_(goodput|inthroughput)$/,
  /^(mean|median|std|p\d+(\.\d+)?)_(ttft|tpot|itl|e2el)_ms$/,
];

/** Result keys every vLLM version writes itself, after any `--metadata` (which they overwrite). */
const ALWAYS_WRITTEN = ["duration", "completed", "total_input_tokens", "total_output_tokens", "request_throughput", "output_throughput", "total_token_throughput"];

/**
 * Whether the file comes from a vLLM that writes `failed` itself (PR #26478, Oct 2025): one that
 * also writes `max_concurrent_requests` (Aug 2025) and `endpoint_type`. A `failed` string in an older
 * file can only be the user's metadata.
 */
function writesFailed(res: VllmResult): boolean {
  return typeof res.max_concurrent_requests === "number" && "endpoint_type" in res;
}

/**
 * Every value of a result that cannot be a measurement: a count that is not a non-negative integer
 * (39.5, -1, true), a metric that is not a finite non-negative number (NaN, Infinity, -1). Each is
 * a FLAG: a unit holding one is never PUBLISHABLE.
 *
 * A JSON string is checked only under a key vLLM writes itself in every version
 * ({@link ALWAYS_WRITTEN}): vLLM writes each `--metadata KEY=VALUE` as a string-valued key, then
 * its own results over them, each a number (bare `NaN`/`Infinity` when non-finite), so a string
 * there means a damaged file (and the seed counts a `failed` of `"3"` as failures). Anywhere else a
 * string under a measurement's name (`input_throughput=n/a`, a `p99_ttft_ms=…` that survives
 * because vLLM omits the ttft/tpot/itl blocks without a tokenizer, a `num_prompts` the metadata
 * replaced, a `failed=…` in a file from before vLLM wrote `failed`) is the user's, not a
 * measurement; the summary reads it as absent.
 */
export function impossibleValues(res: VllmResult): string[] {
  const out: string[] = [];
  // a number as JavaScript prints it (NaN, Infinity), anything else as JSON, cut
  const show = (v: unknown) => (typeof v === "number" ? String(v) : clipText(JSON.stringify(v) ?? String(v), 20));
  for (const [k, v] of Object.entries(res)) {
    if (typeof v === "string" && !ALWAYS_WRITTEN.includes(k) && !(k === "failed" && writesFailed(res))) continue;
    if (COUNT_KEYS.includes(k)) {
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0) out.push(`${k} is ${show(v)}, not a count`);
    } else if (METRIC_KEYS.some((re) => re.test(k)) && v !== null) {
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) out.push(`${k} is ${show(v)}, not a finite non-negative number`);
    }
  }
  if (typeof res.completed === "number" && typeof res.num_prompts === "number" && res.completed > res.num_prompts) {
    out.push(`completed ${res.completed} > num_prompts ${res.num_prompts}`);
  }
  return out;
}

/** The array under `key`, or null when absent or not an array. */
export function pickArray(res: VllmResult, key: string): unknown[] | null {
  const v = res[key];
  return Array.isArray(v) ? v : null;
}
