/**
 * An in-memory unit for the summarize tests: runs.tsv, result files and container logs as strings
 * under a fake root, read through summarizeUnit's injected reader (no disk).
 */
import { join } from "node:path";
import { summarizeUnit, type UnitOptions, type UnitSummary } from "../../lib/summarize/mod.ts";
import { unitOptions } from "./_unit.ts";

/** The fake root the in-memory files live under. */
export const MEM_ROOT = "/ik-mem-unit";

/**
 * Summarises files given as `{ "runs.tsv": ..., "results/t.json": ..., "c.log": ... }`.
 * @param files paths relative to {@link MEM_ROOT}
 * @param over options over the defaults (runs: runs.tsv, results: results/)
 */
export function summarizeMem(files: Record<string, string>, over: Partial<UnitOptions> = {}): Promise<UnitSummary> {
  const byPath = new Map(Object.entries(files).map(([k, v]) => [join(MEM_ROOT, k), v]));
  return summarizeUnit(unitOptions(MEM_ROOT, over), (p) => Promise.resolve(byPath.get(p) ?? null));
}

/** A TSV text from a header and rows. */
export function tsv(rows: (string | number)[][]): string {
  return rows.map((r) => r.join("\t")).join("\n") + "\n";
}
