/**
 * `ik summarize vllm`: tables, FLAGS and a DECISION for a unit of `vllm bench serve` result files
 * (seed 003). Exit 0; 1 when `--decide` is given and the unit is not PUBLISHABLE; 64 for a bad
 * flag; 65 for a malformed runs.tsv (naming file:line) or a named input that is missing.
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { float, integer, string } from "@optique/core/valueparser";
import { dataError, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { checkWritable, scrubbedJson, writeWhole } from "../evidence/mod.ts";
import { type ReadText, renderUnit, summarizeUnit, unitJson } from "../summarize/mod.ts";
import type { CommandContext } from "./context.ts";

const vllm = command("vllm", object({
  cmd: constant("summarize-vllm" as const),
  runs: option("--runs", string({ metavar: "FILE" }), { description: message`runs.tsv: tag, [pass], dataset, conc, serial_lo, serial_hi, [warmups], [catfile], [rc], [container] (tab-separated, with a header).` }),
  results: option("--results", string({ metavar: "DIR" }), { description: message`Directory of <tag>.json (vllm bench serve --save-result --save-detailed; JSONL from --append-result uses the last) and <tag>.samples.tsv manifests.` }),
  container: optional(option("--container", string({ metavar: "FILE" }), { description: message`Container log for every cell whose runs.tsv row names none (one boot for the whole unit).` })),
  boots: optional(option("--boots", string({ metavar: "FILE" }), { description: message`boots.tsv: one row per boot (tag, launcher_md5, image, env_sha, keys_n, policy, cache, gpc_boot, mem_boot, ...); any difference VOIDs a decision.` })),
  sbData: optional(option("--sb-data", string({ metavar: "FILE" }), { description: message`Spec-Bench question.jsonl: maps a manifest prompt hash to its category (c1 MTP tables).` })),
  sbDir: optional(option("--sb-dir", string({ metavar: "DIR" }), { description: message`Directory of the Spec-Bench split files named in runs.tsv catfile (R725 units).` })),
  sbOut: withDefault(option("--sb-out", integer({ min: 1, max: 10_000_000, metavar: "N" }), { description: message`The forced Spec-Bench output length: every specbench output must be N tokens.` }), 256),
  wantGpc: withDefault(option("--want-gpc", string({ metavar: "OFFSETS" }), { description: message`Expected core (GPC) clock offsets per card, space-separated.` }), "0 0"),
  wantMem: withDefault(option("--want-mem", string({ metavar: "OFFSETS" }), { description: message`Expected memory clock offsets per card, space-separated.` }), "4500 4500"),
  cacheMax: withDefault(option("--cache-max", float({ min: 0, max: 1, metavar: "FRAC" }), { description: message`Largest cached share of prompt tokens per cell (0.01 = 1 %).` }), 0.01),
  spreadMax: withDefault(option("--spread-max", float({ min: 0, metavar: "PCT" }), { description: message`Largest A/B spread of output tok/s, percent.` }), 3.0),
  spreadExempt: optional(option("--spread-exempt", string({ metavar: "C1,C2" }), { description: message`Concurrency levels reported but not gated by --spread-max (e.g. 1: boot-to-boot noise).` })),
  decide: optional(option("--decide", string({ metavar: "PASSES" }), { description: message`Passes that must all be complete, e.g. "A B": prints DECISION and exits 1 unless PUBLISHABLE.` })),
  jsonOut: optional(option("--json-out", string({ metavar: "FILE" }), { description: message`Also write the summary as JSON to FILE.` })),
  json: option("--json", { description: message`Print the summary as one JSON object on stdout instead of the tables.` }),
}), {
  brief: message`Summarise a unit of vllm bench serve result files: README tables, A/B spread, diagnostics, MTP per category, FLAGS, DECISION.`,
  description: message`Reads runs.tsv and, per cell, <tag>.json from --results (current, legacy and --append-result layouts), its container log (ik-request serial=… prompt=… cached=… gen=… acc=… prop=… lines, as ik mock --request-log prints) and <tag>.samples.tsv. Tables use vLLM's own percentiles from the files; tau = gen / (gen - accepted) from the container lines. A cell without its container log cannot be PUBLISHABLE. DECISION precedence: VOID (boots differ, clocks wrong) > NOT-PUBLISHABLE (a pass incomplete, integrity, cache or spread problems) > PUBLISHABLE.`,
});

/** Parser for `ik summarize …`. */
export const summarizeCommand = command("summarize", vllm, {
  brief: message`Summaries of result files other tools wrote: vllm (vllm bench serve units).`,
  description: message`ik summarize vllm reads a unit of vllm bench serve result files with its container logs and prints the tables, FLAGS and an optional DECISION.`,
});

/** The parsed flags of `ik summarize vllm`. */
export type SummarizeFlags = InferValue<typeof summarizeCommand>;

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
  const at = (p: string | undefined) => (p === undefined ? null : resolve(cwd, p));
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
