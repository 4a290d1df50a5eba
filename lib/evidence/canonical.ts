/** Canonical JSON: sorted keys, no spaces, so the same value always hashes the same. */
import { createHash } from "node:crypto";

/** The value as canonical JSON text (object keys sorted at every level; undefined dropped). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v as Record<string, unknown>).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) out[k] = sortKeys(x);
  }
  return out;
}

/** sha256 hex of a value's canonical JSON. */
export function canonicalSha256(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

/**
 * A JSON-object argument in one spelling, so `{"a": false}` and `{"a":false}` compare equal;
 * empty or `{}` is null; text that is not JSON is returned as it is.
 */
export function normalizedJson(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  let v = value;
  if (typeof value === "string") {
    try {
      v = JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (v === null || (typeof v === "object" && !Array.isArray(v) && Object.keys(v as object).length === 0)) return null;
  return canonicalJson(v);
}
