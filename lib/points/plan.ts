/**
 * The plan of `ik bench points` (seed 004): `{schema: 1, points: [{id, workload: {file, rate_rps,
 * requests}, client_argv, client_timeout_s, drain_timeout_s}]}`. Checked whole, every problem
 * naming its point and field (exit 65): ids unique and usable as folder names; a client that is
 * `ik load-trial run` must send the workload's rate and request count; no token-looking value
 * anywhere (`Bearer `, `sk-`, or a secret-looking query parameter, CONTRACTS.md "Redaction").
 * Placeholders {base} {model} {point_id} {point_dir} {ik} are substituted at run time, never
 * through a shell.
 * @module
 */
import { normalize } from "node:path";
import { flagValue } from "../cli/argv_words.ts";
import { dataError, usageError } from "../cli/errors.ts";
import { isSecretKey } from "../evidence/mod.ts";

/** The placeholders `client_argv` may use. */
export const POINT_PLACEHOLDERS: readonly string[] = ["base", "model", "point_id", "point_dir", "ik"];

/** One checked point. */
export interface PlanPoint {
  id: string;
  workload: { file: string; rate_rps: number; requests: number };
  client_argv: string[];
  client_timeout_s: number;
  drain_timeout_s: number;
}

/** A checked plan. */
export interface Plan {
  schema: 1;
  points: PlanPoint[];
  /** The plan's own free-text fields, kept so the manifest holds the plan its digest names. */
  description?: unknown;
  notes?: unknown;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Names the runner writes in the output folder beside the points' folders. */
const RESERVED_IDS = ["manifest.json"];

/** Why a string looks like a credential, or null. */
export function tokenLooking(s: string): string | null {
  if (/\bBearer\s+\S/i.test(s)) return "a Bearer token";
  if (/(^|[^A-Za-z0-9])sk-[A-Za-z0-9_-]{6,}/.test(s)) return "an sk- key";
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(s)) return "a password in the URL";
  const q = s.indexOf("?");
  if (q >= 0 && /^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    for (const part of s.slice(q + 1).split(/[&;#]/)) {
      const eq = part.indexOf("=");
      const name = decodeSafe(eq < 0 ? part : part.slice(0, eq));
      if (eq >= 0 && name && isSecretKey(name)) return `a secret-looking query parameter '${name}'`;
    }
  }
  return null;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Refuses a base URL carrying a credential (usage error 64). */
export function checkBaseUrl(url: string): void {
  const why = tokenLooking(url);
  if (why) throw usageError("--base", `the URL carries ${why}`, "keep credentials in an environment variable named by --api-key-env");
}

/** Every string inside a JSON value, with its path. */
function* strings(v: unknown, path: string): Generator<[string, string]> {
  if (typeof v === "string") yield [path, v];
  else if (Array.isArray(v)) for (let i = 0; i < v.length; i++) yield* strings(v[i], `${path}[${i}]`);
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) yield* strings(x, path ? `${path}.${k}` : k);
}

/** Whether `client_argv` runs `ik load-trial run` (the running ik via {ik}, or any program named ik). */
export function isIkLoadTrial(argv: readonly string[]): boolean {
  const i = argv.indexOf("load-trial");
  if (i < 0 || argv[i + 1] !== "run") return false;
  const prog = argv.slice(0, i);
  return prog.length > 0 && (prog.includes("{ik}") || prog.some((w) => /(^|\/)ik(\.exe)?$/.test(w) || /cli\.ts$/.test(w)));
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Parses and checks a plan; throws one data error (65) listing every problem.
 * @param text the plan file's contents
 * @param path the plan's path, for messages
 */
export function parsePlan(text: string, path: string): Plan {
  let v: unknown;
  try {
    // A leading UTF-8 byte-order mark (some editors write one) is not part of the JSON.
    v = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    throw dataError(path, `the plan is not valid JSON: ${(e as Error).message}`, "fix the plan and rerun");
  }
  const problems: string[] = [];
  if (!isObj(v)) throw dataError(path, "the plan must be a JSON object {schema: 1, points: [...]}", "fix the plan and rerun");
  for (const [where, s] of strings(v, "")) {
    const why = tokenLooking(s);
    if (why) problems.push(`${where} holds ${why}: keep credentials out of the plan (use --api-key-env)`);
  }
  if (v.schema !== 1) problems.push(`schema must be 1, not ${JSON.stringify(v.schema)}`);
  const unknownTop = Object.keys(v).filter((k) => !["schema", "points", "description", "notes"].includes(k));
  if (unknownTop.length) problems.push(`unknown field${unknownTop.length > 1 ? "s" : ""} ${unknownTop.join(", ")}`);
  if (!Array.isArray(v.points) || v.points.length === 0) problems.push("points must be a non-empty list");
  const points: PlanPoint[] = [];
  const seen = new Set<string>();
  (Array.isArray(v.points) ? v.points : []).forEach((p: unknown, i: number) => {
    if (!isObj(p)) return void problems.push(`points[${i}] is not an object`);
    const name = typeof p.id === "string" && p.id ? `point '${p.id}'` : `points[${i}]`;
    const bad = (field: string, what: string) => problems.push(`${name}: ${field} ${what}`);
    if (typeof p.id !== "string" || !ID.test(p.id)) bad("id", "must be 1-64 letters, digits, '.', '_' or '-' (it names a folder)");
    else if (RESERVED_IDS.includes(p.id)) bad("id", `'${p.id}' names a file of the output folder; choose another id`);
    else if (seen.has(p.id)) bad("id", "appears twice");
    else seen.add(p.id);
    const w = p.workload;
    if (!isObj(w)) bad("workload", "must be an object {file, rate_rps, requests}");
    else {
      if (typeof w.file !== "string" || !w.file) bad("workload.file", "must be a path");
      if (typeof w.rate_rps !== "number" || !(w.rate_rps > 0) || !Number.isFinite(w.rate_rps)) bad("workload.rate_rps", "must be a number > 0");
      if (!Number.isInteger(w.requests) || (w.requests as number) < 1) bad("workload.requests", "must be a positive integer");
      const extraW = Object.keys(w).filter((k) => !["file", "rate_rps", "requests"].includes(k));
      if (extraW.length) bad(extraW.map((k) => `workload.${k}`).join(", "), "is not a workload field (file, rate_rps, requests)");
    }
    const argv = p.client_argv;
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) bad("client_argv", "must be a non-empty list of strings (run directly, never through a shell)");
    else {
      if (argv[0] === "") bad("client_argv[0]", "is empty: it names the program to run");
      argv.forEach((a: string, j: number) => {
        for (const m of a.matchAll(/\{([A-Za-z_]+)\}/g)) {
          if (!POINT_PLACEHOLDERS.includes(m[1])) bad(`client_argv[${j}]`, `has an unknown placeholder {${m[1]}} (use ${POINT_PLACEHOLDERS.map((x) => `{${x}}`).join(" ")})`);
          else if (m[1] === "ik" && a !== "{ik}") bad(`client_argv[${j}]`, "may use {ik} only as a whole word");
        }
      });
      if (isObj(w) && isIkLoadTrial(argv)) {
        const rate = flagValue(argv, "--rate"), reqs = flagValue(argv, "--requests");
        if (rate === null || Number(rate) !== w.rate_rps) bad("client_argv", `--rate ${rate ?? "(missing)"} does not match workload.rate_rps ${w.rate_rps}`);
        if (reqs === null || Number(reqs) !== w.requests) bad("client_argv", `--requests ${reqs ?? "(missing)"} does not match workload.requests ${w.requests}`);
        // The point's record names the workload it declares: the client must send that one.
        const wl = flagValue(argv, "--workload");
        if (typeof w.file === "string" && w.file && (wl === null || normalize(wl) !== normalize(w.file))) bad("client_argv", `--workload ${wl ?? "(missing)"} is not workload.file ${w.file}`);
        // The report reads the client's summary from {point_dir}/client: anywhere else it is lost.
        const out = flagValue(argv, "--out");
        if (out === null || out.replace(/\/+$/, "") !== "{point_dir}/client") bad("client_argv", `--out ${out ?? "(missing)"}: an ik load-trial run client writes to --out {point_dir}/client, where the point's result and report read its summary.json`);
      }
    }
    for (const f of ["client_timeout_s", "drain_timeout_s"] as const) {
      const x = p[f];
      if (typeof x !== "number" || !(x > 0) || x > 2_147_483) bad(f, "must be a number of seconds > 0 (at most 2147483)");
    }
    const extra = Object.keys(p).filter((k) => !["id", "workload", "client_argv", "client_timeout_s", "drain_timeout_s", "description"].includes(k));
    if (extra.length) bad(extra.join(", "), "is not a point field");
    points.push(p as unknown as PlanPoint);
  });
  if (problems.length) throw dataError(path, `${problems.length} plan problem${problems.length === 1 ? "" : "s"}: ${problems.slice(0, 30).join("; ")}`, "fix the plan and rerun");
  const plan: Plan = { schema: 1, points };
  if ("description" in v) plan.description = v.description;
  if ("notes" in v) plan.notes = v.notes;
  return plan;
}

/** `client_argv` with the placeholders filled; `{ik}` becomes the running ik's argv. */
export function substituteArgv(argv: readonly string[], values: { base: string; model: string; point_id: string; point_dir: string }, ik: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    if (a === "{ik}") out.push(...ik);
    else out.push(a.replace(/\{(base|model|point_id|point_dir)\}/g, (_, k: keyof typeof values) => values[k]));
  }
  return out;
}
