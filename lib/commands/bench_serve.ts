/**
 * `ik bench serve`: the client-side streaming benchmark of one OpenAI-compatible server. Single
 * mode: one request at a time, rounds over a prompt set, per-bucket medians and p95 with CIs over
 * rounds, written as an evidence record (seed 000). Exit 0 when the benchmark ran (failed
 * requests are counted in the record), 69 when the server is unreachable, 74 when the store or the run
 * dir cannot be written (checked before the first request; a disk that fills mid-run stops the sends and
 * keeps every whole row), 130 when interrupted.
 * @module
 */
import { ExitCode } from "../cli/exit_codes.ts";
import { renderSingleRecord } from "../report/terminal/serve_table.ts";
import { type PreparedServe, prepareServe } from "./bench_serve_setup.ts";
import { runSingle } from "../bench/serve_single.ts";
import { runLoad } from "../bench/serve_load.ts";
import { goneError } from "../bench/server_gone.ts";
import { runShardedLoad } from "../shard/sharded_load.ts";
import { renderSlice } from "../report/terminal/slice_text.ts";
import { renderCapacity } from "../report/terminal/capacity_table.ts";
import { renderConversations } from "../report/terminal/conversations_table.ts";
import { runConversations } from "../bench/conversations.ts";
import { progressPrinter } from "../report/terminal/load_progress.ts";
import type { CommandContext } from "./context.ts";
import type { BenchServeFlags } from "./bench_serve_flags.ts";
import { liveOptions } from "./live_options.ts";
import { LiveRun } from "../live_metrics/live_run.ts";
import { checkWritable, redactUrl } from "../evidence/mod.ts";
import { acquireGpuLock, type GpuLock } from "../engines_host/gpu_lock.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { dirname, resolve } from "node:path";
import { randomBytes } from "node:crypto";

/** Runs `ik bench serve`. */
export async function runBenchServe(ctx: CommandContext, f: BenchServeFlags): Promise<number> {
  const lock = f.gpuLock === undefined ? null : await takeGpuLock(ctx, f.gpuLock);
  try {
    const prep = await prepareServe(ctx, f);
    try {
      return await runPrepared(ctx, f, prep);
    } catch (e) {
      throw prep.sanitizeError(e);
    }
  } finally {
    await lock?.release();
  }
}

/**
 * `--gpu-lock PATH` (CONTRACTS "GPU lock"): held for the whole run, before the first request. Its
 * folder must be writable (74); a lock a live process holds is 69; a dead owner's is taken over,
 * said on stderr; inherited from a `bench rounds` parent through IK_GPU_LOCK_HELD.
 */
async function takeGpuLock(ctx: CommandContext, path: string): Promise<GpuLock> {
  const rt = ctx.runtime;
  await checkWritable([{ dir: dirname(resolve(rt.cwd(), path)), as: `--gpu-lock ${path}` }]);
  const lock = await acquireGpuLock(path, { pid: rt.pid(), command: "ik bench serve", env: (n) => rt.env(n), pidAlive: rt.pidAlive });
  if (lock.note) ctx.err(`bench serve: ${escapeTerminalLine(lock.note)}\n`);
  return lock;
}

/** Runs a prepared benchmark (a shard's slice, a load run, or single mode) and prints its record. */
async function runPrepared(ctx: CommandContext, f: BenchServeFlags, prep: PreparedServe): Promise<number> {
  const interruptedExit = (what: string) => {
    ctx.err(`ik: bench serve: interrupted; ${what} marked incomplete\n`);
    return ExitCode.INTERRUPTED;
  };
  // Live metrics (--metrics-listen, --prometheus-remote-write): started before the first request.
  const args = prep.run.args;
  const live = await LiveRun.start({ ...liveOptions(f), signal: ctx.signal }, {
    run_id: randomBytes(4).toString("hex"), label: prep.run.label, engine_kind: String(args.engine_kind ?? "auto"),
    shard: prep.shard ? `${prep.shard.spec.k}/${prep.shard.spec.s}` : "0/1", endpoint: String(args.base_url ?? ""),
  }, f.mode, (h, o) => ctx.runtime.serve(h, o), redactUrl);
  if (live?.url) ctx.err(`bench serve: live metrics at ${live.url}\n`);
  if (live) prep.gpuPower.sink = (gpu, uuid, watts) => live.series.gpuPower(gpu, uuid, watts);
  try {
    return await runWithLive(ctx, f, prep, live, interruptedExit);
  } finally {
    // A run that ended in an error still stops serving and makes its last push.
    await live?.finish();
  }
}

async function runWithLive(ctx: CommandContext, f: BenchServeFlags, prep: PreparedServe, live: LiveRun | null, interruptedExit: (what: string) => number): Promise<number> {
  if (prep.conv) {
    const { record, dir, interrupted } = await runConversations({ ...prep.conv, live, signal: ctx.signal, progress: (l) => ctx.err(`bench serve: ${l}\n`) });
    ctx.out(ctx.json ? prep.clean(JSON.stringify(record)) + "\n" : prep.clean(renderConversations(record, dir)));
    return interrupted ? interruptedExit(`the record ${record.evidence_id} is`) : ExitCode.OK;
  }
  if (prep.load) {
    const progress = progressPrinter((t) => ctx.err(t), ctx.runtime.isTerminal("stderr"));
    const load = { ...prep.load, live, signal: ctx.signal, onProgress: progress.update, onNote: (line: string) => progress.note(`bench serve: warning: ${line}`) };
    if (prep.shard) {
      const { slice, dir, interrupted } = await runShardedLoad({ ...load, shard: prep.shard });
      progress.done();
      ctx.out(ctx.json ? prep.clean(JSON.stringify(slice)) + "\n" : prep.clean(renderSlice(slice, dir)));
      return interrupted ? interruptedExit(`the slice ${slice.evidence_id} is`) : ExitCode.OK;
    }
    // A failed write ends the run with its one exit-74 line: the progress line is ended first.
    const { capacity, measured, interrupted, serverGone } = await runLoad(load).finally(() => progress.done());
    // A replay's record is the measured one (its capacity record only restates the verdict).
    ctx.out(ctx.json ? prep.clean(JSON.stringify(prep.load.trace ? measured : capacity)) + "\n" : prep.clean(renderCapacity(capacity, measured)));
    if (interrupted) return interruptedExit(`the records ${measured.evidence_id} and ${capacity.evidence_id} are`);
    if (serverGone) throw goneError(serverGone, measured, capacity);
    const star = (capacity.data as Record<string, unknown>)[prep.load.levelKind === "concurrency" ? "n_star" : "rate_star_rps"];
    return f.failOnSlo && (star === null || star === undefined) ? ExitCode.SLO_NOT_MET : ExitCode.OK;
  }
  const { record, dir, interrupted } = await runSingle({ ...prep.run, live, signal: ctx.signal, progress: (l) => ctx.err(`bench serve: ${l}\n`) });
  ctx.out(ctx.json ? prep.clean(JSON.stringify(record)) + "\n" : prep.clean(renderSingleRecord(record, dir)));
  return interrupted ? interruptedExit(`the record ${record.evidence_id} is`) : ExitCode.OK;
}
