/**
 * Lenient `key=value, key=value` lists, as vLLM's engine-config line and TensorRT-LLM's
 * `max_seq_len=..., max_batch_size=...` print them: values are Python literals where they are
 * one, raw text otherwise. Never throws.
 * @module
 */
import { CONSTANTS, type JsonValue, MAX_LITERAL_CHARS, parsePyLiteral, pyNumber, setOwn } from "./resolved_config_pyliteral.ts";

/** A `key=value, ...` list as {@link parseKwargList} reads it. */
export interface KwargList {
  /** The values, by key, in order. */
  values: Record<string, JsonValue>;
  /** Whether the whole text was a key=value list (false: reading stopped at something else). */
  complete: boolean;
}

/** A raw value: a plain number becomes a number, True/False/None their JSON values, else trimmed text. */
export function rawScalar(raw: string): JsonValue {
  const t = raw.trim();
  if (t in CONSTANTS) return CONSTANTS[t];
  if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) {
    const n = pyNumber(t);
    return typeof n === "number" ? n : t;
  }
  return t;
}

/** The index of the next top-level `, name=` after `from` (or the end of the text), and whether brackets and quotes were balanced up to there. */
function nextKwarg(s: string, from: number): { end: number; balanced: boolean } {
  const stack: string[] = [];
  const close: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
  let quote = "";
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === "'" || c === '"') quote = c;
    else if (c in close) stack.push(close[c]);
    else if (c === stack[stack.length - 1]) stack.pop();
    else if (c === "," && stack.length === 0 && /^,\s*[A-Za-z_]\w*\s*=(?!=)/.test(s.slice(i, i + 80))) return { end: i, balanced: true };
  }
  return { end: s.length, balanced: stack.length === 0 && quote === "" };
}

/**
 * Reads a lenient `key=value, key=value` list, as in vLLM's engine-config line or TensorRT-LLM's
 * `max_seq_len=..., max_batch_size=...`: each value is a Python literal when it is one; otherwise
 * (`served_model_name=Qwen/Qwen2.5-0.5B`, `available_gpu_mem=16.25 GB`) the raw text up to the next
 * top-level `, name=`, through {@link rawScalar}. Never throws.
 */
export function parseKwargList(text: string): KwargList {
  const values: Record<string, JsonValue> = {};
  if (typeof text !== "string" || text.length > MAX_LITERAL_CHARS) return { values, complete: false };
  const s = text;
  let i = 0;
  const key = /\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)/y;
  while (i < s.length) {
    key.lastIndex = i;
    const m = key.exec(s);
    if (!m) return { values, complete: s.slice(i).trim() === "" };
    const start = key.lastIndex;
    const lit = parsePyLiteral(s, start);
    const after = lit.ok ? s.slice(lit.end).match(/^\s*(,|$)/) : null;
    if (lit.ok && after) {
      setOwn(values, m[1], lit.value);
      i = lit.end + after[0].length;
      continue;
    }
    const { end, balanced } = nextKwarg(s, start);
    setOwn(values, m[1], rawScalar(s.slice(start, end)));
    if (!balanced) return { values, complete: false };
    i = end + 1;
  }
  return { values, complete: true };
}
