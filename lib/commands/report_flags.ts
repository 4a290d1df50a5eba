/**
 * The flags and parser of `ik report`, and their parsed type. Parser only: the report is
 * report.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { optional } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { pathValue } from "../cli/path_value.ts";

/** Builds the parser for `ik report` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const reportCommand = () => command("report", object({
  cmd: constant("report" as const),
  target: argument(pathValue("RECORD|RUN_DIR"), {
    description: message`An evidence id (in $IK_RUNS_DIR, else ./runs), a record directory or its evidence.json, a bench rounds output dir, a bench points output dir, or a store root.`,
  }),
  html: optional(option("--html", pathValue("FILE"), { description: message`Write one self-contained HTML page here (no network: inline CSS, script and SVG) instead of Markdown on stdout.` })),
  out: optional(option("--out", pathValue("FILE"), { description: message`Write the Markdown here instead of stdout.` })),
  json: option("--json", { description: message`Print one JSON object: what was read, where the report went, and the Markdown.` }),
}), {
  brief: message`Render a record, a rounds or points run, or a store as Markdown or one self-contained HTML file.`,
  description: message`A run killed by SIGKILL (out of memory, kill -9) is read as INCOMPLETE, not refused: its .staging journal (the request rows journaled) or a rounds dir without summary.json (summarised from its cell files). Content: the summary and identity; per-bucket tables with 95% CIs; for load runs, per level the latency–throughput curve (one point per level) with the SLO line and N* marked; the TTFT CDF; the limitations. A load run's capacity record and its measurement are reported together. Records are integrity-checked (a changed artifact is refused, exit 65); rounds and points dirs are read tolerantly: what is missing is said, not fatal.`,
});

/** The parsed flags of `ik report`. */
export type ReportFlags = InferValue<ReturnType<typeof reportCommand>>;
