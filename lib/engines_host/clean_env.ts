/**
 * The environment an engine child starts with: a few basics from ik's own environment (PATH,
 * HOME, USER, LOGNAME, LANG, LC_ALL, TZ, TMPDIR, only those present), then the manifest's `env`,
 * then each `--pass-env NAME` from ik's environment. Nothing else leaks through (no stray
 * CUDA_VISIBLE_DEVICES, proxy or API-key variables from the shell that ran ik), so a cell's
 * engine sees what the record says. The record keeps the names, never the values.
 * @module
 */
import { dataError, usageError } from "../cli/errors.ts";
import { type EnvSource, readEnv } from "./gpu_lock.ts";

/** The variables copied from ik's environment into every engine's, when set. */
export const BASE_ENV_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR"] as const;

/** Inputs of {@link cleanEnv}. */
export interface CleanEnvOptions {
  /** ik's own environment (Runtime.env or envAll()). */
  parent: EnvSource;
  /** The manifest entry's `env` (strings; numbers and booleans are written as text). */
  manifestEnv?: Record<string, unknown> | null;
  /** The `--pass-env NAME` names, copied from ik's environment (a missing one is noted). */
  passEnv?: readonly string[];
  /** Where the manifest env came from, for error messages (e.g. `engines[1].env`). */
  where?: string;
}

/** The child environment and what the record keeps about it. */
export interface CleanEnv {
  /** The complete environment for the child. */
  env: Record<string, string>;
  /** Its variable names, sorted (values are never recorded). */
  keys: string[];
  /** `--pass-env` names that ik's environment does not have. */
  missing: string[];
  /** Human notes: missing pass-env names, pass-env overriding a manifest value. */
  notes: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Builds an engine's clean environment. Later sources win: basics, then manifest env, then
 * `--pass-env` (the command line is the most specific; an override of a manifest value is noted).
 * A `--pass-env` name that is not a valid variable name is a usage error (64); a manifest env value
 * that is an object, array or null is a data error (65) naming the key.
 *
 * @example
 * const { env, keys } = cleanEnv({ parent: rt.env, manifestEnv: { CUDA_VISIBLE_DEVICES: "0" }, passEnv: ["HF_HOME"] });
 */
export function cleanEnv(opts: CleanEnvOptions): CleanEnv {
  const env: Record<string, string> = {};
  const notes: string[] = [];
  const missing: string[] = [];
  for (const k of BASE_ENV_KEYS) {
    const v = readEnv(opts.parent, k);
    if (v !== undefined) env[k] = v;
  }
  const where = opts.where ?? "env";
  const fromManifest = new Set<string>();
  for (const [k, v] of Object.entries(opts.manifestEnv ?? {})) {
    if (!NAME.test(k)) throw dataError(`${where}.${k}`, `"${k}" is not an environment variable name`);
    if (typeof v === "string") env[k] = v;
    else if (typeof v === "number" || typeof v === "boolean") env[k] = String(v);
    else throw dataError(`${where}.${k}`, `the value must be a string, not ${v === null ? "null" : typeof v}`);
    fromManifest.add(k);
  }
  for (const k of opts.passEnv ?? []) {
    if (!NAME.test(k)) throw usageError("--pass-env", `"${k}" is not an environment variable name`);
    const v = readEnv(opts.parent, k);
    if (v === undefined) {
      if (!missing.includes(k)) {
        missing.push(k);
        notes.push(`--pass-env ${k}: not set in ik's environment, not passed`);
      }
      continue;
    }
    if (fromManifest.has(k) && env[k] !== v) notes.push(`--pass-env ${k} overrides the manifest's ${k}`);
    env[k] = v;
  }
  return { env, keys: Object.keys(env).sort(), missing, notes };
}
