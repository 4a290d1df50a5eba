/**
 * runs.tsv, the unit's list of cells (seed 003): `tag, [pass], dataset, conc, serial_lo,
 * serial_hi, [warmups], [catfile], [rc], [container]`. Every value is checked here, so a bad
 * file stops with `runs.tsv:LINE: what; what to do` (exit 65) instead of a wrong table.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { clipList, clipText } from "./clip_text.ts";
import { parseTsv } from "./tsv.ts";

/** One cell of the unit. */
export interface RunRow {
  /** Line in runs.tsv (1-based). */
  line: number;
  /** Names the result file `<tag>.json` (and `<tag>.samples.tsv`). */
  tag: string;
  /** The pass (boot) this cell belongs to; "-" without a pass column. */
  pass: string;
  dataset: string;
  /**
   * The grid value: client concurrency (an `ik export` of rate levels writes the rate, req/s; the
   * headline table then heads the column "Rate (req/s)", see CellRow.conc_is_rate).
   */
  conc: number;
  /** The container lines of this cell have serials in (serialLo, serialHi]. */
  serialLo: number;
  serialHi: number;
  /** Warm-up requests sent first in the cell (their container lines are dropped). */
  warmups: number;
  /** R725: the Spec-Bench split file of a c1 cell (under --sb-dir), or "-". */
  catfile: string;
  /** The client's exit status as written ("0", "1", "None", ""). */
  rc: string;
  /** The cell's container log as written ("" or "-" when none). */
  container: string;
}

/** Columns runs.tsv must have. */
export const RUNS_REQUIRED = ["tag", "dataset", "conc", "serial_lo", "serial_hi"] as const;

function integerField(v: string, name: string, where: string): number {
  if (!/^\d+$/.test(v)) throw dataError(where, `${name} '${clipText(v)}' is not a non-negative integer`, `write ${name} as a whole number, e.g. 0`);
  return Number(v);
}

/**
 * Parses runs.tsv.
 * @param text the file's contents
 * @param where its path, for messages
 */
export function parseRuns(text: string, where: string): RunRow[] {
  const t = parseTsv(text, where);
  const headerLine = text.split(/\r?\n/).findIndex((l) => l.trim() !== "") + 1;
  const missing = RUNS_REQUIRED.filter((c) => !t.columns.includes(c));
  if (missing.length) {
    throw dataError(`${where}:${headerLine}`, `runs.tsv lacks column(s) ${missing.join(", ")} (has ${clipList(t.columns)})`, `the header needs ${RUNS_REQUIRED.join(", ")}; pass, warmups, catfile, rc and container are optional`);
  }
  if (!t.rows.length) throw dataError(where, "no runs (only a header)", "add one row per cell");
  const seen = new Map<string, number>();
  return t.rows.map(({ line, fields: f }) => {
    const at = `${where}:${line}`;
    const tag = f.tag;
    if (!tag || /[/\\\s]/.test(tag) || tag.startsWith(".")) throw dataError(at, `tag '${clipText(tag)}' must be non-empty, without '/', '\\' or spaces, not starting with '.'`, "it names <tag>.json in --results");
    if (seen.has(tag)) throw dataError(at, `tag '${clipText(tag)}' repeats line ${seen.get(tag)}`, "give every cell its own tag");
    seen.set(tag, line);
    if (!f.dataset) throw dataError(at, "dataset is empty", "name the cell's dataset, e.g. specbench");
    const conc = Number(f.conc);
    if (!/^\d+(\.\d+)?$/.test(f.conc) || !(conc > 0)) throw dataError(at, `conc '${clipText(f.conc)}' is not a positive number`, "write the cell's concurrency, e.g. 4");
    const serialLo = integerField(f.serial_lo, "serial_lo", at), serialHi = integerField(f.serial_hi, "serial_hi", at);
    if (serialHi < serialLo) throw dataError(at, `serial_hi ${serialHi} < serial_lo ${serialLo}`, "the cell's container serials are (serial_lo, serial_hi]");
    const w = f.warmups ?? "";
    const warmups = w === "" || w === "-" ? 0 : integerField(w, "warmups", at);
    return {
      line, tag, pass: f.pass ? f.pass : "-", dataset: f.dataset, conc, serialLo, serialHi, warmups,
      catfile: f.catfile || "-", rc: f.rc ?? "", container: f.container ?? "",
    };
  });
}
