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
  const diff = requestSetDifference(a, b) ?? promptSetDifference(a, b);
  if (diff) throw dataError("compare", `${names[0]} and ${names[1]} did not ask the same requests: ${diff}`, "rerun one with the other's prompt set and flags");
}

/**
 * The request_set hash covers prompt ids, buckets and settings, not the prompts' text: two sets
 * with the same ids (every `ik prompts synth` set has `short-0`, …) and other prompts hash alike.
 * Their files' sha256 tells them apart (as `--extend` refuses another prompt set).
 */
function promptSetDifference(a: Obj, b: Obj): string | null {
  const set = (r: Obj) => obj(obj(obj(r.identity).workload).prompt_set);
  const pa = set(a), pb = set(b);
  if (typeof pa.sha256 !== "string" || typeof pb.sha256 !== "string" || pa.sha256 === pb.sha256) return null;
  const name = (p: Obj) => `${typeof p.name === "string" ? `${p.name} ` : ""}sha256 ${(p.sha256 as string).slice(0, 12)}`;
  return `the prompt sets differ (A ${name(pa)}, B ${name(pb)}): the same prompt ids, other prompts`;
}

/** What a reader sees about one side: label, engine, model, GPU, prefix cache, the ik that made it. */
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
    ik_version: obj(record.tool).version ?? null,
  };
}

/**
 * Facts that differ between the sides and change what a ratio means (not the engine itself,
 * which is usually the point of comparing), as lines for the notes: model, GPU, prefix cache, an
 * incomplete side, and records made by different ik versions (`tool.version`).
 */
export function differenceNotes(a: Obj, b: Obj): string[] {
  const fa = sideFacts(a), fb = sideFacts(b);
  const notes: string[] = [];
  for (const k of ["model", "gpu", "gpu_count", "prefix_cache"]) {
    if (canonicalJson(fa[k] ?? null) !== canonicalJson(fb[k] ?? null)) notes.push(`${k} differs: A ${String(fa[k])}, B ${String(fb[k])}`);
  }
  if (canonicalJson(fa.ik_version ?? null) !== canonicalJson(fb.ik_version ?? null)) {
    notes.push(`made by different ik versions: A ${String(fa.ik_version ?? "unknown")}, B ${String(fb.ik_version ?? "unknown")}; how a request was timed or its tokens counted may differ between them (see each version's notes)`);
  }
  for (const [side, f] of [["A", fa], ["B", fb]] as const) {
    if (!f.complete) notes.push(`${side} is incomplete (interrupted); compared anyway (--allow-incomplete)`);
  }
  return notes;
}

/**
 * A note when the paired rounds did not interleave: every paired round of one record ran before
 * every paired round of the other (seed 000 pairs rounds because A, B, A, B … share the host's and
 * the server's drift; one after the other, a drift reads as a difference). Null when interleaved
 * or when the rounds' times are not recorded.
 */
export function roundOrderNote(a: Obj, b: Obj, paired: readonly number[]): string | null {
  const times = (r: Obj): [number, number] | null => {
    const rounds = obj(r.data).rounds;
    if (!Array.isArray(rounds)) return null;
    let first = Infinity, last = -Infinity;
    for (const x of rounds) {
      const o = obj(x);
      if (typeof o.index !== "number" || !paired.includes(o.index)) continue;
      if (typeof o.t_start !== "number" || typeof o.t_end !== "number") return null;
      first = Math.min(first, o.t_start);
      last = Math.max(last, o.t_end);
    }
    return Number.isFinite(first) ? [first, last] : null;
  };
  const ta = times(a), tb = times(b);
  if (!ta || !tb) return null;
  const before = ta[1] <= tb[0] ? "A" : tb[1] <= ta[0] ? "B" : null;
  if (!before) return null;
  return `the paired rounds were not interleaved: all of ${before}'s ran before the other's, so a drift of the host or the server over time reads as a difference (interleave with --rounds 1 --extend, or ik bench rounds)`;
}
