/**
 * Helpers for the summarize tests: the committed fixtures (tests/testdata/vllm, made by
 * scripts/gen_vllm_fixtures.py with numpy), a scratch copy to break, and summarizeUnit on disk.
 */
import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../_helpers/ik.ts";
import { summarizeUnit, type UnitOptions, type UnitSummary } from "../../lib/summarize/mod.ts";

/** The fixtures folder. */
export const VLLM_DATA = join(ROOT, "tests", "testdata", "vllm");

/** expected.json: the generator's independent numbers. */
export async function expected(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(join(VLLM_DATA, "expected.json"), "utf8"));
}

/** Reads a file, or null when it is missing. */
export async function readOrNull(p: string): Promise<string | null> {
  try {
    return await readFile(p, "utf8");
  } catch {
    return null;
  }
}

/** The options of a unit folder, with the good unit's companions (boots, question.jsonl, --sb-out 16). */
export function unitOptions(dir: string, over: Partial<UnitOptions> = {}): UnitOptions {
  return {
    runs: join(dir, "runs.tsv"), results: join(dir, "results"), container: null, boots: null, sbData: null, sbDir: null,
    sbOut: 16, wantGpc: "0 0", wantMem: "4500 4500", cacheMax: 0.01, spreadMax: 3, spreadExempt: [], decide: null, ...over,
  };
}

/** Summarises a unit folder. */
export function summarize(dir: string, over: Partial<UnitOptions> = {}): Promise<UnitSummary> {
  return summarizeUnit(unitOptions(dir, over), readOrNull);
}

/** A scratch copy of a fixture unit (with question.jsonl beside it). */
export async function scratchUnit(name = "unit"): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "ik-sum-"));
  await cp(join(VLLM_DATA, name), join(d, name), { recursive: true });
  await cp(join(VLLM_DATA, "question.jsonl"), join(d, "question.jsonl"));
  return join(d, name);
}

/** The good unit's full options (boots, Spec-Bench data, decide A B). */
export function goodOptions(dir: string): Partial<UnitOptions> {
  return { boots: join(dir, "boots.tsv"), sbData: join(dir, "..", "question.jsonl"), decide: ["A", "B"] };
}

/** Relative closeness for numbers that went through JSON text and back. */
export function close(a: number | null, b: number | null, what: string, rel = 1e-12): void {
  if (a === null || b === null) {
    if (a !== b) throw new Error(`${what}: ${a} vs ${b}`);
    return;
  }
  if (Math.abs(a - b) > rel * Math.max(1, Math.abs(b))) throw new Error(`${what}: ${a} != ${b}`);
}
