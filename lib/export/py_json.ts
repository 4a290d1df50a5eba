/**
 * JSON as Python's `json.dump(obj, f)` writes it with its default options, for files that stand in
 * for a Python tool's own (vLLM's result files): `", "` and `": "` separators, every character
 * outside printable ASCII escaped (`ensure_ascii`, lowercase hex, surrogate pairs as two escapes,
 * DEL too), and a float that holds a whole number written with its `.0` (`20.0`, where
 * `JSON.stringify` writes `20`) and in Python's notation (`1e-05`, where JS writes `0.00001`). Which numbers are floats is the caller's knowledge, by key: every
 * number under a float key, in nested arrays too (`itls`), is one. Non-finite numbers are `null`
 * (Python would write `NaN`, which is not JSON).
 * @module
 */

const ESC: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A string as Python's json with ensure_ascii: printable ASCII kept, everything else escaped. */
export function pyJsonString(s: string): string {
  let out = '"';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(from, i) + (ESC[s[i]] ?? `\\u${c.toString(16).padStart(4, "0")}`);
    from = i + 1;
  }
  return out + s.slice(from) + '"';
}

/**
 * Python's `repr` of a float: the shortest digits that read back to it, in fixed notation for
 * exponents -4 to 15 (with `.0` when whole), else `d.ddde±XX` (`1e-05`, `1.5e+16`).
 */
export function pyFloatRepr(x: number): string {
  if (!Number.isFinite(x)) return "null";
  const [mant, e] = x.toExponential().split("e");
  const exp = Number(e);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const digits = mant.replace("-", "").replace(".", "");
  if (exp < -4 || exp >= 16) {
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ""}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  return `${sign}${digits.slice(0, exp + 1).padEnd(exp + 1, "0")}.${digits.slice(exp + 1) || "0"}`;
}

function pyNumber(x: number, float: boolean): string {
  if (!Number.isFinite(x)) return "null";
  return float ? pyFloatRepr(x) : String(x);
}

/**
 * Serializes `value` as Python's `json.dumps(value)` would the same data.
 * @param isFloat whether a key's numbers are floats (its nested arrays' numbers too)
 * @example pyJson({ request_rate: 20, completed: 3, ttfts: [0, 0.5] }, (k) => k !== "completed")
 * // '{"request_rate": 20.0, "completed": 3, "ttfts": [0.0, 0.5]}'
 */
export function pyJson(value: unknown, isFloat: (key: string) => boolean): string {
  const walk = (v: unknown, float: boolean): string => {
    if (v === null || v === undefined) return "null";
    if (typeof v === "number") return pyNumber(v, float);
    if (typeof v === "string") return pyJsonString(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (Array.isArray(v)) return `[${v.map((x) => walk(x, float)).join(", ")}]`;
    if (typeof v === "object") {
      const parts: string[] = [];
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (x === undefined || typeof x === "function") continue;
        parts.push(`${pyJsonString(k)}: ${walk(x, isFloat(k))}`);
      }
      return `{${parts.join(", ")}}`;
    }
    return "null";
  };
  return walk(value, false);
}

/** The keys of a `vllm bench serve` result whose numbers are Python floats (all else: ints). */
const VLLM_FLOAT_KEYS = new Set([
  "request_rate", "burstiness", "duration", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
  "ttfts", "itls", "latencies", "start_times", "queue_times", "max_output_tokens_per_s", "rtfx",
]);

/** Whether a vLLM result key holds floats: the named ones and every `*_ms` statistic. */
export function vllmFloatKey(key: string): boolean {
  return VLLM_FLOAT_KEYS.has(key) || key.endsWith("_ms");
}

/** A vLLM result object as `vllm bench serve` writes its file. */
export function vllmJson(result: unknown): string {
  return pyJson(result, vllmFloatKey);
}
