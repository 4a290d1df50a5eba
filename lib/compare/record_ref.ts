/**
 * Finding and reading one evidence record the way a person names it on the command line: an
 * evidence id (looked up in the store root), the record's directory, or its `evidence.json`.
 * Every way goes through the schema check (a record made by a newer ik, a later `schema`, is
 * refused) and the store's integrity check (a record whose artifacts changed is refused), and the
 * per-request rows come from the sha256-checked `requests` artifact.
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { dataError } from "../cli/errors.ts";
import { type Artifact, integrityProblem, loadRecord, parseEvidenceId } from "../evidence/mod.ts";
import { assertKnownSchema } from "./record_schema.ts";

/** A record read from the store, with where it lives. */
export interface LoadedRecord {
  /** The record's directory. */
  dir: string;
  /** The store root it sits in (the directory's parent). */
  root: string;
  /** The parsed evidence.json. */
  record: Record<string, unknown>;
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

/**
 * Loads a record named by `ref`: an existing path (a record directory or its evidence.json)
 * wins; otherwise `ref` must be an evidence id in `root`.
 * @param ref what the person typed
 * @param root the store root (`$IK_RUNS_DIR`, else ./runs)
 * @param cwd the directory relative paths start from
 * @param where the place named in an error (`compare A`)
 * @throws IkError 65 when it is missing, not JSON, or fails its integrity check
 */
export async function loadRecordRef(ref: string, root: string, cwd: string, where: string): Promise<LoadedRecord> {
  const p = resolve(cwd, ref);
  let dir: string | null = null;
  if (await isDir(p)) dir = p;
  else if (basename(p) === "evidence.json" && await isFile(p)) dir = dirname(p);
  if (dir === null) {
    if (!parseEvidenceId(ref)) {
      throw dataError(where, `'${ref}' is neither a record directory, an evidence.json, nor an evidence id`, "name a record by its id (in $IK_RUNS_DIR, else ./runs) or by its directory");
    }
    const byId = join(root, ref);
    if (await isFile(join(byId, "evidence.json"))) return { dir: byId, root, record: await readCheckedRecord(byId, where) };
    try {
      const got = await loadRecord(root, ref);
      return { dir: got.dir, root, record: got.record };
    } catch (e) {
      throw dataError(where, (e as Error).message, `check the id, or set IK_RUNS_DIR to the store it was written to (now ${root})`);
    }
  }
  return { dir, root: dirname(dir), record: await readCheckedRecord(dir, where) };
}

/**
 * Reads `<dir>/evidence.json`, checks that this ik knows its schema, and checks every listed
 * artifact's sha256.
 * @throws IkError 65 with the reason (a schema newer than this ik's: "made by a newer ik?")
 */
export async function readCheckedRecord(dir: string, where: string): Promise<Record<string, unknown>> {
  const file = join(dir, "evidence.json");
  let record: unknown;
  try {
    record = JSON.parse(await readFile(file, "utf8"));
  } catch (e) {
    throw dataError(where, `${file}: ${(e as { code?: string }).code === "ENOENT" ? "no evidence.json there" : "not valid JSON"}`);
  }
  if (!record || typeof record !== "object" || Array.isArray(record)) throw dataError(where, `${file}: not a JSON object`);
  assertKnownSchema(record as Record<string, unknown>, file, where);
  const problem = await integrityProblem(dir, record as { artifacts?: Artifact[] });
  if (problem) throw dataError(where, `${file}: ${problem}`, "the record was changed after it was written; rerun the benchmark");
  return record as Record<string, unknown>;
}

/**
 * The request rows of a record (its `requests` artifact), or null when it lists none. Lines that
 * are not JSON objects are skipped: the artifact's sha256 already vouches for the file.
 */
export async function readRequestRows(loaded: Pick<LoadedRecord, "dir" | "record">): Promise<Record<string, unknown>[] | null> {
  const arts = Array.isArray(loaded.record.artifacts) ? loaded.record.artifacts as Artifact[] : [];
  const art = arts.find((a) => a && a.role === "requests" && typeof a.path === "string");
  if (!art) return null;
  const text = await readFile(resolve(loaded.dir, art.path), "utf8");
  return parseJsonl(text);
}

/** The JSON objects of a JSONL text, one a line; blank and broken lines are skipped. */
export function parseJsonl(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch { /* a torn last line of an interrupted run */ }
  }
  return out;
}
