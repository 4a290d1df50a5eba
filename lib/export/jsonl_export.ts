/**
 * `ik export --format jsonl`: the record's per-request rows, one JSON object a line, each with
 * the evidence id it came from (so files from several records can be concatenated).
 * @module
 */
import type { ExportSource } from "./record_source.ts";
import type { ExportFile } from "./vllm_export.ts";

/** `ik export --format jsonl`: the record's per-request rows, one JSON object a line, each with its evidence id. */
export function jsonlExportFiles(src: ExportSource): ExportFile[] {
  return [{ name: `${src.evidenceId}.requests.jsonl`, text: src.rows.map((r) => JSON.stringify({ evidence_id: src.evidenceId, ...r })).join("\n") + (src.rows.length ? "\n" : "") }];
}
