/**
 * `ik export RECORD --format vllm|csv|jsonl --out DIR`: an evidence record as files other tools
 * read. vllm: one `vllm bench serve` result file per load level plus a runs.tsv for
 * `ik summarize vllm`; csv: one row per level or bucket; jsonl: the per-request rows. Exit 0; 64
 * for `--format vllm` of a single-mode record; 65 for a missing or altered record.
 * @module
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { choice, string } from "@optique/core/valueparser";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { scrubText, storeRoot } from "../evidence/mod.ts";
import { csvExportFiles, type ExportFile, jsonlExportFiles, loadExportSource, vllmExportFiles } from "../export/mod.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import type { CommandContext } from "./context.ts";

/** Parser for `ik export`. */
export const exportCommand = command("export", object({
  cmd: constant("export" as const),
  record: argument(string({ metavar: "RECORD" }), { description: message`An evidence id (in $IK_RUNS_DIR, else ./runs), a record directory, or its evidence.json. A capacity record exports its measurement.` }),
  format: option("--format", choice(["vllm", "csv", "jsonl"] as const), { description: message`vllm: one vllm bench serve result file per load level (+ runs.tsv for ik summarize vllm); csv: one row per level or bucket; jsonl: the per-request rows.` }),
  out: option("--out", string({ metavar: "DIR" }), { description: message`Directory to write into (created if needed; files of the same name are replaced).` }),
  json: option("--json", { description: message`Print {"files": [...]} as one JSON object on stdout.` }),
}), {
  brief: message`Write a record as vllm bench serve result files, CSV or JSONL, for existing dashboards and spreadsheets.`,
  description: message`--format vllm needs a load-mode record (ik bench serve --mode load): each level becomes <label>-<level>.json with vLLM's keys and units, the per-request arrays in seconds, and percentiles recomputed vLLM's way (linear interpolation; ik's records use nearest rank; the file's ik_percentiles key says so). max_concurrency is set only for closed-loop levels. A runs.tsv lets ik summarize vllm --runs DIR/runs.tsv --results DIR read the export back.`,
});

/** The parsed flags of `ik export`. */
export type ExportFlags = InferValue<typeof exportCommand>;

/** Runs `ik export`. */
export async function runExport(ctx: CommandContext, f: ExportFlags): Promise<number> {
  const cwd = ctx.runtime.cwd();
  const src = await loadExportSource(f.record, storeRoot((n) => ctx.runtime.env(n), cwd), cwd);
  const files: ExportFile[] = f.format === "vllm" ? vllmExportFiles(src) : f.format === "csv" ? csvExportFiles(src) : jsonlExportFiles(src);
  for (const n of src.notes) ctx.err(`ik: export: ${escapeTerminalLine(n)}\n`);
  const dir = resolve(cwd, f.out);
  try {
    await mkdir(dir, { recursive: true });
    for (const file of files) await writeFile(join(dir, file.name), scrubText(file.text));
  } catch (e) {
    throw usageError(`--out ${dir}`, `cannot write (${(e as { code?: string }).code ?? (e as Error).message})`, "give a writable directory");
  }
  const paths = files.map((x) => join(dir, x.name));
  if (ctx.json) ctx.out(JSON.stringify({ evidence_id: src.evidenceId, format: f.format, files: paths }) + "\n");
  else ctx.out(`wrote ${files.length} file(s) to ${escapeTerminalLine(dir)}: ${files.map((x) => escapeTerminalLine(x.name)).join(", ")}\n`);
  return ExitCode.OK;
}
