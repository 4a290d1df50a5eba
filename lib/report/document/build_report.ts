/**
 * From what `ik report` read to the report's content: one record (single mode, a load run, or
 * another kind), a rounds run, a points run, or a whole store root (an index, then a section per
 * record, a load run's capacity record and measurement as one). Pure.
 * @module
 */
import { type Block, obj, type ReportDoc, text } from "./doc.ts";
import type { RecordBundle, ReportInput } from "./inputs.ts";
import { journalBlocks } from "./journal_doc.ts";
import { loadRunBlocks } from "./load_doc.ts";
import { pointsBlocks } from "./points_doc.ts";
import { genericRecordBlocks, singleRecordBlocks } from "./record_doc.ts";
import { roundsBlocks } from "./rounds_doc.ts";

/** Records a store-root report gives a full section (the newest); the rest are only indexed. */
export const STORE_SECTIONS_MAX = 30;

/** The blocks of one record bundle, by its kind and mode. */
export function bundleBlocks(b: RecordBundle): Block[] {
  const mode = obj(obj(b.record.identity).workload).mode;
  if (b.record.kind === "capacity" || (b.record.kind === "serve_benchmark" && mode === "load")) return loadRunBlocks(b);
  if (b.record.kind === "serve_benchmark") return singleRecordBlocks(b.record, b.rows, b.notes);
  return genericRecordBlocks(b.record, b.notes);
}

function storeBlocks(input: Extract<ReportInput, { kind: "store" }>): Block[] {
  const blocks: Block[] = [
    { kind: "para", text: `${input.bundles.length} record(s) in ${input.path}${input.skipped.length ? `; ${input.skipped.length} skipped (below)` : ""}. A load run's capacity record and the measurement it cites are one entry.` },
    {
      kind: "table", head: ["record", "kind", "mode", "complete", "summary"],
      rows: input.bundles.map((b) => [text(b.record.evidence_id ?? b.id), text(b.record.kind), text(obj(obj(b.record.identity).workload).mode), b.record.complete === true ? "yes" : "NO", text(b.record.summary)]),
    },
  ];
  if (input.skipped.length) {
    blocks.push({ kind: "heading", level: 3, text: "Skipped records" }, { kind: "list", items: input.skipped.map((s) => `${s.id}: ${s.reason}`) });
  }
  const shown = input.bundles.slice(-STORE_SECTIONS_MAX);
  if (shown.length < input.bundles.length) {
    blocks.push({ kind: "para", tone: "note", text: `Sections below cover the newest ${shown.length} of ${input.bundles.length} records; report an older one by its id.` });
  }
  for (const b of [...shown].reverse()) blocks.push(...bundleBlocks(b));
  return blocks;
}

/** The report of `input`. */
export function buildReport(input: ReportInput): ReportDoc {
  switch (input.kind) {
    case "record":
      return { title: `ik report: ${text(input.bundle.record.evidence_id ?? input.bundle.id)}`, blocks: bundleBlocks(input.bundle) };
    case "rounds":
      return { title: `ik report: bench rounds ${input.path}${input.incomplete ? " (INCOMPLETE)" : ""}`, blocks: roundsBlocks(input) };
    case "points":
      return { title: `ik report: bench points ${input.path}`, blocks: pointsBlocks(input) };
    case "journal":
      return { title: `ik report: INCOMPLETE journal ${input.id}`, blocks: journalBlocks(input) };
    case "store":
      return { title: `ik report: store ${input.path}`, blocks: storeBlocks(input) };
  }
}
