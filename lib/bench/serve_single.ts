/**
 * `ik bench serve --mode single` (seed 000 _single): one request at a time, `rounds` passes over the
 * prompt set after `warmup` untimed requests. Round 0 goes untagged and writes the outputs and exact
 * inputs; warm-up and every later round carry a unique prefix tag, so no timed request can hit a
 * prefix cache another filled (unless --no-cache-salt, which the record says). Every row is
 * journaled as it completes; an interrupt ends the run with an incomplete record. A row that cannot
 * be journaled (a full disk) stops the run: the record is finished as incomplete if the disk still
 * takes it, and the exit-74 error names the file and the whole rows kept.
 * @module
 */
import { warmUpClient } from "./client_warm_up.ts";
import { createHash } from "node:crypto";
import { IkError } from "../cli/errors.ts";
import { isOutputError, newEvidenceId, StagedRun } from "../evidence/mod.ts";
import type { Prompt, PromptSet } from "../prompts/mod.ts";
import { type RunDoc, writeRunFiles } from "./run_files.ts";
import type { Runner } from "./runner.ts";
import type { GpuTelemetrySampler } from "../gpu/mod.ts";
import type { LiveRun } from "../live_metrics/live_run.ts";
import { levelGpu } from "./load_level.ts";
import { itlMs } from "../client/row.ts";
import { outputDoc, singleRow } from "./single_rows.ts";
import { buildSingleRecord, type SingleRecordInput } from "./single_record.ts";

/** Rows of an earlier record being extended. */
export interface Extending {
  record: Record<string, unknown> & { evidence_id: string; data: Record<string, unknown> };
  rows: Record<string, unknown>[];
}

/** Everything a single-mode run needs. */
export interface SingleRun extends Omit<SingleRecordInput, "rows" | "walls" | "outputsIndex" | "interrupted" | "planned" | "nondeterministic" | "evidenceId" | "run"> {
  runner: Runner;
  set: PromptSet;
  prompts: readonly Prompt[];
  rounds: number;
  /** The first new round's number (bench rounds' own round), or null: right after the extended record's last. */
  firstRound?: number | null;
  warmup: number;
  cacheSalt: boolean;
  storeRoot: string;
  extending: Extending | null;
  signal?: AbortSignal;
  /** Progress on stderr (one line per warm-up request and per round). */
  progress?: (line: string) => void;
  /** ik's live metrics for this run, when asked for. */
  live?: LiveRun | null;
  /** A GPU sampler for the timed rounds (nvidia-smi on this host, or `--gpu-metrics-url`), or null where there is none to read. */
  telemetryFor?: (name: string) => GpuTelemetrySampler | null;
}

/** The round after the last of these rows (0 for none). */
export function nextRound(rows: readonly Record<string, unknown>[]): number {
  return rows.reduce((m, r) => Math.max(m, Number(r.round ?? -1)), -1) + 1;
}

/** The tag of round r: round 0 untagged (its outputs are the comparable ones), later rounds tagged. */
export function roundSalt(r: number, cacheSalt: boolean): string | null {
  return cacheSalt && r > 0 ? `ik-r${r}` : null;
}

/** Runs single mode and writes its record; returns the record and where it is. */
export async function runSingle(cfg: SingleRun): Promise<{ record: Record<string, unknown>; dir: string; interrupted: boolean }> {
  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(cfg.storeRoot, id);
  const prevRows = cfg.extending?.rows ?? [];
  for (const r of prevRows) await run.journal(r);
  // bench serve's setup checked that a given first round comes after the extended record's last.
  const offset = cfg.firstRound ?? nextRound(prevRows);
  const rows: Record<string, unknown>[] = [];
  const outputs: RunDoc[] = [];
  const inputs: RunDoc[] = [];
  const textSha = new Map<string, Set<string>>();
  const walls = new Map<number, readonly [number, number]>();
  const aborted = () => cfg.signal?.aborted === true;
  let ioFail = null as IkError | null;
  const n = cfg.prompts.length;
  // ik's own request path, run in memory first (nothing sent): the first rounds would otherwise be
  // measured on cold code (client_warm_up.ts).
  const clientWarmUp = await warmUpClient(cfg.runner, cfg.prompts, { signal: cfg.signal });
  for (let i = 0; i < cfg.warmup && !aborted(); i++) {
    cfg.progress?.(`warm-up ${i + 1}/${cfg.warmup}`);
    await cfg.runner.send(cfg.prompts[i % n], `ik-warm-${i}`);
  }
  const live = cfg.live?.series ?? null;
  live?.levelStart("single", null, cfg.rounds * n);
  // The GPUs over the timed rounds (after the warm-up), when there are any to read.
  const telemetry = cfg.telemetryFor?.("single") ?? null;
  telemetry?.start();
  const tStart = performance.now();
  outer:
  for (let r = offset; r < offset + cfg.rounds; r++) {
    const t0 = Date.now() / 1000;
    const salt = roundSalt(r, cfg.cacheSalt);
    for (const p of cfg.prompts) {
      if (aborted()) {
        walls.set(r, [t0, Date.now() / 1000]);
        break outer;
      }
      live?.sent("single");
      const { result, body } = await cfg.runner.send(p, salt);
      if (aborted() && result.errorKind === "aborted") {
        walls.set(r, [t0, Date.now() / 1000]);
        break outer;
      }
      const row = singleRow(result, { round: r, label: cfg.label, max_tokens: cfg.runner.maxFor(p) }) as unknown as Record<string, unknown>;
      try {
        await run.journal(row);
      } catch (e) {
        if (!isOutputError(e)) throw e;
        ioFail = e;
        walls.set(r, [t0, Date.now() / 1000]);
        break outer;
      }
      rows.push(row);
      if (live) live.ended("single", row as never, itlMs(result));
      if (result.ok && salt === null) {
        const set = textSha.get(p.id) ?? new Set<string>();
        set.add(createHash("sha256").update(result.text).digest("hex"));
        textSha.set(p.id, set);
      }
      if (r === 0) {
        const rel = `${p.bucket}/${p.id}.json`;
        outputs.push([rel, outputDoc(result, p, cfg.runner.maxFor(p), { round: r, salt })]);
        inputs.push([rel, body]);
      }
    }
    walls.set(r, [t0, Date.now() / 1000]);
    cfg.progress?.(`round ${r + 1 - offset}/${cfg.rounds}: ${rows.filter((x) => x.round === r && x.ok).length}/${n} ok`);
  }
  const interrupted = aborted() || ioFail !== null;
  live?.levelEnd("single");
  const liveReport = cfg.live ? await cfg.live.finish() : null;
  const windowS = (performance.now() - tStart) / 1000;
  const tel = telemetry ? await telemetry.stop() : null;
  const tokens = rows.reduce((a, r) => a + (r.ok && typeof r.n_tokens === "number" ? r.n_tokens : 0), 0);
  const gpu = tel ? levelGpu(tel, tokens, windowS) : null;
  let runDirError: IkError | null = null;
  const finish = async (writeFailure: string | null) => {
    const written = await writeRunFiles(run, cfg.runDir, cfg.label, outputs, inputs, true);
    const outputsIndex = written.index;
    runDirError = written.runDirError;
    const nondeterministic = [...textSha.entries()].filter(([, v]) => v.size > 1).map(([k]) => k).sort();
    const record = await buildSingleRecord({
      ...cfg,
      evidenceId: id,
      run,
      rows: [...prevRows, ...rows],
      walls,
      outputsIndex,
      interrupted,
      planned: prevRows.length + cfg.rounds * n,
      nondeterministic,
      writeFailure,
      runDirFailure: runDirError ? `${runDirError.where}: ${runDirError.message}` : null,
      onRunDirFailure: (e: IkError) => {
        runDirError ??= e;
      },
      liveReport,
      clientWarmUp,
      gpuSample: gpu,
    });
    return { record, dir: await run.finish(record) };
  };
  if (ioFail !== null) throw await finishAfterWriteFailure(ioFail, run, finish);
  const { record, dir } = await finish(null);
  // The run dir's copy failed, the record did not: exit 74 naming both, nothing measured lost.
  const copyFailed = runDirError as IkError | null;
  if (copyFailed) throw new IkError(copyFailed.code, copyFailed.where, `${copyFailed.message}; the copy in --run-dir stopped there; the record ${id} is whole in ${dir}`, copyFailed.hint);
  return { record, dir, interrupted };
}

/** After a failed journal write: the record finished as incomplete if it can be, and the exit-74 line to raise. */
async function finishAfterWriteFailure(fail: IkError, run: StagedRun, finish: (note: string) => Promise<{ dir: string }>): Promise<IkError> {
  const kept = run.rows;
  let at = run.dir, finished = false;
  try {
    at = (await finish(`writing ${fail.where} failed: the run stopped; requests.jsonl keeps ${kept} whole rows`)).dir;
    finished = true;
  } catch { /* the journal's whole rows in the staging folder are what remains */ }
  const what = `stopped sending; ${kept} whole rows kept in ${at}/requests.jsonl, ${finished ? "the record is marked incomplete" : "the record could not be written"}`;
  return new IkError(fail.code, fail.where, `${fail.message}; ${what}`, fail.hint);
}
