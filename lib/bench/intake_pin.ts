/**
 * The intake pin (seed 000): a run dir's `intake.normalized.json` may pre-register the
 * chat_template_kwargs every engine must get. Its keys are added; a contradicting value is refused.
 * @module
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { dataError, usageError } from "../cli/errors.ts";
import { canonicalJson } from "../evidence/mod.ts";

/** The pinned chat_template_kwargs of a run dir, or null when it pins none. */
export async function intakePin(runDir: string): Promise<Record<string, unknown> | null> {
  const p = join(runDir, "intake.normalized.json");
  let text: string;
  try {
    text = await readFile(p, "utf8");
  } catch {
    return null;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw dataError(p, "not valid JSON", "fix or remove the intake file");
  }
  const kw = (v as { chat_template_kwargs?: unknown } | null)?.chat_template_kwargs;
  if (kw === undefined || kw === null) return null;
  if (typeof kw !== "object" || Array.isArray(kw)) throw dataError(p, "'chat_template_kwargs' must be a JSON object");
  return kw as Record<string, unknown>;
}

/**
 * `given` with the pin's keys added.
 * @throws IkError (64) naming the key when a given value contradicts the pin
 */
export function applyPin(given: Record<string, unknown>, pin: Record<string, unknown>, runDir: string): Record<string, unknown> {
  for (const [k, v] of Object.entries(pin)) {
    if (k in given && canonicalJson(given[k]) !== canonicalJson(v)) {
      throw usageError("--chat-template-kwargs", `'${k}' is ${JSON.stringify(given[k])} but ${join(runDir, "intake.normalized.json")} pins ${JSON.stringify(v)}`,
        "drop the flag's value or change the intake");
    }
  }
  return { ...given, ...pin };
}
