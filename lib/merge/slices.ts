/**
 * Finding a sharded run's slices for `ik merge`: each DIR is a slice's record directory, a shard's
 * staging directory (a shard killed mid-run leaves `.staging/<id>/shard.json` and a journal), or a
 * directory holding them (a shared $IK_RUNS_DIR: its record directories and its `.staging/`).
 * Every record is read through its integrity check (65 on a changed artifact).
 * @module
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { dataError } from "../cli/errors.ts";
import { readCheckedRecord } from "../compare/record_ref.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** A finished (or interrupted, but written) slice. */
export interface Slice {
  dir: string;
  record: Obj;
  data: Obj;
  k: number;
  s: number;
  group: string;
}

/** What a shard that never wrote its record left behind. */
export interface StagingLeft {
  dir: string;
  k: number;
  s: number;
  group: string;
  evidenceId: string;
}

/** Every slice and staging leftover under the given paths. */
export interface Found {
  slices: Slice[];
  staging: StagingLeft[];
}

/** `v` when it is a JSON object, else {}. */
export const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});

/** `v` when it is a finite number, else null. */
export const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

async function readSlice(dir: string, scanning: boolean): Promise<Slice | null> {
  let peek: Obj;
  try {
    peek = obj(JSON.parse(await readFile(join(dir, "evidence.json"), "utf8")));
  } catch {
    // A torn evidence.json in a staging folder is a shard that died finishing; a finished shard's
    // (its shard note beside it) is damage, said as such; another record of the store is skipped.
    const finishedShard = basename(dirname(dir)) !== ".staging" && await exists(join(dir, "shard.json"));
    if (scanning && !finishedShard) return null;
    throw dataError(join(dir, "evidence.json"), "not valid JSON", "the record is damaged; restore it, or rerun that shard");
  }
  if (peek.kind !== "serve_benchmark" || obj(peek.data).slice !== true) {
    if (scanning) return null;
    throw dataError(dir, `not a slice record (kind ${String(peek.kind)}, no data.slice)`, "give the directories ik bench serve --shard wrote");
  }
  const record = await readCheckedRecord(dir, dir);
  const data = obj(record.data);
  if (record.kind !== "serve_benchmark" || data.slice !== true) return null;
  const shard = obj(data.shard), group = obj(data.group);
  const k = Number(shard.k), s = Number(shard.s);
  if (!Number.isInteger(k) || !Number.isInteger(s) || typeof group.id !== "string") throw dataError(dir, "a slice record without data.shard {k, s} or data.group.id", "it was not written by ik bench serve --shard");
  return { dir, record, data, k, s, group: group.id };
}

async function readStaging(dir: string): Promise<StagingLeft | null> {
  let doc: Obj;
  try {
    doc = obj(JSON.parse(await readFile(join(dir, "shard.json"), "utf8")));
  } catch {
    return null;
  }
  const k = Number(doc.k), s = Number(doc.s);
  if (!Number.isInteger(k) || !Number.isInteger(s) || typeof doc.group_id !== "string") throw dataError(join(dir, "shard.json"), "not a shard's staging note (k, s, group_id)", "remove that directory, or leave it out of the merge");
  return { dir, k, s, group: doc.group_id, evidenceId: String(doc.evidence_id ?? "") };
}

async function children(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => join(dir, e.name)).sort();
  } catch {
    return [];
  }
}

/**
 * Reads every slice under `paths`. A path that is neither a slice, a staging directory nor a
 * directory holding any is a data error (65) naming it.
 */
export async function findSlices(paths: readonly string[]): Promise<Found> {
  const found: Found = { slices: [], staging: [] };
  const seen = new Set<string>();
  const take = async (dir: string, scanning: boolean): Promise<boolean> => {
    if (seen.has(dir)) return true;
    if (await exists(join(dir, "evidence.json"))) {
      const sl = await readSlice(dir, scanning);
      if (sl) (seen.add(dir), found.slices.push(sl));
      // A staging directory whose evidence.json was torn (a crash while finishing) is still a shard's leftover.
      if (sl || !(await exists(join(dir, "shard.json")))) return sl !== null;
    }
    if (await exists(join(dir, "shard.json"))) {
      const st = await readStaging(dir);
      if (st) (seen.add(dir), found.staging.push(st));
      return st !== null;
    }
    return false;
  };
  for (const p of paths) {
    if (!(await exists(p))) throw dataError(p, "no such directory", "give slice directories or the store that holds them");
    if ((await exists(join(p, "evidence.json")) || await exists(join(p, "shard.json"))) && await take(p, false)) continue;
    let any = false;
    for (const c of [...await children(p), ...await children(join(p, ".staging"))]) if (await take(c, true)) any = true;
    if (!any) throw dataError(p, "holds no slice record (data.slice) nor a shard's staging directory", "give the directories ik bench serve --shard wrote");
  }
  return found;
}
