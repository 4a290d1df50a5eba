/**
 * The run manifest of `ik bench rounds`: which engines to launch and how (seed 001, issue 10).
 * Parsing is pure (text in, value or error out). Every problem is collected before failing, so
 * one run of the command shows all of them, each naming the engine and the field (exit 65).
 * @module
 */
import { knownEngineKind } from "../engines_host/resolved_config.ts";
import { type KindSource, resolveEngineKind } from "./engine_kind.ts";
import { dirname } from "node:path";
import { dataError, type IkError } from "../cli/errors.ts";

/** What `--engine-kind` the child `bench serve` gets: a known kind, or `auto` (detected). */
export type RoundsEngineKind = "vllm" | "sglang" | "llamacpp" | "trtllm" | "auto";

/** The manifest names that give a kind; any other name lets the child detect it. */
export const MANIFEST_KINDS: readonly RoundsEngineKind[] = ["vllm", "sglang", "llamacpp", "trtllm"];

/** Default readiness path (issue 10). */
export const DEFAULT_READY_CHECK = "/v1/models";
/** Default host of an engine. */
export const DEFAULT_HOST = "127.0.0.1";

/** Fields an engine entry may have; others are kept out and warned about. */
export const ENGINE_FIELDS: readonly string[] = [
  "label", "name", "version", "launch", "env", "port", "host", "ready_check", "metrics_path", "role", "cwd", "expect",
];

/** One checked engine entry, with the defaults applied. */
export interface EngineSpec {
  /** Unique label (the manifest's `label`, else its `name`); letters, digits, `-`, `_`, `.`. */
  label: string;
  /** The manifest's `name`, or null. */
  name: string | null;
  /** The `--engine-kind` for the child `bench serve`: from a known `name`, else the launch argv, else `auto`. */
  kind: RoundsEngineKind;
  /** Where `kind` came from: the `name`, the `launch` argv, or `none` (auto). */
  kind_source: KindSource;
  /** The manifest's `version` as text, or null. */
  version: string | null;
  /** The launch command (argv, no shell). */
  launch: string[];
  /** Extra environment for the engine (the values are never recorded). */
  env: Record<string, string>;
  /** TCP port the engine listens on. */
  port: number;
  /** Host the engine listens on (default 127.0.0.1). */
  host: string;
  /** Readiness path, with a leading slash (default /v1/models). */
  ready_check: string;
  /** Prometheus path from the manifest, or null for the engine's own (CONTRACTS.md). */
  metrics_path: string | null;
  /** Free-text role (e.g. "baseline"), or null. */
  role: string | null;
  /** Working directory for the launch, or null. */
  cwd: string | null;
  /** Settings the resolved config must show (engine's own names), `{}` when none. */
  expect: Record<string, unknown>;
}

/** A checked manifest. */
export interface RoundsManifest {
  /** The engines, in manifest order. */
  engines: EngineSpec[];
  /** `model.id`: the model name when /v1/models lists none, or null. */
  model_id: string | null;
  /** `workload.extra_body`, or null. */
  extra_body: Record<string, unknown> | null;
  /** `workload.chat_template_kwargs`, or null. */
  chat_template_kwargs: Record<string, unknown> | null;
  /** The default run dir: the manifest's folder. */
  run_dir: string;
  /** Unknown fields, one sentence each (not errors). */
  warnings: string[];
}

/** One manifest problem: where it is and what is wrong. */
export interface ManifestProblem {
  /** The engine's label when it has one, else `engines[i]`; null for a top-level field. */
  engine: string | null;
  /** The field, e.g. `launch`, `env.CUDA_VISIBLE_DEVICES`, `model.id`. */
  field: string;
  /** What is wrong. */
  message: string;
}

/** The problem as the person reads it: `engine "a" (engines[0]) port: must be …`. */
export function formatProblem(p: ManifestProblem): string {
  return p.engine === null ? `${p.field}: ${p.message}` : `${p.engine} ${p.field}: ${p.message}`;
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);
const LABEL_RE = /^[A-Za-z0-9._-]+$/;

/**
 * The kind a manifest `name` gives: one of {@link MANIFEST_KINDS}, case and punctuation ignored
 * ("vLLM", "llama.cpp", "TensorRT-LLM", "llama-server"), else `auto` (the child detects it).
 */
export function engineKindFromName(name: unknown): RoundsEngineKind {
  return knownEngineKind(name) ?? "auto";
}

function urlPath(value: string): string {
  return "/" + value.replace(/^\/+/, "");
}

function optionalText(e: Json, field: string, problem: (f: string, m: string) => void): string | null {
  const v = e[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || !v.trim()) {
    problem(field, "must be a non-empty string");
    return null;
  }
  return v;
}

function checkEngine(e: unknown, i: number, taken: Map<string, number>, out: ManifestProblem[], warnings: string[]): EngineSpec | null {
  if (!isObject(e)) {
    out.push({ engine: `engines[${i}]`, field: "(entry)", message: "must be an object" });
    return null;
  }
  // As the seed reads it: `str(label or name)`, so an empty label falls back to the name and a number is its text.
  const text = (v: unknown) => (typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v) && v !== 0) ? String(v) : null;
  const label = text(e.label) ?? text(e.name) ?? "";
  const who = label ? `engine "${label}" (engines[${i}])` : `engines[${i}]`;
  const problem = (field: string, message: string) => out.push({ engine: who, field, message });
  const badType = (v: unknown) => v !== undefined && v !== null && typeof v !== "string" && typeof v !== "number";
  if (badType(e.label)) problem("label", "must be a string (or a number)");
  else if (e.name !== undefined && e.name !== null && typeof e.name !== "string") problem("name", "must be a string");
  else if (!label) problem("label", "missing: give a label (or a name)");
  else if (!LABEL_RE.test(label)) problem("label", "may only use letters, digits, '-', '_' and '.'");
  else if (label.length > 64) problem("label", `is ${label.length} characters; at most 64 (it names files and the child's --label)`);
  else if (taken.has(label)) problem("label", `also the label of engines[${taken.get(label)}]; labels must be unique`);
  else taken.set(label, i);
  const launch = e.launch;
  const launchOk = Array.isArray(launch) && launch.length > 0 && launch.every((a) => typeof a === "string") && launch[0] !== "";
  if (!launchOk) problem("launch", "must be a non-empty list of strings (argv, no shell)");
  const port = e.port;
  const portOk = typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535;
  if (!portOk) problem("port", `must be an integer from 1 to 65535, got ${JSON.stringify(port) ?? "nothing"}`);
  const env: Record<string, string> = {};
  if (e.env !== undefined && e.env !== null) {
    if (!isObject(e.env)) problem("env", "must be an object of NAME: \"value\"");
    else {
      for (const [k, v] of Object.entries(e.env)) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) problem(`env.${k}`, "is not a valid environment variable name");
        else if (typeof v !== "string") problem(`env.${k}`, "must be a string");
        else env[k] = v;
      }
    }
  }
  let version: string | null = null;
  if (typeof e.version === "number") version = String(e.version);
  else if (e.version !== undefined && e.version !== null) version = optionalText(e, "version", problem);
  // An empty host or ready_check is the default, as the seed's `or` reads it.
  const host = (e.host === "" ? null : optionalText(e, "host", problem)) ?? DEFAULT_HOST;
  const ready = e.ready_check === "" ? null : optionalText(e, "ready_check", problem);
  const metrics = optionalText(e, "metrics_path", problem);
  const role = optionalText(e, "role", problem);
  const cwd = optionalText(e, "cwd", problem);
  let expect: Record<string, unknown> = {};
  if (e.expect !== undefined && e.expect !== null) {
    if (isObject(e.expect)) expect = { ...e.expect };
    else problem("expect", "must be an object of setting: value");
  }
  const unknown = Object.keys(e).filter((k) => !ENGINE_FIELDS.includes(k));
  if (unknown.length) warnings.push(`${who}: unknown field(s) ${unknown.join(", ")} ignored`);
  if (!label || !launchOk || !portOk) return null;
  const kind = resolveEngineKind(e.name, launch as string[]);
  if (kind.conflict) warnings.push(`${who}: name "${e.name}" says ${kind.kind} but the launch argv runs ${kind.conflict}; using ${kind.kind} (the name)`);
  return {
    label,
    name: typeof e.name === "string" ? e.name : null,
    kind: kind.kind,
    kind_source: kind.source,
    version,
    launch: [...launch as string[]],
    env,
    port: port as number,
    host,
    ready_check: urlPath(ready ?? DEFAULT_READY_CHECK),
    metrics_path: metrics === null ? null : urlPath(metrics),
    role,
    cwd,
    expect,
  };
}

function optionalObject(parent: Json, key: string, where: string, out: ManifestProblem[]): Record<string, unknown> | null {
  const v = parent[key];
  if (v === undefined || v === null) return null;
  if (!isObject(v)) {
    out.push({ engine: null, field: where, message: "must be a JSON object" });
    return null;
  }
  return v;
}

/**
 * Every problem of a parsed manifest value, and the checked manifest when there are none.
 * @param value the parsed JSON
 * @param manifestPath the manifest's path (its folder is the default run dir)
 */
export function checkManifest(value: unknown, manifestPath: string): { manifest: RoundsManifest | null; problems: ManifestProblem[] } {
  const problems: ManifestProblem[] = [];
  const warnings: string[] = [];
  if (!isObject(value)) {
    return { manifest: null, problems: [{ engine: null, field: "(manifest)", message: "must be a JSON object with an 'engines' list" }] };
  }
  const engines: EngineSpec[] = [];
  if (!Array.isArray(value.engines) || value.engines.length === 0) {
    problems.push({ engine: null, field: "engines", message: "must be a non-empty list of engine objects" });
  } else {
    const taken = new Map<string, number>();
    value.engines.forEach((e, i) => {
      const spec = checkEngine(e, i, taken, problems, warnings);
      if (spec) engines.push(spec);
    });
  }
  let modelId: string | null = null;
  const model = optionalObject(value, "model", "model", problems);
  if (model && model.id !== undefined && model.id !== null) {
    if (typeof model.id === "string" && model.id.trim()) modelId = model.id;
    else problems.push({ engine: null, field: "model.id", message: "must be a non-empty string" });
  }
  const workload = optionalObject(value, "workload", "workload", problems);
  const extraBody = workload ? optionalObject(workload, "extra_body", "workload.extra_body", problems) : null;
  const ctk = workload ? optionalObject(workload, "chat_template_kwargs", "workload.chat_template_kwargs", problems) : null;
  if (problems.length) return { manifest: null, problems };
  return {
    manifest: { engines, model_id: modelId, extra_body: extraBody, chat_template_kwargs: ctk, run_dir: dirname(manifestPath), warnings },
    problems,
  };
}

/** The data error (exit 65) listing every problem, on one line, separated by `; `. */
export function manifestError(manifestPath: string, problems: readonly ManifestProblem[]): IkError {
  const n = problems.length;
  return dataError(manifestPath, `${n} manifest problem${n === 1 ? "" : "s"}: ${problems.map(formatProblem).join("; ")}`, "fix the manifest and rerun");
}

/**
 * Parses and checks manifest text; throws a data error (exit 65) naming every problem at once.
 * @param text the file's contents
 * @param manifestPath the file's path, for messages and the default run dir
 */
export function parseManifest(text: string, manifestPath: string): RoundsManifest {
  let value: unknown;
  try {
    // A leading UTF-8 byte-order mark (some editors write one) is not part of the JSON.
    value = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    throw dataError(manifestPath, `the manifest is not valid JSON: ${(e as Error).message}`, "fix the manifest and rerun");
  }
  const { manifest, problems } = checkManifest(value, manifestPath);
  if (!manifest) throw manifestError(manifestPath, problems);
  return manifest;
}
