/**
 * `ik report RECORD|RUN_DIR`: a record, a bench rounds or bench points output dir, or a store
 * root, as Markdown on stdout, or with `--html FILE` as one self-contained HTML page (no network;
 * inline CSS, script and SVG): the summary, per-bucket tables with CIs, per level the
 * latency–throughput curve with the SLO line and N*, the TTFT CDF, the limitations.
 * @module
 */
import { resolve } from "node:path";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { scrubText, storeRoot, writeWhole } from "../evidence/mod.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { renderHtml } from "../report/html/mod.ts";
import { buildReport, docCharts, loadReportInput } from "../report/document/mod.ts";
import { renderMarkdown } from "../report/markdown/mod.ts";
import { JOURNAL_INCOMPLETE } from "../report/document/journal_doc.ts";
import { VERSION } from "../version.ts";
import type { CommandContext } from "./context.ts";
import type { ReportFlags } from "./report_flags.ts";

/** Why what was read is incomplete (a journal without its record, a rounds run without its summary), else null. */
function incompleteOf(input: Awaited<ReturnType<typeof loadReportInput>>): string | null {
  if (input.kind === "journal") return JOURNAL_INCOMPLETE;
  if (input.kind === "rounds") return input.incomplete ?? null;
  if (input.kind === "record") return input.bundle.record.complete === true ? null : "the record says complete: false (interrupted)";
  return null;
}

/** Runs `ik report`. */
export async function runReport(ctx: CommandContext, f: ReportFlags): Promise<number> {
  const rt = ctx.runtime;
  if (f.html !== undefined && f.out !== undefined) throw usageError("--out", "writes Markdown and --html writes HTML: not both", "give one of them");
  const input = await loadReportInput(f.target, storeRoot((n) => rt.env(n), rt.cwd()), rt.cwd());
  const doc = buildReport(input);
  const charts = docCharts(doc).length;
  const markdown = renderMarkdown(doc);
  let written: string | null = null;
  if (f.html !== undefined || f.out !== undefined) {
    written = resolve(rt.cwd(), (f.html ?? f.out) as string);
    const body = f.html !== undefined ? renderHtml(doc, `ik ${VERSION} report, generated ${new Date().toISOString()}`) : markdown;
    // Whole or not at all (a full disk leaves the earlier report as it was: exit 74).
    await writeWhole(written, scrubText(body), 0o644);
  }
  if (ctx.json) {
    ctx.out(JSON.stringify({ kind: "report", input: { kind: input.kind, path: input.path, incomplete: incompleteOf(input) }, format: f.html !== undefined ? "html" : "markdown", file: written, charts, markdown: f.html !== undefined ? undefined : markdown }) + "\n");
  } else if (written === null) {
    ctx.out(markdown);
  } else {
    ctx.out(`wrote ${escapeTerminalLine(written)} (${f.html !== undefined ? `HTML, ${charts} chart(s)` : "Markdown"}) from the ${input.kind} ${escapeTerminalLine(input.path)}\n`);
  }
  return ExitCode.OK;
}
