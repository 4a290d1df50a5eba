/**
 * `parse_resolved_config` of seed 001 (issue 10, "Resolved config"): what configuration an
 * engine really ran with, read from its own startup log.
 *
 * - RESOLVED: the engine's own lines were found (vLLM's non-default args and engine config,
 *   SGLang's `server_args=ServerArgs(...)`, llama.cpp's and TensorRT-LLM's startup lines).
 * - SELF_REPORTED: only a `ik_resolved_config {json}` / `inferencekit_resolved_config {json}` line
 *   (CONTRACTS.md), for an engine name that is not one of the four known engines. For vllm,
 *   sglang, llamacpp and trtllm that line is ignored (with a warning): only their own lines count.
 * - UNPROVEN: nothing found.
 *
 * An unknown engine name is never matched against the known formats: a line that imitates vLLM
 * is no better evidence than the self-report. Never throws; reads at most {@link MAX_LOG_CHARS}.
 * @module
 */
import {
  type EngineFindings,
  type Line,
  readLlamacpp,
  readSglang,
  readTrtllm,
  readVllm,
} from "./resolved_config_engines.ts";
import { type JsonValue, setOwn } from "./resolved_config_pyliteral.ts";

/** How well a configuration is proven. */
export type ResolvedStatus = "RESOLVED" | "SELF_REPORTED" | "UNPROVEN";

/** Engines whose own startup lines are read. */
export const KNOWN_ENGINES = ["vllm", "sglang", "llamacpp", "trtllm"] as const;

/** One of {@link KNOWN_ENGINES}. */
export type KnownEngine = typeof KNOWN_ENGINES[number];

/** Only the first this many characters of a log are read. */
export const MAX_LOG_CHARS = 16 * 1024 * 1024;

/** Longer lines are skipped (with a warning). */
export const MAX_LINE_CHARS = 256 * 1024;

/** The configuration read from one startup log. */
export interface ResolvedConfig {
  /** RESOLVED, SELF_REPORTED or UNPROVEN. */
  status: ResolvedStatus;
  /** Where the config came from, e.g. "vllm non-default args + vllm engine config"; "none" when UNPROVEN. */
  source: string;
  /** Settings under the engine's own names, as JSON values. */
  config: Record<string, unknown>;
  /** 1-based numbers of the log lines the config came from. */
  lines: number[];
  /** The known engine kind the name was read as, or null. */
  engine: KnownEngine | null;
  /** The engine version the log prints, or null. */
  version: string | null;
  /** The keys whose only source is the self-reported line (all of them when SELF_REPORTED). */
  self_reported: string[];
  /** Oddities: ignored self-reported lines, unreadable or skipped lines. */
  warnings: string[];
}

const READERS: Record<KnownEngine, (lines: Line[]) => EngineFindings> = {
  vllm: readVllm,
  sglang: readSglang,
  llamacpp: readLlamacpp,
  trtllm: readTrtllm,
};

/**
 * The known engine a manifest `name` means (case and punctuation ignored: "llama.cpp",
 * "TensorRT-LLM", "vLLM" …), or null for any other name.
 */
export function knownEngineKind(name: unknown): KnownEngine | null {
  if (typeof name !== "string") return null;
  const k = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (k === "vllm" || k === "sglang" || k === "llamacpp" || k === "trtllm") return k;
  if (k === "tensorrtllm" || k === "llamaserver") return k === "llamaserver" ? "llamacpp" : "trtllm";
  return null;
}

const SELF_REPORT = /\b(ik|inferencekit)_resolved_config\s+(\{.*\})\s*$/;

/** The self-reported config lines of a log, merged in order (later lines win). */
function selfReported(lines: Line[], warnings: string[]): { config: Record<string, JsonValue>; lines: number[] } {
  const config: Record<string, JsonValue> = {};
  const used: number[] = [];
  for (const { n, text } of lines) {
    if (!text.includes("_resolved_config")) continue;
    const m = text.match(SELF_REPORT);
    if (!m) continue;
    let v: unknown;
    try {
      v = JSON.parse(m[2]);
    } catch {
      warnings.push(`line ${n}: ${m[1]}_resolved_config is not valid JSON`);
      continue;
    }
    // The pattern only takes {...}, and JSON between braces is always an object.
    for (const [k, val] of Object.entries(v as Record<string, JsonValue>)) setOwn(config, k, val);
    used.push(n);
  }
  return { config, lines: used };
}

/** Splits a log into numbered lines, colour codes removed, over-long lines skipped. */
function splitLog(log: string, warnings: string[]): Line[] {
  let text = log;
  if (text.length > MAX_LOG_CHARS) {
    text = text.slice(0, MAX_LOG_CHARS);
    warnings.push(`log longer than ${MAX_LOG_CHARS} characters: only its start was read`);
  }
  const out: Line[] = [];
  text.split(/\r?\n|\r/).forEach((raw, i) => {
    if (raw.length > MAX_LINE_CHARS) return void warnings.push(`line ${i + 1}: longer than ${MAX_LINE_CHARS} characters, skipped`);
    // deno-lint-ignore no-control-regex
    out.push({ n: i + 1, text: raw.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "") });
  });
  return out;
}

/**
 * Reads the configuration `engineName` (the manifest's `name`) really ran with from its startup
 * log. Never throws: a non-string log, garbage or an empty log gives UNPROVEN.
 */
export function parseResolvedConfig(log: string, engineName: string): ResolvedConfig {
  const warnings: string[] = [];
  const engine = knownEngineKind(engineName);
  const lines = splitLog(typeof log === "string" ? log : "", warnings);
  const self = selfReported(lines, warnings);
  const unproven: ResolvedConfig = {
    status: "UNPROVEN",
    source: "none",
    config: {},
    lines: [],
    engine,
    version: null,
    self_reported: [],
    warnings,
  };
  if (engine === null) {
    if (self.lines.length === 0) return unproven;
    return {
      ...unproven,
      status: "SELF_REPORTED",
      source: "self-reported ik_resolved_config",
      config: self.config,
      lines: self.lines,
      self_reported: Object.keys(self.config),
    };
  }
  if (self.lines.length > 0) {
    warnings.push(
      `self-reported config line(s) ${self.lines.join(", ")} ignored: ${engine} is proven only by its own lines`,
    );
  }
  let found: EngineFindings;
  try {
    found = READERS[engine](lines);
  } catch (e) {
    warnings.push(`reading the ${engine} lines failed: ${e instanceof Error ? e.message : String(e)}`);
    return unproven;
  }
  warnings.push(...found.warnings);
  if (Object.keys(found.config).length === 0) return { ...unproven, version: found.version };
  return {
    ...unproven,
    status: "RESOLVED",
    source: found.sources.join(" + "),
    config: found.config,
    lines: found.lines,
    version: found.version,
  };
}
