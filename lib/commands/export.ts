/**
 * `ik export RECORD --format vllm|csv|jsonl --out DIR`: an evidence record as files other tools
 * read. vllm: one `vllm bench serve` result file per load level plus a runs.tsv for
 * `ik summarize vllm`; csv: one row per level or bucket; jsonl: the per-request rows. Exit 0; 64
 * for `--format vllm` of a single-mode record or an `--out` that exists and is not a folder; 65
 * for a missing or altered record; 74 for a folder that cannot be written.
 * @module
 */
import { mkdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { guardWrite, scrubText, storeRoot, writeWhole } from "../evidence/mod.ts";
import { csvExportFiles, type ExportFile, jsonlExportFiles, loadExportSource, vllmExportFiles } from "../export/mod.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import type { CommandContext } from "./context.ts";
import type { ExportFlags } from "./export_flags.ts";

/** Runs `ik export`. */
export async function runExport(ctx: CommandContext, f: ExportFlags): Promise<number> {
  const cwd = ctx.runtime.cwd();
  const src = await loadExportSource(f.record, storeRoot((n) => ctx.runtime.env(n), cwd), cwd);
  const files: ExportFile[] = f.format === "vllm" ? vllmExportFiles(src) : f.format === "csv" ? csvExportFiles(src) : jsonlExportFiles(src);
  if (!f.out.trim()) throw usageError("--out", "is empty", "give the folder to write the files in");
  const dir = resolve(cwd, f.out);
  // --out is a folder: a file (or a device, a pipe) at the path is refused before anything is written.
  const there = await stat(dir).catch(() => null);
  if (there && !there.isDirectory()) {
    throw usageError(`--out ${dir}`, there.isFile() ? "is a file, not a folder" : "is not a folder (a device, a pipe or a socket)", "give a folder to write the files in (it is created if it does not exist)");
  }
  for (const n of src.notes) ctx.err(`ik: export: ${escapeTerminalLine(n)}\n`);
  // Each file whole or not at all: a full or read-only disk is exit 74 naming the file.
  await guardWrite(dir, () => mkdir(dir, { recursive: true }));
  for (const file of files) await writeWhole(join(dir, file.name), scrubText(file.text), 0o644);
  const paths = files.map((x) => join(dir, x.name));
  if (ctx.json) ctx.out(JSON.stringify({ evidence_id: src.evidenceId, format: f.format, files: paths }) + "\n");
  else ctx.out(`wrote ${files.length} file(s) to ${escapeTerminalLine(dir)}: ${files.map((x) => escapeTerminalLine(x.name)).join(", ")}\n`);
  return ExitCode.OK;
}
