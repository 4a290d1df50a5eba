/**
 * What an export reads from the evidence store: the measured record (a `capacity` record is
 * followed to the `serve_benchmark` record it cites in `data.measurement`), its request rows and,
 * for a load record, each level's rows joined to their outputs (per-event timings give the ITLs).
 * Every file comes through the integrity-checked record.
 * @module
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { dataError } from "../cli/errors.ts";
import { type LoadedRecord, loadRecordRef, parseJsonl, readRequestRows } from "../compare/record_ref.ts";
import type { Artifact } from "../evidence/mod.ts";
import { clipText } from "../summarize/clip_text.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** One load level, as exported. */
export interface ExportLevel {
  /** The grid value (N or req/s). */
  level: number;
  /** `r2`, `c8`. */
  name: string;
  /** The record's level entry (target rate, offered rate, summary, ...). */
  entry: Obj;
  /** The level's request rows, in send order. */
  rows: Obj[];
  /** Each row's output document (same index), or null when the outputs file lacks it. */
  outputs: (Obj | null)[];
}

/** The record an export works from. */
export interface ExportSource {
  dir: string;
  record: Obj;
  evidenceId: string;
  /** "load" or "single". */
  mode: string;
  /** Every request row of the record. */
  rows: Obj[];
  /** Load records: the levels in grid order; single records: []. */
  levels: ExportLevel[];
  /** Notes for stderr (a capacity record followed, an outputs file missing). */
  notes: string[];
}

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});

/** Reads the level outputs and joins them to rows by their send timestamp. */
async function levelsOf(loaded: LoadedRecord, rows: Obj[], notes: string[]): Promise<ExportLevel[]> {
  const data = obj(loaded.record.data);
  const entries = Array.isArray(data.levels) ? data.levels.map(obj) : [];
  const arts = (Array.isArray(loaded.record.artifacts) ? loaded.record.artifacts : []) as Artifact[];
  const out: ExportLevel[] = [];
  for (const entry of entries) {
    const name = String(entry.name ?? ""), level = Number(entry.level);
    if (!name || !Number.isFinite(level)) throw dataError(clipText(String(loaded.record.evidence_id)), "a load level without name or level", "the record is not a load record ik wrote");
    const levelRows = rows.filter((r) => r.level === name).sort((a, b) => Number(a.t_send_ns) - Number(b.t_send_ns));
    const art = arts.find((a) => a.role === "outputs" && a.path.endsWith(`/load-${name}.jsonl`));
    const bySend = new Map<number, Obj>();
    if (art) {
      for (const doc of parseJsonl(await readFile(resolve(loaded.dir, art.path), "utf8"))) {
        const t = Number(obj(doc.timings).t_send_ns);
        if (Number.isFinite(t)) bySend.set(t, doc);
      }
    } else notes.push(`level ${name}: no outputs file in the record, so no inter-token latencies (itls are empty)`);
    const outputs = levelRows.map((r) => bySend.get(Number(r.t_send_ns)) ?? null);
    const unmatched = outputs.filter((o) => o === null).length;
    if (art && unmatched) notes.push(`level ${name}: ${unmatched} request(s) without an output document (their itls are empty)`);
    out.push({ level, name, entry, rows: levelRows, outputs });
  }
  return out;
}

/**
 * Loads what `ik export` needs.
 * @param ref RECORD as typed: an evidence id, a record directory or an evidence.json
 * @param root the store root
 * @param cwd where relative paths start
 */
export async function loadExportSource(ref: string, root: string, cwd: string): Promise<ExportSource> {
  let loaded = await loadRecordRef(ref, root, cwd, `export ${ref}`);
  const notes: string[] = [];
  if (loaded.record.kind === "capacity") {
    const m = obj(loaded.record.data).measurement;
    if (typeof m !== "string") throw dataError(`export ${ref}`, "a capacity record without data.measurement", "export the measured serve_benchmark record");
    notes.push(`${loaded.record.evidence_id} is a derived capacity record: exporting its measurement ${m}`);
    loaded = await loadRecordRef(m, loaded.root, cwd, `export ${ref} (its measurement ${m})`);
  }
  if (loaded.record.kind !== "serve_benchmark") {
    throw dataError(`export ${ref}`, `a '${clipText(String(loaded.record.kind))}' record: only serve_benchmark (and capacity) records hold request rows to export`, "name a bench serve record");
  }
  const rows = await readRequestRows(loaded);
  if (rows === null) throw dataError(`export ${ref}`, "the record lists no requests artifact", "name a bench serve record");
  const mode = String(obj(obj(obj(loaded.record.identity).workload)).mode ?? "single");
  const levels = mode === "load" ? await levelsOf(loaded, rows, notes) : [];
  return { dir: loaded.dir, record: loaded.record, evidenceId: String(loaded.record.evidence_id), mode, rows, levels, notes };
}
