/**
 * SSE encoding for the mock, byte-exact to what each engine writes: compact JSON events,
 * Python `json.dumps` spacing for vLLM/SGLang error events, and trtllm's `" \n\n"` first event.
 * @module
 */

/** The stream terminator every OpenAI-compatible server sends. */
export const SSE_DONE = "data: [DONE]\n\n";

/** One `data:` event holding compact JSON (the serialization pydantic, orjson and nlohmann produce). */
export function sseEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** A `data:` event with arbitrary text (e.g. a deliberately malformed chunk). */
export function sseRaw(text: string, terminator = "\n\n"): string {
  return `data: ${text}${terminator}`;
}

/**
 * JSON as Python's `json.dumps` writes it by default: `", "` and `": "` separators and
 * non-ASCII escaped. vLLM and SGLang serialize mid-stream errors this way.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") {
    return JSON.stringify(value).replace(
      /[\u007f-\uffff]/g,
      (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
    );
  }
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return "[" + value.map(pythonJson).join(", ") + "]";
  if (typeof value === "object") {
    const parts = Object.entries(value as Record<string, unknown>).map(([k, v]) =>
      `${pythonJson(k)}: ${pythonJson(v)}`
    );
    return "{" + parts.join(", ") + "}";
  }
  return JSON.stringify(String(value));
}

/** A chunk cut off mid-JSON: what a broken proxy or a buggy engine puts on the wire. */
export function malformedEvent(chunk: unknown): string {
  const json = JSON.stringify(chunk);
  return sseRaw(json.slice(0, Math.max(1, Math.floor(json.length / 2))));
}
