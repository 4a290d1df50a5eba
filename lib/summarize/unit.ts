/**
 * `ik summarize vllm`'s whole unit (seed 003): every cell of runs.tsv with its result file,
 * container lines and sample manifest; repeated cells and overlapping serial ranges; the
 * same-sample check across the cells of a dataset; the boots; the c1 MTP tables per Spec-Bench
 * category; the A/B spread; FLAGS; the decision. Files are read through an injected reader, so the
 * logic is testable without a disk.
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { dataError } from "../cli/errors.ts";
import { abSpread, type SpreadResult } from "./ab_spread.ts";
import { type BootCheck, checkBoots } from "./boots.ts";
import { type CellContainer, type CellRow, summarizeCell } from "./cell.ts";
import { type ContainerLog, parseContainerLog } from "./container_log.ts";
import { type Decision, decide } from "./decision.ts";
import { runOverlapFlags } from "./run_overlaps.ts";
import { parseRuns, type RunRow } from "./runs_table.ts";
import { parseSamples, type Sample, sameSamples, sharedPrompts } from "./sample_manifest.ts";
import { type CategoryStats, categoryTables, parseQuestions, parseSplitCategories } from "./specbench.ts";
import { parseTsv } from "./tsv.ts";
import { readVllmResult, type ReadResult } from "./vllm_result.ts";

/** Reads a file's text, or null when it does not exist (other errors throw). */
export type ReadText = (path: string) => Promise<string | null>;

/** The flags of a summary (paths resolved by the caller or relative to the process). */
export interface UnitOptions {
  runs: string;
  results: string;
  /** --container: the log every cell without its own reads (R725). */
  container: string | null;
  boots: string | null;
  sbData: string | null;
  sbDir: string | null;
  sbOut: number;
  wantGpc: string;
  wantMem: string;
  cacheMax: number;
  spreadMax: number;
  spreadExempt: number[];
  /** --decide: the passes that must be complete; null: no decision. */
  decide: string[] | null;
}

/** A c1 MTP table of one cell. */
export interface CategoryTable {
  tag: string;
  verified: boolean;
  by: Record<string, CategoryStats>;
  groups: Record<string, CategoryStats>;
}

/** The whole summary (the JSON output). */
export interface UnitSummary {
  runs: CellRow[];
  /** boots.tsv rows, as read. */
  boots: Record<string, string>[];
  config: BootCheck["config"];
  spread: SpreadResult | null;
  categories: CategoryTable[];
  /** FLAGS, in the seed's order: boots, integrity, cache, category mapping. */
  flags: string[];
  bootBad: string[];
  integrity: string[];
  cacheBad: string[];
  mappingFlags: string[];
  decision: Decision | null;
  /** Notes for stderr (appended result files). */
  warnings: string[];
}

async function mustRead(read: ReadText, path: string, where: string): Promise<string> {
  const t = await read(path);
  if (t === null) throw dataError(where, `${path}: no such file`, "check the path");
  return t;
}

/** Summarises a unit. */
export async function summarizeUnit(o: UnitOptions, read: ReadText): Promise<UnitSummary> {
  const runs = parseRuns(await mustRead(read, o.runs, "--runs"), o.runs);
  const runDir = resolve(o.runs, "..");
  const sha2cat = o.sbData ? parseQuestions(await mustRead(read, o.sbData, "--sb-data"), o.sbData) : new Map<string, Set<string>>();
  const bootRows = o.boots ? parseTsv(await mustRead(read, o.boots, "--boots"), o.boots).rows : [];
  const logs = new Map<string, ContainerLog | null>();
  const rows: CellRow[] = [], integrity: string[] = [], cacheBad: string[] = [], mappingFlags: string[] = [], warnings: string[] = [];
  const categories: CategoryTable[] = [];
  const manifests = new Map<string, { tag: string; m: Sample[] }[]>();
  const containerOf = (run: RunRow) => run.container && run.container !== "-" ? (isAbsolute(run.container) ? run.container : join(runDir, run.container)) : o.container;
  for (const run of runs) {
    const cpath = containerOf(run);
    let log: ContainerLog | null = null;
    if (cpath !== null) {
      if (!logs.has(cpath)) {
        const text = await read(cpath);
        const parsed = text === null ? null : parseContainerLog(text);
        logs.set(cpath, parsed);
        if (parsed?.bad.length) {
          integrity.push(`${cpath}: ${parsed.bad.length} unreadable ik-request line(s) (first: line ${parsed.bad[0].line}, ${parsed.bad[0].why})`);
        }
      }
      log = logs.get(cpath)!;
    }
    const container: CellContainer = { path: cpath, log };
    const resultPath = join(o.results, `${run.tag}.json`);
    const text = await read(resultPath);
    const result: ReadResult = text === null ? { ok: false, reason: `${resultPath}: no such file` } : readVllmResult(text);
    if (!result.ok && text !== null) result.reason = `${resultPath}: ${result.reason}`;
    if (result.ok && result.appended > 1) {
      warnings.push(`${resultPath} holds ${result.appended} results (--append-result); using the last`);
    }
    const cell = summarizeCell({ run, result, container, sbOut: o.sbOut, cacheMax: o.cacheMax });
    rows.push(cell.row);
    integrity.push(...cell.integrity);
    cacheBad.push(...cell.cacheBad);
    if (!result.ok) continue;
    const manPath = join(o.results, `${run.tag}.samples.tsv`);
    const manText = await read(manPath);
    const man = manText === null ? null : parseSamples(manText, manPath);
    if (man) {
      if (!manifests.has(run.dataset)) manifests.set(run.dataset, []);
      manifests.get(run.dataset)!.push({ tag: run.tag, m: man });
    }
    // per-category acceptance at c1, where the container's serial order is the send order
    let cats: string[] | null = null;
    if (run.conc === 1 && run.dataset === "specbench" && man && sha2cat.size) {
      const cs = man.map((s) => sha2cat.get(s.sha) ?? new Set(["?"]));
      const odd = cs.filter((c) => c.size !== 1).length;
      if (odd) mappingFlags.push(`${run.tag}: ${odd} manifest prompts map to no / several categories`);
      cats = cs.map((c) => [...c].sort()[0]);
    } else if (run.catfile !== "-" && o.sbDir) {
      const p = join(o.sbDir, run.catfile);
      cats = parseSplitCategories(await mustRead(read, p, `${o.runs}:${run.line}: catfile`), p);
    }
    if (cats) {
      const inp = (cell.rows ?? []).map((r) => r.inp);
      const sameLen = cell.meas.length === cats.length;
      const verified = sameLen && cell.meas.length === inp.length && cell.meas.every((r, i) => r.prompt === inp[i]);
      if (!verified) {
        mappingFlags.push(`${run.tag}: category mapping UNVERIFIED (${cell.meas.length} lines vs ${cats.length} prompts; prompt-token sequence ${sameLen ? "differs" : "n/a"})`);
      }
      categories.push({ tag: run.tag, verified, ...categoryTables(cats, cell.meas) });
    }
  }
  integrity.push(...runOverlapFlags(runs, o.runs, containerOf));
  // the same sample at every level: every cell of a dataset must carry the identical manifest
  for (const ms of manifests.values()) {
    const ref = ms[0];
    for (const x of ms.slice(1)) {
      if (!sameSamples(x.m, ref.m)) {
        integrity.push(`${x.tag}: sample differs from ${ref.tag} (${x.m.length} vs ${ref.m.length} requests, ${sharedPrompts(x.m, ref.m)} prompts shared)`);
      }
    }
  }
  if (o.decide) {
    for (const ds of new Set(rows.map((r) => r.dataset))) {
      const have = new Set((manifests.get(ds) ?? []).map((x) => x.tag));
      const miss = rows.filter((r) => r.dataset === ds && r.has_result && !have.has(r.tag)).map((r) => r.tag);
      if (miss.length) integrity.push(`${ds}: no sample manifest for ${miss.join(", ")} (same-sample check impossible)`);
    }
  }
  const boots = checkBoots(bootRows, o.wantGpc, o.wantMem);
  const spread = abSpread(rows, o.spreadMax, o.spreadExempt);
  const decision = o.decide
    ? decide({ passes: o.decide, rows, bootBad: boots.bad, integrity, cacheBad, spread, cacheMax: o.cacheMax })
    : null;
  return {
    runs: rows, boots: bootRows.map((b) => b.fields), config: boots.config, spread, categories,
    flags: [...boots.bad, ...integrity, ...cacheBad, ...mappingFlags], bootBad: boots.bad, integrity, cacheBad, mappingFlags, decision, warnings,
  };
}
