/**
 * The load-trial workload file (seed 004): `workload/workload.json` with `schema: 1`, the requests
 * `{id, messages, max_tokens, input_tokens}`, the seed that made them and the sha256 of the
 * requests (canonical JSON), so a plan can name exactly what a point sent. Made from a prompt set
 * or from synthetic input/output length specs; read back with every problem named.
 * @module
 */
import { createHash } from "node:crypto";
import { dataError } from "../cli/errors.ts";
import { canonicalJson } from "../evidence/mod.ts";
import type { Prompt } from "../prompts/mod.ts";
import { parsePromptSetText } from "../prompts/mod.ts";
import { pseudoTokens, synthPromptSet, type SynthBucket } from "../prompts/synth.ts";

/** The workload schema version. */
export const WORKLOAD_SCHEMA = 1;

/** One request of a workload. */
export interface WorkloadRequest {
  id: string;
  messages: { role: string; content: unknown }[];
  max_tokens: number;
  /** Prompt tokens as the source counted them; null when unknown. */
  input_tokens: number | null;
}

/** A workload file. */
export interface Workload {
  schema: 1;
  seed: number;
  /** Where the requests came from. */
  source: Record<string, unknown>;
  requests: WorkloadRequest[];
  /** sha256 of the canonical JSON of `requests`. */
  requests_sha256: string;
}

/** sha256 (hex) of the canonical JSON of the requests. */
export function requestsSha256(requests: readonly WorkloadRequest[]): string {
  return createHash("sha256").update(canonicalJson(requests)).digest("hex");
}

/** A workload from prompts (a set's, or synthetic ones): `n` requests cycling over them, or all of them when `n` is null. */
export function workloadFromPrompts(prompts: readonly Prompt[], o: { n: number | null; seed: number; source: Record<string, unknown>; defaultMaxTokens: number }): Workload {
  const count = o.n ?? prompts.length;
  const requests: WorkloadRequest[] = [];
  for (let i = 0; i < count; i++) {
    const p = prompts[i % prompts.length];
    const given = p.extra.input_tokens;
    requests.push({
      id: count > prompts.length ? `${p.id}#${Math.floor(i / prompts.length)}` : p.id,
      messages: p.messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: p.maxTokens ?? o.defaultMaxTokens,
      input_tokens: typeof given === "number" && Number.isInteger(given) && given >= 0 ? given : null,
    });
  }
  return { schema: WORKLOAD_SCHEMA, seed: o.seed, source: o.source, requests, requests_sha256: requestsSha256(requests) };
}

/** Synthetic prompts of the given lengths (words as pseudo-tokens, as `ik prompts synth` makes them), `perSpec` of each. */
export function synthPrompts(specs: readonly SynthBucket[], perSpec: number, seed: number): Prompt[] {
  return parsePromptSetText(synthPromptSet(specs, perSpec, seed, pseudoTokens), "synthetic");
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Parses and checks a workload file's text; every problem is named at once (exit 65), including
 * a requests sha256 that does not match the requests.
 */
export function parseWorkload(text: string, path: string): Workload {
  let v: unknown;
  try {
    // A leading UTF-8 byte-order mark (some editors write one) is not part of the JSON.
    v = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    throw dataError(path, `not valid JSON: ${(e as Error).message}`, "give a workload.json written by 'ik load-trial prepare'");
  }
  const problems: string[] = [];
  if (!isObj(v)) throw dataError(path, "the workload must be a JSON object", "give a workload.json written by 'ik load-trial prepare'");
  if (v.schema !== WORKLOAD_SCHEMA) problems.push(`schema must be ${WORKLOAD_SCHEMA}, not ${JSON.stringify(v.schema)}`);
  if (!Array.isArray(v.requests) || v.requests.length === 0) problems.push("requests must be a non-empty list");
  const reqs = Array.isArray(v.requests) ? v.requests : [];
  reqs.forEach((r: unknown, i: number) => {
    if (problems.length > 20) return;
    if (!isObj(r)) return void problems.push(`requests[${i}] is not an object`);
    if (typeof r.id !== "string" || !r.id) problems.push(`requests[${i}].id must be a non-empty string`);
    if (!Array.isArray(r.messages) || !r.messages.length || !r.messages.every((m) => isObj(m) && typeof m.role === "string")) problems.push(`requests[${i}].messages must be a non-empty list of {role, content}`);
    if (!Number.isInteger(r.max_tokens) || (r.max_tokens as number) < 1) problems.push(`requests[${i}].max_tokens must be a positive integer`);
    if (r.input_tokens !== null && r.input_tokens !== undefined && !(Number.isInteger(r.input_tokens) && (r.input_tokens as number) >= 0)) problems.push(`requests[${i}].input_tokens must be a non-negative integer or null`);
  });
  if (!problems.length) {
    const sha = requestsSha256(reqs as WorkloadRequest[]);
    if (v.requests_sha256 !== sha) problems.push(`requests_sha256 ${JSON.stringify(v.requests_sha256)} does not match the requests (${sha}): the file was edited`);
  }
  if (problems.length) throw dataError(path, `${problems.length} workload problem${problems.length === 1 ? "" : "s"}: ${problems.join("; ")}`, "regenerate it with 'ik load-trial prepare'");
  return { schema: WORKLOAD_SCHEMA, seed: typeof v.seed === "number" ? v.seed : 0, source: isObj(v.source) ? v.source : {}, requests: reqs as WorkloadRequest[], requests_sha256: v.requests_sha256 as string };
}
