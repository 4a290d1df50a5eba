/**
 * Whether two records may be compared (CONTRACTS.md: `compare` refuses an incomplete record
 * unless --allow-incomplete; seed 000: it refuses records whose request_set differs), and what
 * else differs between them that a reader should know (engine, model, GPU, prefix cache).
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { canonicalJson } from "../evidence/mod.ts";
import { requestSetDifference } from "./request_set_diff.ts";

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});

/** The workload mode of a record: `single`, `load`, or null. */
export function recordMode(record: Obj): string | null {
  const m = obj(obj(record.identity).workload).mode;
  return typeof m === "string" ? m : null;
}

/**
 * Throws the refusal for a pair that cannot be compared.
 * @param names how each side is called in messages (the ids as given)
 * @throws IkError 65: not a single-mode serve_benchmark record, incomplete without
 *   `allowIncomplete`, or request_set differs
 */
export function assertComparable(a: Obj, b: Obj, names: [string, string], allowIncomplete: boolean): void {
  for (const [side, rec, name] of [["A", a, names[0]], ["B", b, names[1]]] as const) {
    if (rec.kind !== "serve_benchmark" || recordMode(rec) !== "single") {
      const what = rec.kind === "capacity" ? "a capacity record (load mode)" : rec.kind === "serve_benchmark" ? `a ${recordMode(rec) ?? "?"}-mode serve_benchmark record` : `a '${String(rec.kind)}' record`;
      throw dataError(`compare ${side}`, `${name} is ${what}; compare pairs rounds of single-mode serve_benchmark records`, "for engines under load use ik bench rounds --mode load, or ik report on each record");
    }
    if (rec.complete !== true && !allowIncomplete) {
      throw dataError(`compare ${side}`, `${name} is incomplete (its run was interrupted)`, "pass --allow-incomplete to compare it anyway");
    }
  }
  const diff = requestSetDifference(a, b);
  if (diff) throw dataError("compare", `${names[0]} and ${names[1]} did not ask the same requests: ${diff}`, "rerun one with the other's prompt set and flags");
}

/** What a reader sees about one side: label, engine, model, GPU, prefix cache. */
export function sideFacts(record: Obj): Record<string, unknown> {
  const id = obj(record.identity);
  const engine = obj(id.engine), model = obj(id.model), gpu = obj(id.gpu), wl = obj(id.workload);
  return {
    evidence_id: record.evidence_id ?? null,
    label: obj(record.data).label ?? null,
    engine: engine.name ?? null,
    engine_version: engine.version ?? null,
    model: model.id ?? null,
    gpu: gpu.name ?? null,
    gpu_count: gpu.count ?? null,
    prefix_cache: wl.prefix_cache ?? null,
    complete: record.complete === true,
    created_utc: record.created_utc ?? null,
  };
}

/**
 * Facts that differ between the sides and change what a ratio means (not the engine itself,
 * which is usually the point of comparing), as lines for the notes.
 */
export function differenceNotes(a: Obj, b: Obj): string[] {
  const fa = sideFacts(a), fb = sideFacts(b);
  const notes: string[] = [];
  for (const k of ["model", "gpu", "gpu_count", "prefix_cache"]) {
    if (canonicalJson(fa[k] ?? null) !== canonicalJson(fb[k] ?? null)) notes.push(`${k} differs: A ${String(fa[k])}, B ${String(fb[k])}`);
  }
  for (const [side, f] of [["A", fa], ["B", fb]] as const) {
    if (!f.complete) notes.push(`${side} is incomplete (interrupted); compared anyway (--allow-incomplete)`);
  }
  return notes;
}
