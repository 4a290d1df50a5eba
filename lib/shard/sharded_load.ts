/**
 * One shard of a sharded load run (issue 12): the same seeded, numbered schedule as every other
 * shard, on one wall-clock timetable, sending only the requests with seq mod S = K.
 *
 * - Warm-up requests are tagged per shard (`ik-warm-s<K>-<i>`) and must end before `--start-at`,
 *   else the shard refuses (69: the server was too slow for the lead; a `--start-at` already past
 *   is a usage error, 64): a warm-up still running would load the first level.
 * - Level j starts at its wall time (start-at + earlier durations + j × gap), turned into this
 *   host's monotonic clock once through the (wall, monotonic) anchor; every level runs (the
 *   shards cannot agree to stop), and the next level starts on time even while requests of the
 *   last one are still running (merge counts them as overlapping).
 * - Only shard 0 samples the server's gauges.
 * - It writes a slice record: no N*, no cost, no SLO verdict (lib/shard/slice_record.ts). A
 *   `shard.json` is written into the staging directory first, so a shard killed mid-run is still
 *   recognisable to `ik merge`.
 * @module
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { IkError, unavailableError, usageError } from "../cli/errors.ts";
import { FAULT_CLOCK_SKEW_MS } from "../client/_fault.ts";
import { guardWrite, JsonlWriter, newEvidenceId, writeFailureStop, StagedRun } from "../evidence/mod.ts";
import { waitUntil } from "../executors/mod.ts";
import { arrivalOffsetsMs, concurrencyToRate, levelSeed } from "../schedule/mod.ts";
import { type LevelResult, runLevel } from "../bench/load_level.ts";
import { PromptPool } from "../bench/prompt_pool.ts";
import { warmUpClient } from "../bench/client_warm_up.ts";
import { levelBounds, levelName, liveGauges, type LoadRun, refuseEmptyLevels } from "../bench/serve_load.ts";
import { levelStartsMs, type PlannedLevel, plannedRequests, scheduleHashes } from "./schedule.ts";
import type { ShardRun } from "./shard_run.ts";
import { buildSliceRecord } from "./slice_record.ts";

/** How long before a level's start its runner is started (the pacer then waits for each due time). */
const SETUP_LEAD_MS = 20;

/**
 * One reading of this host's clocks: the sub-ms wall axis (performance.timeOrigin + now(), as the
 * issue defines the anchor), the monotonic time, and how far the system wall clock (Date.now, whole
 * ms) stands from that axis: the same reading at the end shows a clock stepped or slewed meanwhile
 * (timeOrigin is fixed at process start, Date.now is not).
 */
export function clockAnchor(): { wall_ms: number; mono_ms: number; wall_vs_date_ms: number } {
  const mono = performance.now();
  const wall = performance.timeOrigin + mono;
  return { wall_ms: wall, mono_ms: mono, wall_vs_date_ms: Date.now() - wall };
}

export type { ShardRun } from "./shard_run.ts";

/** The planned levels of a sharded run (open loop), as every shard computes them. */
export function plannedLevels(cfg: Pick<LoadRun, "levelKind" | "grid" | "durationS" | "burstiness" | "maxRequestsPerLevel" | "requestsPerLevel" | "seed" | "trace">, e2eRefMs: number | null): (PlannedLevel & { level: number; ratePerS: number })[] {
  // A replay: one level, the trace's own offsets, its prompts in order.
  if (cfg.trace) return [{ name: "trace", level: cfg.grid[0], ratePerS: cfg.grid[0], seed: levelSeed(cfg.seed, 0), offsetsMs: cfg.trace.offsetsMs, replay: true }];
  return cfg.grid.map((level, i) => {
    const ratePerS = cfg.levelKind === "rate" ? level : concurrencyToRate(level, e2eRefMs as number);
    const seed = levelSeed(cfg.seed, i);
    return {
      name: levelName(cfg.levelKind, level), level, ratePerS, seed,
      offsetsMs: arrivalOffsetsMs({ ratePerS, ...levelBounds(cfg), burstiness: cfg.burstiness, seed }),
    };
  });
}

/** A sharded run's outcome. */
export interface ShardOutcome {
  slice: Record<string, unknown>;
  dir: string;
  interrupted: boolean;
}

/** Runs this process's shard and writes its slice record. */
export async function runShardedLoad(cfg: LoadRun & { shard: ShardRun }): Promise<ShardOutcome> {
  const { spec, startAtMs, levelGapS } = cfg.shard;
  const clock = cfg.clock;
  if (!clock) throw new Error("a sharded run needs the clock anchor");
  const wallNow = () => performance.timeOrigin + performance.now();
  const aborted = () => cfg.signal?.aborted === true;
  const e2eRef = cfg.closedLoop || cfg.levelKind === "rate" ? null : cfg.refE2eMs;
  // A level whose seeded schedule is empty would send nothing on any shard: refused (64) before anything.
  if (!cfg.closedLoop && !cfg.trace) refuseEmptyLevels(cfg, (l) => (cfg.levelKind === "rate" ? l : concurrencyToRate(l, e2eRef as number)));
  const planned = cfg.closedLoop ? null : plannedLevels(cfg, e2eRef);
  // With --requests N a level lasts as long as its N arrivals take: every shard computes the same spans.
  const durations = planned && (cfg.requestsPerLevel || cfg.trace) ? planned.map((l) => l.offsetsMs[l.offsetsMs.length - 1] / 1000) : cfg.grid.map(() => cfg.durationS);
  const starts = levelStartsMs(startAtMs, durations, levelGapS, e2eRef);
  const lead = startAtMs - wallNow();
  if (lead <= 0) throw usageError("--start-at", `${startAtMs} is ${(-lead / 1000).toFixed(1)} s in the past`, "give every shard the same time in the future, e.g. now + 60 s in ms since the epoch");
  // The hash is computed over a pool of its own: the run's pool must start unused.
  const hashes = planned ? scheduleHashes(plannedRequests(new PromptPool(cfg.prompts), planned)) : null;

  const order = new PromptPool(cfg.prompts).order(levelSeed(cfg.seed, 10_000));
  const warm: number[] = [];
  // ik's own request path, run in memory first (nothing sent; client_warm_up.ts).
  const clientWarmUp = await warmUpClient(cfg.runner, order, { signal: cfg.signal });
  for (let i = 0; i < cfg.warmup && !aborted(); i++) {
    const { result } = await cfg.runner.send(order[i % order.length], `ik-warm-s${spec.k}-${i}`);
    if (result.ok && result.tDoneMs !== null) warm.push(result.tDoneMs - result.tSendMs);
  }
  const late = wallNow() - startAtMs;
  if (late >= 0 && !aborted()) {
    throw unavailableError("--start-at", `the warm-up of shard ${spec.k}/${spec.s} ended ${late.toFixed(0)} ms after --start-at ${startAtMs}`, "give a later --start-at, or a smaller --warmup");
  }

  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(cfg.storeRoot, id);
  await guardWrite(join(run.dir, "shard.json"), () => writeFile(join(run.dir, "shard.json"), JSON.stringify({
    evidence_id: id, group_id: cfg.shard.groupId, shard: `${spec.k}/${spec.s}`, k: spec.k, s: spec.s, start_at_ms: startAtMs,
  }) + "\n", { mode: 0o600 }));
  // The first failed write stops this shard's sends; its staging journal keeps the whole rows
  // (evidence of what was sent; 'ik merge --allow-partial' merges the other shards without them).
  const io = writeFailureStop(cfg.signal);
  const { onError, signal } = io;
  const stopped = () => aborted() || io.fail !== null;
  const journal = await JsonlWriter.open(`${run.dir}/requests.jsonl`, { onError });
  // Shard wall time = monotonic + this offset; the fault build paces as if the wall clock ran ahead.
  const wallMinusMono = clock.anchor.wall_ms - clock.anchor.mono_ms;
  const files: { rel: string; role: string }[] = [];
  const runPool = new PromptPool(cfg.prompts);
  const levelPools: PromptPool[] = [runPool];
  const running: Promise<LevelResult>[] = [];
  try {
    for (let i = 0; i < cfg.grid.length && !stopped(); i++) {
      const level = cfg.grid[i];
      const name = cfg.trace ? "trace" : levelName(cfg.levelKind, level);
      const t0 = starts[i] - wallMinusMono - FAULT_CLOCK_SKEW_MS;
      // Everything a level needs is made before its start, so its first sends (and the previous
      // level's streams still running) are not held up by file opens.
      const outRel = `outputs/${cfg.label}/load-${name}.jsonl`;
      const inRel = `inputs/${cfg.label}/load-${name}.jsonl`;
      const outputs = await JsonlWriter.open(`${run.dir}/${outRel}`, { onError });
      const inputs = await JsonlWriter.open(`${run.dir}/${inRel}`, { onError });
      files.push({ rel: outRel, role: "outputs" }, { rel: inRel, role: "inputs" });
      let sendsDone!: () => void;
      const sending = new Promise<void>((r) => (sendsDone = r));
      // Closed loop has no global schedule: its prompt pool starts afresh every level on every shard.
      const pool = cfg.closedLoop ? new PromptPool(cfg.prompts) : runPool;
      if (pool !== runPool) levelPools.push(pool);
      await waitUntil(t0 - SETUP_LEAD_MS, undefined, { signal });
      if (stopped()) {
        await Promise.all([outputs.close(), inputs.close()]).catch(onError);
        break;
      }
      const p = runLevel({
        index: i, level, name, ratePerS: planned ? planned[i].ratePerS : null, workers: cfg.closedLoop ? level : null,
        ...(cfg.trace ? { durationS: Infinity, maxRequests: cfg.trace.offsetsMs.length, replay: true } : levelBounds(cfg)),
        burstiness: cfg.burstiness, seed: levelSeed(cfg.seed, i), t0Ms: t0, shard: { k: spec.k, s: spec.s },
        offsetsMs: planned ? planned[i].offsetsMs : undefined,
      }, {
        runner: cfg.runner, pool, slo: cfg.slo, gpuCount: cfg.gpuCount, label: cfg.label, journal, outputs, inputs,
        signal, onProgress: cfg.onProgress, onNote: cfg.onNote, sampler: spec.k === 0 ? cfg.samplerFor?.(name, liveGauges(cfg)) : undefined, onSendsDone: sendsDone, live: cfg.live?.series ?? null,
        telemetry: spec.k === 0 ? cfg.telemetryFor?.(name) ?? null : null, memory: cfg.memory, spillDir: run.dir,
      }).finally(async () => {
        sendsDone();
        await outputs.close().catch(onError);
        await inputs.close().catch(onError);
      });
      running.push(p);
      await Promise.race([sending, p]);
    }
  } finally {
    // A level that failed must not leave the others' requests unawaited.
    await Promise.allSettled(running);
  }
  const levels = await Promise.all(running);
  await journal.close().catch(onError);
  if (io.fail !== null) {
    throw new IkError(io.fail.code, io.fail.where, `${io.fail.message}; stopped sending; ${journal.lines} whole rows kept in ${run.dir}/requests.jsonl (the slice has no record: 'ik merge --allow-partial' merges the other shards without this one's rows)`, io.fail.hint);
  }
  const liveReport = cfg.live ? await cfg.live.finish() : null;
  const anchorEnd = clockAnchor();
  const interrupted = aborted() || levels.length < cfg.grid.length;
  const slice = await buildSliceRecord({
    ...cfg, evidenceId: id, run, levels, files, e2eRefMs: e2eRef, referenceE2eMs: [], warmupE2eMs: warm, clientWarmUp, needRef: false,
    salted: levelPools.reduce((a, q) => a + q.salted, 0), interrupted, liveReport,
  }, { ...cfg.shard, levelStartsMs: starts, scheduleHash: hashes?.schedule ?? null, picksHash: hashes?.picks ?? null, anchorEnd, planned: planned?.map((l) => ({ name: l.name, level: l.level, rate_rps: l.ratePerS, n: l.offsetsMs.length })) ?? null });
  const dir = await run.finish(slice);
  return { slice, dir, interrupted };
}
