/**
 * What `ik report` reads, found from what it is given: a record (id, directory or evidence.json),
 * a `bench rounds` output dir (plan.json + summary.json, or the run dir holding rounds/), a
 * `bench points` output dir (manifest.json + <point>/result.json), or a store root (folders of
 * records). Records are schema- and integrity-checked (one named on the command line is refused,
 * one only found is named in the notes); everything else is read tolerantly: what is missing is
 * noted, not fatal. What a run killed by SIGKILL (the OOM killer, kill -9) leaves is read as
 * INCOMPLETE, never refused: a `.staging/<id>/` journal without evidence.json (its request rows,
 * a torn last line dropped), and a rounds dir without summary.json (its cell files, summarised
 * here as `bench rounds` would have). This is the report's only I/O; the builders are pure.
 * @module
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { dataError } from "../../cli/errors.ts";
import { loadRecordRef, parseJsonl, readCheckedRecord, readRequestRows } from "../../compare/mod.ts";
import { parseEvidenceId } from "../../evidence/mod.ts";
import { obj } from "./doc.ts";
import { summarize } from "../../rounds/summary.ts";
import { resolvedSummary } from "../../rounds/cell_metrics.ts";
import { type JournalInput, loadJournal } from "./journal_input.ts";

export type { JournalInput } from "./journal_input.ts";

type Obj = Record<string, any>;

/** A record with its rows and, for load runs, its other half. */
export interface RecordBundle {
  id: string;
  record: Obj;
  rows: Obj[] | null;
  /** Load mode: the capacity record (derived) when `record` is the measurement, or vice versa. */
  capacity?: Obj | null;
  measured?: { record: Obj; rows: Obj[] | null } | null;
  /** Why a half could not be read. */
  notes: string[];
}

/** A rounds output dir. */
export interface RoundsInput {
  kind: "rounds";
  path: string;
  plan: Obj;
  summary: Obj;
  /** summary.json's per-engine resolved-config summary. */
  resolved: Obj;
  cells: Obj[];
  /** Per engine label: the bench serve record(s) found for it. */
  records: Map<string, RecordBundle>;
  notes: string[];
  /** Why the run is incomplete (no summary.json: killed mid-run), else absent. */
  incomplete?: string;
}

/** One point of a points output dir. */
export interface PointInput {
  id: string;
  /** The point as the plan in manifest.json has it (workload, client_argv), or null. */
  planned: Obj | null;
  result: Obj | null;
  clientSummary: Obj | null;
  rows: Obj[] | null;
}

/** A points output dir. */
export interface PointsInput {
  kind: "points";
  path: string;
  manifest: Obj;
  points: PointInput[];
  notes: string[];
}

/** Everything a report can be made of. */
export type ReportInput =
  | { kind: "record"; path: string; bundle: RecordBundle }
  | RoundsInput
  | PointsInput
  | JournalInput
  | { kind: "store"; path: string; bundles: RecordBundle[]; skipped: { id: string; reason: string }[] };

async function kindOf(p: string): Promise<"dir" | "file" | null> {
  try {
    const s = await stat(p);
    return s.isDirectory() ? "dir" : s.isFile() ? "file" : null;
  } catch {
    return null;
  }
}

async function readJson(p: string): Promise<Obj | null> {
  try {
    const v = JSON.parse(await readFile(p, "utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

async function readRows(p: string): Promise<Obj[] | null> {
  try {
    return parseJsonl(await readFile(p, "utf8"));
  } catch {
    return null;
  }
}

/** Loads the other half of a load run from the store the record sits in. */
async function completeBundle(root: string, dir: string, record: Obj): Promise<RecordBundle> {
  const id = String(record.evidence_id ?? basename(dir));
  const bundle: RecordBundle = { id, record, rows: await readRequestRows({ dir, record }).catch(() => null), notes: [] };
  if (record.kind === "capacity") {
    const mid = obj(record.data).measurement;
    if (typeof mid === "string" && parseEvidenceId(mid)) {
      try {
        const m = await readCheckedRecord(join(root, mid), `report ${mid}`);
        bundle.measured = { record: m, rows: await readRequestRows({ dir: join(root, mid), record: m }).catch(() => null) };
      } catch (e) {
        bundle.notes.push(`the measured record ${mid} could not be read: ${(e as Error).message}`);
      }
    } else bundle.notes.push("the capacity record names no measured record (data.measurement)");
  } else if (record.kind === "serve_benchmark" && obj(obj(record.identity).workload).mode === "load") {
    bundle.capacity = await findCapacityFor(root, id, bundle.notes);
  }
  return bundle;
}

/**
 * The capacity record in `root` that cites measurement `id`, read as every record is (schema and
 * integrity checked), or null; one that fails the check is named in `notes` and not used.
 */
async function findCapacityFor(root: string, id: string, notes: string[]): Promise<Obj | null> {
  let names: string[] = [];
  try {
    names = (await readdir(root)).filter((n) => n.startsWith("capacity-") && parseEvidenceId(n)).sort();
  } catch {
    return null;
  }
  for (const n of names.reverse()) {
    const r = await readJson(join(root, n, "evidence.json"));
    if (!r || obj(r.data).measurement !== id) continue;
    try {
      return await readCheckedRecord(join(root, n), `report ${n}`);
    } catch (e) {
      notes.push(`the capacity record ${n} could not be read: ${(e as Error).message}`);
      return null;
    }
  }
  return null;
}

/**
 * The run's cells: those summary.json lists (each from its cell file, else its brief there); with
 * no summary, the cell files in `dir` that this run started (a file older than plan.json's
 * `started` is an earlier run's, left in the same folder, and is not counted).
 */
async function roundsCells(dir: string, plan: Obj, summaryFile: Obj | null, notes: string[]): Promise<Obj[]> {
  const cells: Obj[] = [];
  const listed = Array.isArray(summaryFile?.cells) ? (summaryFile.cells as unknown[]).filter((c): c is Obj => c !== null && typeof c === "object") : null;
  if (listed) {
    for (const brief of listed) {
      // The name is rebuilt from the brief's label and round, never a path taken from the file.
      const n = `${String(brief.label)}.r${Number(brief.round)}.json`;
      const c = /^[^/\\]+\.r\d+\.json$/.test(n) && !n.startsWith(".") ? await readJson(join(dir, n)) : null;
      if (c) cells.push(c);
      else {
        notes.push(`${n} is missing or not JSON: summary.json's line for that cell is used`);
        cells.push(brief);
      }
    }
    return cells;
  }
  const started = Date.parse(String(plan.started ?? "")) / 1000;
  let stale = 0;
  for (const n of (await readdir(dir)).sort()) {
    if (!/^.+\.r\d+\.json$/.test(n)) continue;
    const c = await readJson(join(dir, n));
    if (!c) notes.push(`${n} is not valid JSON; left out`);
    else if (Number.isFinite(started) && typeof c.t_start === "number" && c.t_start < started - 1) stale++;
    else cells.push(c);
  }
  if (stale) notes.push(`${stale} cell file(s) older than this run's start (plan.json 'started') were left out: an earlier run's, in the same folder`);
  return cells;
}

async function loadRounds(dir: string, storeRootPath: string): Promise<RoundsInput> {
  const plan = await readJson(join(dir, "plan.json"));
  let summaryFile = await readJson(join(dir, "summary.json"));
  if (!plan) throw dataError(`report ${dir}`, "plan.json is missing or not JSON", "point at a bench rounds output dir");
  const notes: string[] = [];
  let incomplete: string | undefined;
  if (!summaryFile) {
    const had = await kindOf(join(dir, "summary.json")) === "file";
    incomplete = had
      ? "summary.json is not valid JSON (cut short?): the summary below was computed by ik report from the cell files"
      : "the run never wrote summary.json: it was killed (SIGKILL, out of memory, a crash) or is still running; the summary below was computed by ik report from the cell files of the cells that finished, and the cell that was running is not among them";
    summaryFile = {};
  }
  const cells = await roundsCells(dir, plan, incomplete ? null : summaryFile, notes);
  cells.sort((a, b) => (Number(a.round) - Number(b.round)) || String(a.label).localeCompare(String(b.label)));
  if (incomplete) {
    const labels = (Array.isArray(plan.engines) ? plan.engines : []).map((e: unknown) => String(obj(e).label)).filter((l: string) => l && l !== "undefined");
    try {
      summaryFile = {
        summary: summarize(cells as never, labels, { mode: plan.mode === "load" ? "load" : "single" }),
        resolved_config: resolvedSummary(cells as never, labels),
      };
    } catch (e) {
      notes.push(`the cell files could not be summarised: ${(e as Error).message}`);
    }
  }
  // The child bench serve wrote into the parent's store; try it, then stores beside the run.
  const roots = [...new Set([storeRootPath, join(dirname(dir), "runs"), join(dir, "runs")])];
  const byLabel = new Map<string, string>();
  const finals = obj(plan.serve_evidence_final);
  for (const [label, id] of Object.entries(finals)) if (typeof id === "string") byLabel.set(label, id);
  for (const c of cells) {
    const id = obj(c.serve).evidence_id;
    if (c.status === "ok" && typeof id === "string" && !finals[String(c.label)]) byLabel.set(String(c.label), id);
  }
  const records = new Map<string, RecordBundle>();
  const lost: string[] = [];
  for (const [label, id] of byLabel) {
    let found = false;
    for (const root of roots) {
      if (await kindOf(join(root, id, "evidence.json")) !== "file") continue;
      try {
        records.set(label, await completeBundle(root, join(root, id), await readCheckedRecord(join(root, id), `report ${id}`)));
      } catch (e) {
        notes.push(`${label}: ${(e as Error).message}`);
      }
      found = true;
      break;
    }
    if (!found) lost.push(`${label} (${id})`);
  }
  if (lost.length) notes.push(`bench serve records not found in ${roots.join(", ")}: ${lost.join(", ")}; set IK_RUNS_DIR to the store the run wrote to for the TTFT CDF and curves`);
  return { kind: "rounds", path: dir, plan, summary: obj(summaryFile.summary), resolved: obj(summaryFile.resolved_config), cells, records, notes, ...(incomplete ? { incomplete } : {}) };
}

async function loadPoints(dir: string, manifest: Obj): Promise<PointsInput> {
  const notes: string[] = [];
  const plan: Obj[] = Array.isArray(obj(manifest.plan).points) ? (manifest.plan.points as unknown[]).map(obj) : [];
  const ids: string[] = plan.map((p) => String(p.id));
  for (const n of (await readdir(dir)).sort()) {
    if (!ids.includes(n) && await kindOf(join(dir, n, "result.json")) === "file") ids.push(n);
  }
  const points: PointInput[] = [];
  for (const id of ids) {
    // Point ids are checked folder names (lib/points/plan.ts); a manifest edited by hand is not trusted.
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(id)) {
      notes.push(`point id ${JSON.stringify(id).slice(0, 80)} is not a folder name; left out`);
      continue;
    }
    const pdir = join(dir, id);
    points.push({
      id,
      planned: plan.find((p) => String(p.id) === id) ?? null,
      result: await readJson(join(pdir, "result.json")),
      clientSummary: await readJson(join(pdir, "client", "summary.json")),
      rows: await readRows(join(pdir, "client", "requests.jsonl")),
    });
  }
  return { kind: "points", path: dir, manifest, points, notes };
}

async function loadStore(dir: string): Promise<ReportInput> {
  const ids = (await readdir(dir)).filter((n) => parseEvidenceId(n)).sort((a, b) => {
    const ua = parseEvidenceId(a)!.utc, ub = parseEvidenceId(b)!.utc;
    return ua < ub ? -1 : ua > ub ? 1 : a < b ? -1 : 1;
  });
  const skipped: { id: string; reason: string }[] = [];
  const records = new Map<string, Obj>();
  for (const id of ids) {
    if (await kindOf(join(dir, id, "evidence.json")) !== "file") continue;
    try {
      records.set(id, await readCheckedRecord(join(dir, id), `report ${id}`));
    } catch (e) {
      skipped.push({ id, reason: (e as Error).message });
    }
  }
  // Runs that never wrote their record (killed, or still running) are named, not dropped silently.
  let staged: string[] = [];
  try {
    staged = (await readdir(join(dir, ".staging"))).filter((n) => parseEvidenceId(n)).sort();
  } catch { /* none */ }
  for (const id of staged) {
    const p = join(dir, ".staging", id);
    if (await kindOf(join(p, "requests.jsonl")) !== "file") continue;
    skipped.push({ id, reason: `INCOMPLETE: only a staging journal, no record (the run was killed, or is still running); 'ik report ${p}' reads its rows` });
  }
  // A load run is one section: the capacity record with the measurement it cites.
  const cited = new Set([...records.values()].filter((r) => r.kind === "capacity").map((r) => obj(r.data).measurement));
  const bundles: RecordBundle[] = [];
  for (const [id, record] of records) {
    if (cited.has(id) && record.kind === "serve_benchmark") continue;
    bundles.push(await completeBundle(dir, join(dir, id), record));
  }
  return { kind: "store", path: dir, bundles, skipped };
}

/**
 * Whether `dir` is a bench rounds output dir: plan.json with summary.json, or (a run killed before
 * its summary) a plan.json that is a rounds plan (engines and a design).
 */
async function roundsDir(dir: string): Promise<boolean> {
  if (await kindOf(join(dir, "plan.json")) !== "file") return false;
  if (await kindOf(join(dir, "summary.json")) === "file") return true;
  const plan = await readJson(join(dir, "plan.json"));
  return plan !== null && Array.isArray(plan.engines) && "design" in plan;
}

/**
 * Finds and reads what `ref` names.
 * @param storeRootPath `$IK_RUNS_DIR`, else ./runs (for evidence ids and rounds' records)
 * @throws IkError 65 when `ref` is none of the known kinds, or a record fails its integrity check
 */
export async function loadReportInput(ref: string, storeRootPath: string, cwd: string): Promise<ReportInput> {
  const p = resolve(cwd, ref);
  const k = await kindOf(p);
  if (k === "dir") {
    if (await kindOf(join(p, "evidence.json")) === "file") return recordInput(ref, storeRootPath, cwd);
    // A staged run without its record: what a SIGKILL (OOM, kill -9) leaves; read as incomplete.
    if (parseEvidenceId(basename(p)) && await kindOf(join(p, "requests.jsonl")) === "file") return loadJournal(p);
    if (await roundsDir(p)) return loadRounds(p, storeRootPath);
    if (await roundsDir(join(p, "rounds"))) return loadRounds(join(p, "rounds"), storeRootPath);
    const manifest = await readJson(join(p, "manifest.json"));
    if (manifest && (manifest.kind === "bench_points" || ("plan" in manifest && "plan_sha256" in manifest))) return loadPoints(p, manifest);
    const names = await readdir(p);
    if (names.some((n) => parseEvidenceId(n)) || (names.includes(".staging") && await kindOf(join(p, ".staging")) === "dir")) return loadStore(p);
    throw dataError(`report ${ref}`, "not a record, a bench rounds or bench points output dir, nor a store root", "give an evidence id, a record dir, a rounds/points output dir or $IK_RUNS_DIR");
  }
  if (k === "file" && basename(p) === "evidence.json") return recordInput(ref, storeRootPath, cwd);
  if (k === null && !parseEvidenceId(ref)) throw dataError(`report ${ref}`, "no such file, directory or evidence id", "check the path");
  // An id whose run was killed before its record: only its staging journal is in the store.
  if (k === null && await kindOf(join(storeRootPath, ref, "evidence.json")) === null && await kindOf(join(storeRootPath, ".staging", ref, "requests.jsonl")) === "file") {
    return loadJournal(join(storeRootPath, ".staging", ref));
  }
  if (k === "file") throw dataError(`report ${ref}`, "a file that is not an evidence.json", "give the record's directory, its evidence.json, or a run dir");
  return recordInput(ref, storeRootPath, cwd);
}

async function recordInput(ref: string, storeRootPath: string, cwd: string): Promise<ReportInput> {
  const loaded = await loadRecordRef(ref, storeRootPath, cwd, `report ${ref}`);
  return { kind: "record", path: loaded.dir, bundle: await completeBundle(loaded.root, loaded.dir, loaded.record) };
}
