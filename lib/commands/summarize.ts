/**
 * `ik summarize vllm`: tables, FLAGS and a DECISION for a unit of `vllm bench serve` result files
 * (seed 003). Exit 0; 1 when `--decide` is given and the unit is not PUBLISHABLE; 64 for a bad
 * flag; 65 for a malformed runs.tsv (naming file:line) or a named input that is missing.
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { dataError, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { checkWritable, scrubbedJson, writeWhole } from "../evidence/mod.ts";
import { type ReadText, renderUnit, summarizeUnit, unitJson } from "../summarize/mod.ts";
import type { CommandContext } from "./context.ts";
import type { SummarizeFlags } from "./summarize_flags.ts";

/** Reads a file, or null when it does not exist. */
const readOrNull: ReadText = async (path) => {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    if (code === "EISDIR") throw dataError(path, "is a directory, not a file", "name the file");
    throw dataError(path, `cannot read (${code ?? (e as Error).message})`, "check its permissions");
  }
};

function parseExempt(v: string | undefined): number[] {
  if (v === undefined) return [];
  return v.split(",").map((s) => s.trim()).filter(Boolean).map((s) => {
    const n = Number(s);
    if (!/^\d+(\.\d+)?$/.test(s) || !(n > 0)) throw usageError("--spread-exempt", `'${s}' is not a positive level`, "give levels comma-separated, e.g. --spread-exempt 1,2");
    return n;
  });
}

/** Runs `ik summarize vllm`. */
export async function runSummarize(ctx: CommandContext, f: SummarizeFlags): Promise<number> {
  const cwd = ctx.runtime.cwd();
  // An optional file given empty (`--boots "$BOOTS"` with the variable unset) is not given, as the seed reads it.
  const at = (p: string | undefined) => (p === undefined || p === "" ? null : resolve(cwd, p));
  const passes = f.decide === undefined ? null : f.decide.split(/[\s,]+/).filter(Boolean);
  if (passes && !passes.length) throw usageError("--decide", "names no pass", `give the passes that must be complete, e.g. --decide "A B"`);
  const jsonOut = f.jsonOut ? resolve(cwd, f.jsonOut) : null;
  if (jsonOut) await checkWritable([dirname(jsonOut)]);
  const results = resolve(cwd, f.results);
  const st = await stat(results).catch(() => null);
  if (!st?.isDirectory()) throw dataError("--results", `${results}: ${st ? "not a directory" : "no such directory"}`, "give the directory holding the <tag>.json files");
  const s = await summarizeUnit({
    runs: resolve(cwd, f.runs), results, container: at(f.container), boots: at(f.boots), sbData: at(f.sbData), sbDir: at(f.sbDir),
    sbOut: f.sbOut, wantGpc: f.wantGpc, wantMem: f.wantMem, cacheMax: f.cacheMax, spreadMax: f.spreadMax,
    spreadExempt: parseExempt(f.spreadExempt), decide: passes,
  }, readOrNull);
  for (const w of s.warnings) ctx.err(`ik: summarize vllm: warning: ${escapeTerminalLine(w)}\n`);
  const json = unitJson(s);
  if (jsonOut) await writeWhole(jsonOut, scrubbedJson(json, 1) + "\n", 0o644);
  ctx.out(ctx.json ? JSON.stringify(json) + "\n" : renderUnit(s));
  return s.decision && s.decision.verdict !== "PUBLISHABLE" ? ExitCode.VERDICT_NEGATIVE : ExitCode.OK;
}
