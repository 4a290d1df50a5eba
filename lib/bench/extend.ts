/**
 * `--extend ID` (seed 000 _load_previous): new rounds are appended to an earlier single-mode record of
 * the SAME configuration. Refused, naming what differs, when a config key differs (JSON arguments
 * compared by value), when the prompt set changed, or when the earlier rows are missing or changed;
 * an incomplete record only with --allow-incomplete.
 * @module
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { usageError } from "../cli/errors.ts";
import { dataError } from "../cli/errors.ts";
import { fileSha256, loadRecord, normalizedJson, scrubValue } from "../evidence/mod.ts";

/** The arguments that define "the same configuration" (seed 000 SAME_CONFIG). */
export const SAME_CONFIG = [
  "base_url", "model", "api", "engine_kind", "engine_version", "max_tokens", "buckets", "limit_per_bucket", "token_ids",
  "exact_length", "cache_salt", "extra_body", "label", "seed", "chat_template_kwargs", "temperature",
] as const;

/** Arguments compared as parsed JSON, not as text. */
export const JSON_ARGS = new Set(["extra_body", "chat_template_kwargs"]);

function configValue(key: string, v: unknown): string {
  if (JSON_ARGS.has(key)) return normalizedJson(v) ?? "null";
  // Records from before --temperature sent 0 in every body.
  if (key === "temperature") return JSON.stringify(v ?? 0);
  return JSON.stringify(v ?? null);
}

/** The config keys whose values differ between two argument sets. */
export function configDiff(prev: Record<string, unknown>, mine: Record<string, unknown>): string[] {
  return SAME_CONFIG.filter((k) => configValue(k, prev[k]) !== configValue(k, mine[k]));
}

/** An earlier record, checked and with its rows, ready to extend. */
export interface Previous {
  record: Record<string, unknown> & { evidence_id: string; data: Record<string, unknown> };
  rows: Record<string, unknown>[];
}

/**
 * Loads and checks the record to extend.
 * @param args this run's stored arguments (redacted, base_url as its tag, engine_kind resolved)
 * @param promptSetSha256 this run's prompt set
 * @throws IkError: 65 when the record is missing, changed, or not extendable; 64 when the
 *   configuration differs
 */
export async function loadPrevious(
  storeRoot: string,
  id: string,
  args: Record<string, unknown>,
  promptSetSha256: string,
  allowIncomplete: boolean,
): Promise<Previous> {
  let loaded;
  try {
    loaded = await loadRecord(storeRoot, id);
  } catch (e) {
    throw dataError(`--extend ${id}`, (e as Error).message, "name a complete record in $IK_RUNS_DIR (else ./runs)");
  }
  const rec = loaded.record as Previous["record"] & { identity?: { workload?: Record<string, unknown> }; request?: { args?: Record<string, unknown> }; complete?: boolean; artifacts?: { path: string; role: string; sha256: string }[] };
  if (rec.kind !== "serve_benchmark" || rec.identity?.workload?.mode !== "single") {
    throw dataError(`--extend ${id}`, "not a single-mode serve_benchmark record");
  }
  if (rec.complete !== true && !allowIncomplete) {
    throw dataError(`--extend ${id}`, "the record is incomplete (its run was interrupted)", "pass --allow-incomplete to build on it anyway");
  }
  // The stored args are redacted: compare like with like.
  const diff = configDiff(rec.request?.args ?? {}, scrubValue(args));
  if (rec.data?.prompt_set_sha256 !== promptSetSha256) diff.push("prompt_set");
  if (diff.length) {
    throw usageError("--extend", `needs the same configuration as ${id}; these differ: ${diff.join(", ")}`, "rerun with the earlier flags, or start a new record");
  }
  const art = rec.artifacts?.find((a) => a.role === "requests");
  const path = art ? join(loaded.dir, art.path) : null;
  let text: string | null = null;
  if (path && art) {
    try {
      if ((await fileSha256(path)) === art.sha256) text = await readFile(path, "utf8");
    } catch { /* missing */ }
  }
  if (text === null) throw dataError(`--extend ${id}`, "its per-request rows are missing or changed");
  const rows = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { record: rec, rows };
}
