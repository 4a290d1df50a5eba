/**
 * Reading what Python's `json.dump` writes: one object, or several appended to one file
 * (`vllm bench serve --append-result` writes `"\n" + json` to the same file), with the bare tokens
 * `NaN`, `Infinity` and `-Infinity` that Python emits for non-finite floats (SGLang writes
 * `Infinity` for an infinite request rate) read as numbers.
 * @module
 */
import { clipText } from "./clip_text.ts";

const MARK = "\u0000ik-nonfinite:";
const TOKENS: Record<string, number> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

/** Where a value failed to parse: 1-based line and what was wrong. */
export class JsonTextError extends Error {
  /** @param line 1-based line of the problem; @param what the reason */
  constructor(readonly line: number, what: string) {
    super(what);
    this.name = "JsonTextError";
  }
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/**
 * Splits text into its top-level JSON values and parses each.
 * @returns the values in file order (an empty file gives [])
 * @throws JsonTextError naming the line of the first value that does not parse
 */
export function parseJsonValues(text: string): unknown[] {
  // the common case, one plain object, without the character scan (detailed files run to tens of MB)
  try {
    return text.trim() ? [JSON.parse(text)] : [];
  } catch { /* several objects, or non-finite tokens: scan */ }
  const out: unknown[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && /\s/.test(text[i])) i++;
    if (i >= n) break;
    const start = i;
    let depth = 0, inString = false, piece = "", from = i;
    // scan one value; bare non-finite tokens outside strings become marked strings
    for (; i < n; i++) {
      const ch = text[i];
      if (inString) {
        if (ch === "\\") i++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === "{" || ch === "[") depth++;
      else if (ch === "}" || ch === "]") {
        depth--;
        if (depth <= 0) {
          i++;
          break;
        }
      } else if (ch === "N" || ch === "I" || ch === "-") {
        const m = /^(NaN|Infinity|-Infinity)\b/.exec(text.slice(i, i + 9));
        if (m) {
          piece += text.slice(from, i) + JSON.stringify(MARK + m[1]);
          i += m[1].length - 1;
          from = i + 1;
        }
      } else if (depth === 0 && !/\s/.test(ch)) {
        // a top-level scalar: read to the end of the line
        const end = text.indexOf("\n", i);
        i = end < 0 ? n : end;
        break;
      }
    }
    piece += text.slice(from, i);
    try {
      out.push(JSON.parse(piece, (_k, v) => (typeof v === "string" && v.startsWith(MARK) ? TOKENS[v.slice(MARK.length)] : v)));
    } catch (e) {
      throw new JsonTextError(lineAt(text, start), `not valid JSON (${clipText((e as Error).message.split("\n")[0], 120)})`);
    }
  }
  return out;
}
