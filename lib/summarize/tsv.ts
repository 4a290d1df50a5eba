/**
 * Tab-separated tables with a header line (runs.tsv, boots.tsv, `.samples.tsv`): every row must
 * have as many fields as the header, so a shifted column is an error naming `file:line`, never a
 * silently misread number.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { clipList, clipText } from "./clip_text.ts";

/** One data row: its 1-based line in the file and its fields by column name. */
export interface TsvRow {
  line: number;
  fields: Record<string, string>;
}

/** A parsed table. */
export interface TsvTable {
  columns: string[];
  rows: TsvRow[];
}

/**
 * Parses TSV text (LF or CRLF; blank lines skipped).
 * @param text the file's contents
 * @param where the file's name, for messages (`where:line: ...`)
 * @throws IkError (exit 65) on a binary file, an empty file, a repeated or empty column name, or a
 *   row whose field count differs from the header's
 */
export function parseTsv(text: string, where: string): TsvTable {
  // A binary file (a NUL, a control byte, an undecodable byte) is no table: say so, never print it.
  // deno-lint-ignore no-control-regex -- the control bytes are what is looked for
  const odd = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.exec(text);
  if (odd) {
    const line = text.slice(0, odd.index).split("\n").length;
    throw dataError(`${where}:${line}`, `is not a text table (byte 0x${odd[0].charCodeAt(0).toString(16).padStart(2, "0")} at character ${odd.index + 1})`, "give the tab-separated text file");
  }
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first < 0) throw dataError(where, "the file is empty (no header line)", "write a tab-separated header line and one row per entry");
  const columns = lines[first].split("\t").map((c) => c.trim());
  const seen = new Set<string>();
  for (const c of columns) {
    if (!c) throw dataError(`${where}:${first + 1}`, "the header has an empty column name", "separate column names with single tabs");
    if (seen.has(c)) throw dataError(`${where}:${first + 1}`, `the header repeats column '${clipText(c)}'`, "name each column once");
    seen.add(c);
  }
  const rows: TsvRow[] = [];
  for (let i = first + 1; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    const parts = lines[i].split("\t");
    if (parts.length !== columns.length) {
      throw dataError(`${where}:${i + 1}`, `${parts.length} tab-separated field(s), the header has ${columns.length} (${clipList(columns)})`, "give every column a value ('-' when none)");
    }
    const fields: Record<string, string> = {};
    columns.forEach((c, k) => (fields[c] = parts[k].trim()));
    rows.push({ line: i + 1, fields });
  }
  return { columns, rows };
}
