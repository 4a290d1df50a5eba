/**
 * Spec-Bench categories for the MTP tables at c1, where the container's serial order is the send
 * order: a manifest prompt hash maps to its category through question.jsonl (--sb-data), or, in
 * R725 units, the c1 split file lists the categories in send order (--sb-dir + catfile). MT-bench's
 * eight categories pool into one task group.
 * @module
 */
import { createHash } from "node:crypto";
import { dataError } from "../cli/errors.ts";
import type { ContainerRec } from "./container_log.ts";

/** MT-bench's categories (pooled as `mt_bench` in the task-group table). */
export const MT_BENCH: ReadonlySet<string> = new Set(["writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities"]);

/** The first 16 hex of sha256(text): the manifest's prompt hash. */
export function promptSha16(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

function jsonLines(text: string, where: string, each: (v: Record<string, unknown>, at: string) => void): void {
  text.split(/\r?\n/).forEach((l, i) => {
    if (!l.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      throw dataError(`${where}:${i + 1}`, "not valid JSON", "one JSON object per line");
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) throw dataError(`${where}:${i + 1}`, "not a JSON object", "one JSON object per line");
    each(v as Record<string, unknown>, `${where}:${i + 1}`);
  });
}

const category = (v: Record<string, unknown>, at: string): string => {
  if (typeof v.category !== "string" || !v.category) throw dataError(at, "no 'category' string", "each Spec-Bench question names its category");
  return v.category;
};

/** Maps prompt hash -> categories from Spec-Bench's question.jsonl (`turns[0]` is the prompt). */
export function parseQuestions(text: string, where: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  jsonLines(text, where, (v, at) => {
    const turns = v.turns;
    if (!Array.isArray(turns) || typeof turns[0] !== "string") throw dataError(at, "no 'turns' list starting with a string", "each question has turns: [prompt, ...]");
    const sha = promptSha16(turns[0]);
    if (!out.has(sha)) out.set(sha, new Set());
    out.get(sha)!.add(category(v, at));
  });
  return out;
}

/** The categories of an R725 split file, in file (send) order. */
export function parseSplitCategories(text: string, where: string): string[] {
  const out: string[] = [];
  jsonLines(text, where, (v, at) => out.push(category(v, at)));
  return out;
}

/** Sums of one category or task group. */
export interface CategoryStats {
  n: number;
  acc: number;
  prop: number;
  gen: number;
  /** gen / (gen - acc), null when gen <= acc. */
  tau: number | null;
  /** acc / prop, null when prop is 0. */
  acc_prop: number | null;
}

function finish(m: Map<string, CategoryStats>): Record<string, CategoryStats> {
  const out: Record<string, CategoryStats> = {};
  for (const [k, b] of m) out[k] = { ...b, tau: b.gen > b.acc ? b.gen / (b.gen - b.acc) : null, acc_prop: b.prop ? b.acc / b.prop : null };
  return out;
}

/**
 * Per-category and per-task-group MTP sums: the k-th measured container line belongs to the k-th
 * category (extra lines or categories are ignored; the caller says whether the mapping held).
 */
export function categoryTables(cats: readonly string[], meas: readonly ContainerRec[]): { by: Record<string, CategoryStats>; groups: Record<string, CategoryStats> } {
  const by = new Map<string, CategoryStats>(), groups = new Map<string, CategoryStats>();
  const add = (m: Map<string, CategoryStats>, k: string, r: ContainerRec) => {
    const b = m.get(k) ?? { n: 0, acc: 0, prop: 0, gen: 0, tau: null, acc_prop: null };
    b.n++;
    b.acc += r.acc;
    b.prop += r.prop;
    b.gen += r.gen;
    m.set(k, b);
  };
  for (let i = 0; i < Math.min(cats.length, meas.length); i++) {
    add(by, cats[i], meas[i]);
    add(groups, MT_BENCH.has(cats[i]) ? "mt_bench" : cats[i], meas[i]);
  }
  return { by: finish(by), groups: finish(groups) };
}
