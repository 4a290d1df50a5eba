/**
 * The child `ik bench serve` command of one rounds cell (seed 001's `serve_argv`): the default
 * command over the running ik, or a `--serve-cmd` / `$IK_BENCH_SERVE_CMD` template; plus the
 * one resolved `--extra-body` and `--chat-template-kwargs` every cell sends, and the load schedule
 * every engine shares. Pure: strings in, argv out.
 * @module
 */
import { dataError, IkError, usageError } from "../cli/errors.ts";
import { checkExtraBody } from "../engines/extra_body.ts";
import { dropFlag, flagValue, hasFlag, shellSplit } from "../cli/argv_words.ts";
import { canonicalJson } from "../evidence/mod.ts";
import { labelValueProblem } from "../live_metrics/label_guard.ts";
import { sortedJson } from "./format.ts";

/** The environment variable that overrides the child command (CONTRACTS.md). */
export const SERVE_CMD_ENV = "IK_BENCH_SERVE_CMD";

/** `--serve-args` flags that already fix the load schedule for every engine. */
export const SCHEDULE_FLAGS: readonly string[] = ["--rates", "--ref-e2e-ms", "--closed-loop"];

/** Flags the default child command sets itself; `--serve-args` may not repeat them. */
export const RESERVED_SERVE_FLAGS: readonly string[] = ["--base-url", "--model", "--prompts", "--mode", "--engine-kind", "--label", "--run-dir", "--rounds", "--first-round", "--extend", "--json", "--engine-version"];

/** The placeholders a template may use. */
export const PLACEHOLDERS: readonly string[] = ["base_url", "model", "prompts", "mode", "engine_kind", "label", "round", "run_dir", "ik"];

/** The `--serve-args` flag that fixes the load schedule for every engine, or null. */
export function scheduleFixedBy(serveArgs: readonly string[]): string | null {
  for (const w of serveArgs) {
    const name = w.split("=", 1)[0];
    if (SCHEDULE_FLAGS.includes(name)) return name;
  }
  return null;
}

/** What one cell's command is built from. */
export interface ServeContext {
  base_url: string;
  model: string;
  /** Path of the prompt set, or `builtin:default`. */
  prompts: string;
  mode: "single" | "load";
  engine_kind: string;
  label: string;
  round: number;
  run_dir: string;
  engine_version: string | null;
  /** Single mode: the engine's previous record, chained with --extend. */
  extend: string | null;
  /** Load mode: the shared reference latency, passed as --ref-e2e-ms. */
  ref_e2e_ms: number | null;
  extra_body: Record<string, unknown> | null;
  chat_template_kwargs: Record<string, unknown> | null;
}

/**
 * The argv of one cell's `bench serve`.
 *
 * Default: `<ik> bench serve --base-url … --model … --prompts … --mode … --engine-kind … --label …
 * --run-dir …`, plus in single mode `--rounds 1` and `--extend <previous record>` from the
 * engine's second round on, plus `--engine-version` when the manifest gives one, then `serveArgs`.
 * A template with `{placeholders}` is used as written ({ik} as a word of its own is the running
 * ik's argv); one without placeholders replaces only the program part. In load mode a shared
 * reference latency is appended as `--ref-e2e-ms` in both cases. The resolved extra body and
 * template kwargs are appended once, and copies inside `serveArgs` are dropped.
 * @param ik the running ik's argv prefix (compiled binary, or runtime + script)
 * @throws IkError (64) for an unknown placeholder
 */
export function serveArgv(template: string | null, ik: readonly string[], ctx: ServeContext, serveArgs: readonly string[]): string[] {
  const words = template ? shellSplit(template, "--serve-cmd") : [...ik, "bench", "serve"];
  let argv: string[];
  if (template && words.some((w) => /\{[A-Za-z_]+\}/.test(w))) {
    argv = [];
    for (const w of words) {
      if (w === "{ik}") {
        argv.push(...ik);
        continue;
      }
      argv.push(w.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => {
        if (!PLACEHOLDERS.includes(name) || name === "ik") {
          throw usageError("--serve-cmd", `template: unknown placeholder {${name}}`, `use ${PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`);
        }
        return String((ctx as unknown as Record<string, unknown>)[name] ?? "");
      }));
    }
  } else {
    argv = [...words, "--base-url", ctx.base_url, "--model", ctx.model, "--prompts", ctx.prompts, "--mode", ctx.mode,
      "--engine-kind", ctx.engine_kind, "--label", ctx.label, "--run-dir", ctx.run_dir];
    if (ctx.mode === "single") {
      // Round k of the run is round k-1 of every engine's record, failed cells or not, so records pair by the round they ran in.
      argv.push("--rounds", "1", "--first-round", String(ctx.round - 1));
      if (ctx.extend) argv.push("--extend", ctx.extend);
    }
    if (ctx.engine_version) argv.push("--engine-version", ctx.engine_version);
  }
  if (ctx.mode === "load" && ctx.ref_e2e_ms !== null) argv.push("--ref-e2e-ms", String(ctx.ref_e2e_ms));
  let extra = [...serveArgs];
  if (ctx.extra_body && Object.keys(ctx.extra_body).length) {
    extra = dropFlag(extra, "--extra-body");
    argv.push("--extra-body", canonicalJson(ctx.extra_body));
  }
  if (ctx.chat_template_kwargs && Object.keys(ctx.chat_template_kwargs).length) {
    extra = dropFlag(extra, "--chat-template-kwargs");
    argv.push("--chat-template-kwargs", canonicalJson(ctx.chat_template_kwargs));
  }
  return [...argv, ...extra];
}

function jsonObject(text: unknown, what: string, flag: string): Record<string, unknown> {
  let v: unknown = text;
  if (typeof text === "string") {
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw usageError(flag, `${what} is not valid JSON: ${(e as Error).message}`, "give a JSON object, e.g. '{\"temperature\":0}'");
    }
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw usageError(flag, `${what} must be a JSON object`);
  return v as Record<string, unknown>;
}

/** One resolved JSON object setting and where it came from. */
export interface Resolved {
  /** The value every cell sends; null when none. */
  value: Record<string, unknown> | null;
  /** `--extra-body`, `manifest workload.extra_body`, `--extra-body in --serve-args` or `none`. */
  source: string;
}

/**
 * The one value of a JSON-object setting (`--extra-body` or `--chat-template-kwargs`) for every
 * cell: the rounds flag, else the manifest's `workload.<key>`, else a copy inside `--serve-args`.
 * A copy in `--serve-args` that contradicts the flag or the manifest is refused (64).
 */
export function resolveJsonSetting(o: {
  flag: string;
  flagValue: string | undefined;
  manifestValue: Record<string, unknown> | null;
  manifestKey: string;
  serveArgs: readonly string[];
}): Resolved {
  let value: Record<string, unknown> | null = null;
  let source = "none";
  if (o.flagValue !== undefined && o.flagValue !== "") {
    value = jsonObject(o.flagValue, o.flag, o.flag);
    source = o.flag;
  } else if (o.manifestValue && Object.keys(o.manifestValue).length) {
    value = o.manifestValue;
    source = `manifest workload.${o.manifestKey}`;
  }
  const inner = flagValue(o.serveArgs, o.flag);
  if (inner === null) return { value, source };
  const given = jsonObject(inner, `${o.flag} in --serve-args`, "--serve-args");
  if (value && sortedJson(given) !== sortedJson(value)) {
    throw usageError("--serve-args", `sets ${o.flag} ${sortedJson(given)} but ${source} says ${sortedJson(value)}`, "give one value");
  }
  return value ? { value, source } : { value: given, source: `${o.flag} in --serve-args` };
}

/**
 * Checks the resolved extra body as every child `bench serve` would (no prototype keys, `stream`
 * kept true), once, before any engine launches: a bad `--extra-body` (or one in `--serve-args`) is
 * a usage error (64), a bad manifest `workload.extra_body` a data error (65) naming the manifest.
 */
export function checkRoundsExtraBody(body: Resolved, manifestPath: string): void {
  if (!body.value) return;
  try {
    checkExtraBody(JSON.stringify(body.value));
  } catch (e) {
    if (!(e instanceof IkError)) throw e;
    if (body.source.startsWith("manifest")) throw dataError(manifestPath, `workload.extra_body: ${e.message}`, "fix the manifest and rerun");
    throw usageError(body.source === "--extra-body" ? "--extra-body" : "--serve-args", `${body.source === "--extra-body" ? "" : "--extra-body: "}${e.message}`, e.hint);
  }
}

/** Child flags that turn on live metrics, which send the child's `--label` with every series. */
const LIVE_FLAGS: readonly string[] = ["--metrics-listen", "--prometheus-remote-write"];

/**
 * Refuses (64), before any engine launches, an engine label that every cell's `bench serve` would
 * refuse only after that engine had started: with live metrics on in `--serve-args` (or the
 * `--serve-cmd` template) the child sends its `--label` with every series, and a label that looks
 * like a secret is never sent. The error names the engine by its place in the manifest, never the
 * label. A template whose placeholders leave out `{label}` passes no label: nothing to check.
 * @param engines each selected engine's label and where the manifest holds it (`engines[2]`)
 */
export function checkLiveLabels(template: string | null, serveArgs: readonly string[], engines: readonly { label: string; where: string }[]): void {
  const templateWords = template ? shellSplit(template, "--serve-cmd") : [];
  const live = LIVE_FLAGS.find((f) => hasFlag(serveArgs, f) || hasFlag(templateWords, f));
  if (!live) return;
  if (template && /\{[A-Za-z_]+\}/.test(template) && !template.includes("{label}")) return;
  for (const e of engines) {
    const why = labelValueProblem("label", e.label);
    if (why) {
      throw usageError(
        hasFlag(templateWords, live) ? "--serve-cmd" : "--serve-args",
        `turns on live metrics (${live}), which send each cell's --label with every series, and the label of ${e.where} in the manifest: ${why.replace(/^label label: /, "")}`,
        `give ${e.where} a label that is not secret-looking, or run without ${live}`,
      );
    }
  }
}
