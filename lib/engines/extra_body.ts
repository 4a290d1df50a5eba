/**
 * `--extra-body`: a JSON object merged last into the request body. Refused: keys that would
 * reach an object's prototype (`__proto__`, `constructor`, `prototype`, at any depth), and
 * `"stream": false` (ik measures a stream; a whole answer would read as a broken server).
 * @module
 */
import { usageError } from "../cli/errors.ts";

const EXAMPLE_HINT = "pass a JSON object, e.g. '{\"top_p\":0.9}'";
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

function findForbiddenKey(v: unknown, path: string): string | null {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = findForbiddenKey(v[i], `${path}[${i}]`);
      if (hit) return hit;
    }
    return null;
  }
  if (v === null || typeof v !== "object") return null;
  for (const k of Object.keys(v)) {
    const p = path ? `${path}.${k}` : k;
    if (FORBIDDEN_KEYS.has(k)) return p;
    const hit = findForbiddenKey((v as Record<string, unknown>)[k], p);
    if (hit) return hit;
  }
  return null;
}

/**
 * Parses and checks `--extra-body`; null when the flag was not given.
 * @throws IkError (usage, 64) naming the flag and the key
 */
export function checkExtraBody(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw usageError("--extra-body", `not valid JSON (${(e as Error).message})`, EXAMPLE_HINT);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw usageError("--extra-body", "must be a JSON object", EXAMPLE_HINT);
  }
  const bad = findForbiddenKey(v, "");
  if (bad) {
    throw usageError(
      "--extra-body",
      `key '${bad}' is not allowed (it would reach an object's prototype)`,
      "remove it",
    );
  }
  const o = v as Record<string, unknown>;
  if ("stream" in o && o.stream !== true) {
    throw usageError(
      "--extra-body",
      `key 'stream' must stay true (got ${JSON.stringify(o.stream)}): ik measures a streamed answer`,
      "remove 'stream' from --extra-body",
    );
  }
  return o;
}
