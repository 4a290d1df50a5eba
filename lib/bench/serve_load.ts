/**
 * `ik bench serve --mode load` (seed 000 _load): warm-up, then (for a concurrency grid without
 * --ref-e2e-ms) tagged reference requests one at a time whose median e2e is e2e_ref, then one
 * level per grid value, stopping after the first level that misses the SLO unless --sweep-all.
 * A concurrency level N is open-loop Poisson (gamma) arrivals at N / e2e_ref, as the seed designs
 * it; --closed-loop runs N workers back to back instead (a stress test, never N*).
 * Writes the measured `serve_benchmark` record and the derived `capacity` record. The first write
 * that fails (a full disk) stops the sends; the measured record is then finished as incomplete if
 * it can be, and the run ends with the exit-74 error (every whole row journaled is kept).
 * @module
 */
import { IkError, unavailableError, usageError } from "../cli/errors.ts";
import { JsonlWriter, newEvidenceId, writeFailureStop, StagedRun } from "../evidence/mod.ts";
import { arrivalOffsetsMs, AutoSearch, concurrencyToRate, levelSeed, type ProbeOutcome } from "../schedule/mod.ts";
import { median } from "../stats/mod.ts";
import { runtime } from "../runtime/mod.ts";
import { type LevelResult, runLevel } from "./load_level.ts";
import { warmUpClient } from "./client_warm_up.ts";
import { buildCapacityRecord, buildLoadRecord, type LoadRecordInput } from "./load_records.ts";
import type { LoadRun } from "./load_run.ts";
import { PromptPool } from "./prompt_pool.ts";
import { markServerGone, serverGone } from "./server_gone.ts";

export type { LoadRun } from "./load_run.ts";

/** The level's name: `c8` for concurrency, `r2.5` for a rate. */
export function levelName(kind: "rate" | "concurrency", level: number): string {
  return `${kind === "concurrency" ? "c" : "r"}${level === Infinity ? "inf" : level}`;
}

/**
 * A level's arrival bounds: `--duration-s` with the `--max-requests-per-level` cap, or with
 * `--requests N` no window and exactly N arrivals (the same seeded draws: the first k arrivals of
 * both are the same).
 */
export function levelBounds(cfg: Pick<LoadRun, "durationS" | "maxRequestsPerLevel" | "requestsPerLevel">): { durationS: number; maxRequests: number | null } {
  return cfg.requestsPerLevel ? { durationS: Infinity, maxRequests: cfg.requestsPerLevel } : { durationS: cfg.durationS, maxRequests: cfg.maxRequestsPerLevel };
}

/**
 * Refuses (64) a grid with a level whose seeded schedule holds no arrival in the level's duration:
 * such a level would send nothing, and a level with nothing sent measures no verdict. Names the
 * duration that gives it one.
 */
export function refuseEmptyLevels(cfg: Pick<LoadRun, "grid" | "levelKind" | "durationS" | "burstiness" | "maxRequestsPerLevel" | "requestsPerLevel" | "seed">, rateOf: (level: number) => number): void {
  if (cfg.requestsPerLevel) return; // N >= 1 arrivals, whatever their span
  cfg.grid.forEach((level, i) => {
    const spec = { ratePerS: rateOf(level), burstiness: cfg.burstiness, seed: levelSeed(cfg.seed, i) };
    if (arrivalOffsetsMs({ ...spec, durationS: cfg.durationS, maxRequests: cfg.maxRequestsPerLevel }).length > 0) return;
    const first = arrivalOffsetsMs({ ...spec, durationS: 1e9, maxRequests: 1 })[0] / 1000;
    throw usageError(
      "--duration-s",
      `level ${levelName(cfg.levelKind, level)} would send no request in ${cfg.durationS} s (seed ${cfg.seed}: its first arrival is at ${first.toFixed(2)} s)`,
      `give --duration-s ${Math.ceil(first + 1e-9)} or more, a higher rate, or another --seed`,
    );
  });
}

/** Runs load mode and writes both records; `serverGone` says why it stopped after a level during which the server went away (server_gone.ts). */
export async function runLoad(
  cfg: LoadRun,
): Promise<{ measured: Record<string, unknown>; capacity: Record<string, unknown>; dir: string; interrupted: boolean; serverGone: string | null }> {
  const pool = new PromptPool(cfg.prompts);
  const aborted = () => cfg.signal?.aborted === true;
  const auto = cfg.auto ?? null;
  // --rates auto starts at one stream's rate, 1000 / e2e_ref, unless told where.
  const needRef = cfg.refE2eMs === null && !cfg.closedLoop && (cfg.levelKind === "concurrency" || (auto !== null && auto.start === null));
  const trace = cfg.trace ?? null;
  if (!cfg.closedLoop && cfg.levelKind === "rate" && !auto && !trace) refuseEmptyLevels(cfg, (r) => r);
  const order = pool.order(levelSeed(cfg.seed, 10_000));
  const e2eOf = (r: { ok: boolean; tDoneMs: number | null; tSendMs: number }) => (r.ok && r.tDoneMs !== null ? r.tDoneMs - r.tSendMs : null);
  const warm: number[] = [];
  // What setting the run up compiled and left live (the CLI's parsers, the prompts' building, the
  // server check) is dropped before the warm-up and the first request: each MB the heap keeps
  // through a level is ~3 MB of peak RSS at 1,000 streams (issue 21: −5 to −9 MB there, ~5 ms
  // once). The warm-up's own garbage is left to the young collections of the first level.
  await runtime.shrinkHeap();
  // So are the executable's pages that start-up ran (module loading, the CLI, the setup): they stay
  // in the page cache and what the levels run maps back (AMD EPYC, 1,000 streams: file pages at the peak 51 → 43.5 MB).
  const released = runtime.releaseExePages();
  const exePagesReleasedMib = "rssKb" in released ? Math.round(released.rssKb / 102.4) / 10 : null;
  // Then ik's own request path, run in memory (nothing sent): a level's first requests would
  // otherwise be measured on cold code (client_warm_up.ts). After the two above, not before them:
  // the heap shrunk and the executable's pages dropped left the first level to fault its code and
  // heap pages back in, and its first 200 ms to send late (3,000 req/s against a TTFT-0 mock on a
  // 2-vCPU AMD EPYC: the level's send lag p99 5.9–56 ms in 8 runs, its first 100 ms' median 2–44
  // ms; warmed after them 3.5–4.7 ms in 3 runs, first 100 ms 0.8–0.9 ms, as a second level's).
  // Peak RSS: 1,000 streams 89–94 against 90–91 MB, 64 streams 77–78 against 85–86 MB (3 pairs).
  const clientWarmUp = await warmUpClient(cfg.runner, order, { signal: cfg.signal });
  for (let i = 0; i < cfg.warmup && !aborted(); i++) {
    const e = e2eOf((await cfg.runner.send(order[i % order.length], `ik-warm-${i}`)).result);
    if (e !== null) warm.push(e);
  }
  const ref: number[] = [];
  for (let i = 0; i < (needRef ? cfg.refRequests : 0) && !aborted(); i++) {
    const e = e2eOf((await cfg.runner.send(order[(cfg.warmup + i) % order.length], `ik-ref-${i}`)).result);
    if (e !== null) ref.push(e);
  }
  const e2eRef = cfg.refE2eMs ?? median(ref);
  if (needRef && !aborted() && !e2eRef) {
    throw unavailableError("--concurrency", "could not measure the unloaded e2e latency (every reference request failed)", "pass --ref-e2e-ms, or check the server");
  }
  if (!cfg.closedLoop && cfg.levelKind === "concurrency" && !aborted() && !auto) refuseEmptyLevels(cfg, (n) => concurrencyToRate(n, e2eRef as number));
  const search = auto && !aborted()
    ? new AutoSearch({ kind: cfg.levelKind, precision: auto.precision, maxLevels: auto.maxLevels, start: auto.start ?? (cfg.levelKind === "concurrency" ? 1 : 1000 / (e2eRef as number)) })
    : null;
  const levelAt = (i: number): number | null => (search ? search.next() : i < cfg.grid.length ? cfg.grid[i] : null);
  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(cfg.storeRoot, id);
  // The first failed write stops the run: no more sends, and the rows already whole are kept.
  const io = writeFailureStop(cfg.signal);
  const { onError, signal } = io;
  const journal = await JsonlWriter.open(`${run.dir}/requests.jsonl`, { onError });
  const levels: LevelResult[] = [];
  const files: { rel: string; role: string }[] = [];
  let gone: string | null = null;
  for (let i = 0; !aborted() && io.fail === null; i++) {
    const level = levelAt(i);
    if (level === null) break;
    const name = trace ? "trace" : levelName(cfg.levelKind, level);
    const outRel = `outputs/${cfg.label}/load-${name}.jsonl`;
    const inRel = `inputs/${cfg.label}/load-${name}.jsonl`;
    let outputs: JsonlWriter, inputs: JsonlWriter;
    try {
      outputs = await JsonlWriter.open(`${run.dir}/${outRel}`, { onError });
      inputs = await JsonlWriter.open(`${run.dir}/${inRel}`, { onError });
    } catch (e) {
      onError(e);
      break;
    }
    const rate = cfg.closedLoop ? null : cfg.levelKind === "rate" ? level : concurrencyToRate(level, e2eRef as number);
    const bounds = trace ? { durationS: Infinity, maxRequests: trace.offsetsMs.length, offsetsMs: trace.offsetsMs, replay: true } : levelBounds(cfg);
    const res = await runLevel({
      index: i, level, name, ratePerS: rate, workers: cfg.closedLoop ? level : null, ...bounds,
      burstiness: cfg.burstiness, seed: levelSeed(cfg.seed, i), maxInFlight: cfg.closedLoop ? null : cfg.maxInFlight ?? null, rescaleToRate: cfg.rescaleToRate === true,
    }, {
      runner: cfg.runner, pool, slo: cfg.slo, gpuCount: cfg.gpuCount, label: cfg.label, journal, outputs, inputs,
      signal, onProgress: cfg.onProgress, onNote: cfg.onNote, sampler: cfg.samplerFor?.(name, liveGauges(cfg)), live: cfg.live?.series ?? null,
      telemetry: cfg.telemetryFor?.(name) ?? null, memory: cfg.memory, exePagesReleasedMib, spillDir: run.dir,
    });
    await outputs.close().catch(onError);
    await inputs.close().catch(onError);
    files.push({ rel: outRel, role: "outputs" }, { rel: inRel, role: "inputs" });
    levels.push(res);
    gone = !aborted() && io.fail === null ? await serverGone(cfg.runner.cfg.ep, res, { apiKey: cfg.runner.cfg.apiKey, signal, fetch: cfg.runner.cfg.fetch }) : null;
    if (gone !== null) {
      markServerGone(res);
      if (search) search.record(level, probeOutcome(res));
      break;
    }
    if (search) search.record(level, probeOutcome(res));
    else if (res.summary.slo_ok === false && !cfg.sweepAll) break;
  }
  await journal.close().catch(onError);
  const interrupted = aborted() || io.fail !== null;
  const liveReport = cfg.live ? await cfg.live.finish() : null;
  const input: LoadRecordInput = {
    ...cfg, evidenceId: id, run, levels, files, e2eRefMs: e2eRef, referenceE2eMs: ref, warmupE2eMs: warm, clientWarmUp, needRef, salted: pool.salted,
    // The server went away: the run stopped short as an interrupted one does (complete: false), and says why first.
    interrupted: interrupted || gone !== null, stoppedEarly: gone, liveReport,
    // A search's grid is what it measured, in level order; the record keeps how it chose them.
    ...(search ? { grid: [...new Set(levels.map((l) => l.level))].sort((a, b) => a - b), autoSearch: search.state() } : {}),
  };
  if (io.fail !== null) throw await finishAfterWriteFailure(io.fail, input, journal.lines);
  let runDirError: IkError | null = null;
  const measured = await buildLoadRecord({ ...input, onRunDirFailure: (e) => void (runDirError ??= e) });
  const dir = await run.finish(measured);
  const capacity = await buildCapacityRecord(input, measured, cfg.storeRoot);
  // The run dir's copy failed, the records did not: exit 74 naming both.
  const copyFailed = runDirError as IkError | null;
  if (copyFailed) throw new IkError(copyFailed.code, copyFailed.where, `${copyFailed.message}; the records ${String(measured.evidence_id)} and ${String(capacity.evidence_id)} are whole in the store`, copyFailed.hint);
  return { measured, capacity, dir, interrupted, serverGone: gone };
}

/** The sampler hook that copies the server's gauges into the live series, or undefined. */
export function liveGauges(cfg: Pick<LoadRun, "live">): ((v: Readonly<Record<string, number>>) => void) | undefined {
  const series = cfg.live?.series;
  return series ? (v) => series.server({ running: v.running, waiting: v.waiting, kvCacheUsage: v.kv_cache_usage }) : undefined;
}

/** How a measured level counts for the search: held, failed, or (not achieved, not judged) unjudged. */
export function probeOutcome(l: Pick<LevelResult, "summary" | "not_judged" | "not_achieved">): ProbeOutcome {
  if (l.not_judged || l.summary.slo_ok === null) return "unjudged";
  if (l.summary.slo_ok === false) return "failed";
  return l.not_achieved ? "unjudged" : "held";
}

/**
 * After a failed write: finishes the measured record as incomplete if the disk still takes it
 * (no capacity record is derived from it), and returns the one exit-74 line to raise: the path,
 * the error, and where the whole rows are.
 */
async function finishAfterWriteFailure(fail: IkError, input: LoadRecordInput, kept: number): Promise<IkError> {
  const note = `writing ${fail.where} failed (${fail.message.replace(/^cannot write \((\w+).*$/, "$1")}): the run stopped sending; requests.jsonl keeps ${kept} whole rows`;
  let at = input.run.dir, finished = false;
  try {
    at = await input.run.finish(await buildLoadRecord({ ...input, stoppedEarly: note }));
    finished = true;
  } catch { /* the journal's whole rows in the staging folder are what remains */ }
  const what = `stopped sending; ${kept} whole rows kept in ${at}/requests.jsonl, ${finished ? "the record is marked incomplete" : "the record could not be written"}`;
  return new IkError(fail.code, fail.where, `${fail.message}; ${what}`, fail.hint);
}
