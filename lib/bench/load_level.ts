/**
 * One load level: open loop (arrivals on absolute deadlines from a seeded gamma schedule; a level
 * ends when every request it sent has ended) or closed loop (N workers back to back: a stress
 * test). Each request's row is journaled and its output and exact input appended to the level's
 * JSONL files as it completes; only numbers stay in memory (typed columns), so memory does not
 * grow with the requests kept.
 * @module
 */
import { type ClientMemoryRecord, type MemoryReading, startClientMemory } from "../executors/client_memory.ts";
import { itlMs, type RequestResult, requestRow } from "../client/mod.ts";
import type { Prompt } from "../prompts/mod.ts";
import type { JsonlWriter } from "../evidence/mod.ts";
import { loopBlockNote, loopLagRecord, type LoopLagRecord, type Pacing, runClosedLoop, runOpenLoop, startLoopLag, waitUntil } from "../executors/mod.ts";
import { LevelAccumulator, type LevelSummary, notAchieved, offeredRate, scheduleRate, type Slo } from "../metrics/mod.ts";
import { arrivalOffsetsMs } from "../schedule/mod.ts";
import { traceRateRps } from "../schedule/trace_schedule.ts";
import { CountTally } from "./count_limitations.ts";
import type { PromptPool } from "./prompt_pool.ts";
import type { Runner } from "./runner.ts";
import { scheduledRate, scheduleNote } from "./schedule_note.ts";
import { type EnergyPerToken, energyPerToken, type GpuTelemetry, type GpuTelemetrySampler } from "../gpu/mod.ts";
import type { IkSeries } from "../live_metrics/ik_series.ts";
import { type ScheduleWindow, ScheduleWindows } from "../metrics/windows.ts";
import { targetTokens } from "./prompt_lengths.ts";
import { outputDoc, promptTokens } from "./single_rows.ts";
import { ownedCount } from "../shard/shard_spec.ts";
import { CompletionQueue } from "./completion_queue.ts";
import { FileSpill } from "./column_spill.ts";

/** A client that fell this far behind its schedule (p99, ms) may have limited the level. */
export const SEND_LAG_LIMIT_MS = 5;
/**
 * Why a level's send lag flags it client-limited, or null when it does not: its p99 over `limitMs`,
 * with the p99 of the lag less the loop thread's wait for a CPU where that was read. A p99 under the
 * limit without the wait means the host (CPUs held by other work, or a vCPU woken late), not ik's
 * own work, made the sends late.
 */
export function sendLagNote(p99: number | null, lessWaitP99: number | null | undefined, limitMs: number): string | null {
  if (p99 === null || p99 <= limitMs) return null;
  const base = `send lag p99 ${p99.toFixed(1)} ms > ${limitMs} ms`;
  if (lessWaitP99 === null || lessWaitP99 === undefined) return base;
  return lessWaitP99 <= limitMs
    ? `${base} (${lessWaitP99.toFixed(1)} ms less the loop thread's wait for a CPU: the rest was the host, its CPUs held by other work or a vCPU woken late)`
    : `${base} (${lessWaitP99.toFixed(1)} ms less the loop thread's wait for a CPU)`;
}

/** An event loop blocked this long (ms) may have delayed sends and timestamps. */
export const LOOP_BLOCK_LIMIT_MS = 10;

/** What a level runs. */
export interface LevelSpec {
  index: number;
  /** The grid value (N or req/s). */
  level: number;
  /** `c8`, `r2.5`. */
  name: string;
  /** Open-loop arrival rate, or null for closed loop. */
  ratePerS: number | null;
  /** Closed-loop workers, or null for open loop. */
  workers: number | null;
  /** The arrival window, s; Infinity with `--requests N` (then maxRequests is N: exactly N arrivals). */
  durationS: number;
  maxRequests: number | null;
  burstiness: number;
  /** Seed parts of the level (schedule and prompt order). */
  seed: number[];
  /** The pacer's early wake-up (default DEFAULT_SPIN_MARGIN_MS; benchmarks vary it). */
  spinMarginMs?: number;
  /** The level's start on the monotonic clock (sharded runs: from the wall timetable; default when it begins). */
  t0Ms?: number;
  /**
   * A sharded run's slice: only the requests with seq mod s = k are sent, but every seq's prompt
   * and salt is drawn in order, so each shard's picks equal one process's.
   */
  shard?: { k: number; s: number };
  /** The level's arrival offsets, when the caller has computed them already (a sharded run, for its hash). */
  offsetsMs?: ArrayLike<number>;
  /** Open loop: at most this many requests in flight (vLLM's --max-concurrency); a request due over it waits, and its send lag includes the wait. */
  maxInFlight?: number | null;
  /**
   * Open loop with a count (maxRequests): stretch the seeded offsets so the last arrival is at
   * N / rate, as vLLM's `get_request` rescales its gaps (the schedule's rate is then the target).
   */
  rescaleToRate?: boolean;
  /** A replay (trace mode): request i is the pool's prompt i, and per-second windows of the schedule are kept. */
  replay?: boolean;
}

/** Live counters, for the progress line. */
export interface LevelProgress {
  name: string;
  planned: number | null;
  sent: number;
  inFlight: number;
  failed: number;
  ttftP95Ms: number | null;
  sendLagP99Ms: number | null;
}

/** What a level needs. */
export interface LevelDeps {
  runner: Runner;
  pool: PromptPool;
  slo: Slo;
  gpuCount: number;
  label: string;
  journal: JsonlWriter;
  outputs: JsonlWriter;
  inputs: JsonlWriter;
  signal?: AbortSignal;
  /** Called about once a second while the level runs. */
  onProgress?: (p: LevelProgress) => void;
  /** Samples the server's gauges during the level (started before the first send). */
  sampler?: { start(): void; stop(): Promise<Record<string, unknown>> };
  /** ik's live series (`--metrics-listen`, `--prometheus-remote-write`), when asked for. */
  live?: IkSeries | null;
  /** Samples the GPUs during the level (nvidia-smi, or a DCGM exporter), when there are any to read. */
  telemetry?: GpuTelemetrySampler | null;
  /** Called when the level has sent its last request (requests may still be running). */
  onSendsDone?: () => void;
  /** Told one line before the level sends, when its schedule strays more than 10 % from the target rate. */
  onNote?: (line: string) => void;
  /** Reads ik's own memory (sampled once a second into the level's `client_memory`), where given. */
  memory?: () => MemoryReading;
  /** What of the executable's pages the run handed back before its first request (MiB), recorded beside `client_memory`. */
  exePagesReleasedMib?: number | null;
  /**
   * The run's folder, where the level's columns park their full chunks (an unlinked file,
   * column_spill.ts) so that a long level's memory does not grow with its requests; absent: kept in memory.
   */
  spillDir?: string;
}

/** A level's GPU figures. */
export interface LevelGpu {
  telemetry: GpuTelemetry;
  energy: EnergyPerToken;
}

/** A finished level, as the record keeps it. */
export interface LevelResult {
  level: number;
  name: string;
  target_rate_rps: number | null;
  /** Open loop: the seeded schedule's own rate (every shard's arrivals over the window, or over their span when a count bounds them); a replay: the trace's mean rate, (n − 1) / span as data.trace.mean_rate_rps (null with no span). */
  scheduled_rate_rps: number | null;
  /** Open loop: why that rate strays more than 10 % from the target, or null (always null for a replay). */
  schedule_note: string | null;
  offered_rate_rps: number | null;
  send_window_s: number | null;
  planned: number | null;
  sent: number;
  /** Sharded runs: the level's start on this shard's monotonic clock, and every seq the schedule has (all shards). */
  t0_mono_ms?: number | null;
  planned_all?: number | null;
  /**
   * The schedule's origin on the rows' clock (ns; request i was due at it + its offset; a closed
   * loop's start): vLLM's benchmark start, before the first arrival gap. Null where nothing ran.
   */
  t_origin_ns: number | null;
  summary: LevelSummary;
  event_loop_lag_ms: LoopLagRecord;
  /** ik's own memory during the level (peaks, MiB), or null where it was not read. */
  client_memory: ClientMemoryRecord | null;
  /**
   * Open loop: how the sends were paced (the sleep before each deadline, "precise" where the
   * runtime has a sub-millisecond one, and the spin after it); null for a closed loop. Absent in
   * records made before it.
   */
  pacer?: Pacing | null;
  server: Record<string, unknown> | null;
  /** Why the client may have limited this level, or null. */
  client_limited: string | null;
  interrupted: boolean;
  /**
   * Why the level is not judged against the SLO ("interrupted", "nothing sent"), or null: such a
   * level's slo_ok is null, and N* stops below it as a lower bound.
   */
  not_judged: string | null;
  /**
   * Why the level did not send the load its schedule asked for (offered < 0.9 x scheduled, and
   * what capped it), or null: such a level is not eligible for N*.
   */
  not_achieved?: string | null;
  /** The GPUs while the level ran (power, energy, utilisation, memory) and its energy per output token, or null (not sampled). */
  gpu?: LevelGpu | null;
  /** A replay's per-second windows: the trace's rate against what was sent, and the send lag (up to the interrupt, when one came). */
  windows?: ScheduleWindow[];
  /** A replay cut short: where on its schedule (s from its start) the interrupt came, its windows ending there; null otherwise. */
  interrupted_at_s?: number | null;
  /** Counting methods and length checks (for the record's limitations). */
  counts: CountTally;
}

/** Runs one level and returns its numbers. */
export async function runLevel(spec: LevelSpec, deps: LevelDeps): Promise<LevelResult> {
  const spill = deps.spillDir ? FileSpill.open(deps.spillDir, spec.shard ? `${spec.name}-${spec.shard.k}` : spec.name) : null;
  try {
    return await measureLevel(spec, deps, new LevelAccumulator(deps.slo, spill));
  } finally {
    await spill?.close();
  }
}

async function measureLevel(spec: LevelSpec, deps: LevelDeps, acc: LevelAccumulator): Promise<LevelResult> {
  const counts = new CountTally();
  const pick = spec.replay ? deps.pool.inOrder(spec.name) : deps.pool.picker(spec.seed, spec.name);
  let allOffsets: ArrayLike<number> | null = null;
  if (spec.ratePerS === Infinity) {
    // vLLM's --request-rate inf: every one of the N requests is due at the level's start.
    allOffsets = spec.offsetsMs ?? new Float64Array(spec.maxRequests ?? 0);
  } else if (spec.ratePerS !== null) {
    allOffsets = spec.offsetsMs ?? arrivalOffsetsMs({ ratePerS: spec.ratePerS, durationS: spec.durationS, burstiness: spec.burstiness, maxRequests: spec.maxRequests, seed: spec.seed });
    if (spec.rescaleToRate && !spec.offsetsMs && spec.maxRequests && allOffsets.length && allOffsets[allOffsets.length - 1] > 0) {
      const raw = allOffsets, f = (raw.length / spec.ratePerS) * 1000 / raw[raw.length - 1];
      allOffsets = Float64Array.from(raw, (t) => Math.round(t * f * 1e3) / 1e3);
    }
  }
  const facts = allOffsets && spec.ratePerS !== null
    ? { name: spec.name, targetRps: spec.ratePerS, offsetsMs: allOffsets, durationS: Number.isFinite(spec.durationS) ? spec.durationS : null, maxRequests: spec.maxRequests, burstiness: spec.burstiness }
    : null;
  // A replay has no target to stray from: its rate is the trace's own (data.trace.mean_rate_rps).
  const scheduleNoteText = facts && !spec.replay ? scheduleNote(facts) : null;
  if (scheduleNoteText) deps.onNote?.(scheduleNoteText);
  const shard = spec.shard && spec.shard.s > 1 ? spec.shard : null;
  // A shard sends seq k, k+s, k+2s, ...: its own offsets, and the seq each one stands for.
  const seqOf = (i: number) => (shard ? i * shard.s + shard.k : i);
  let offsets: ArrayLike<number> | null = allOffsets;
  if (allOffsets && shard) {
    const own = new Float64Array(ownedCount(allOffsets.length, shard.k, shard.s));
    for (let i = 0; i < own.length; i++) own[i] = allOffsets[seqOf(i)];
    offsets = own;
  }
  const windows = spec.replay && allOffsets ? new ScheduleWindows(1) : null;
  // A replay cut short: when (monotonic ms) the interrupt came, so its windows end there.
  let abortedAtMs: number | null = null;
  const onAbort = () => void (abortedAtMs ??= performance.now());
  if (windows) deps.signal?.addEventListener("abort", onAbort, { once: true });
  let picked = 0;
  // Every seq's pick is drawn in order (the skipped ones too), so prompts and salts match one process.
  const pickFor = (seq: number) => {
    while (picked < seq) {
      pick();
      picked++;
    }
    picked++;
    return pick();
  };
  let inFlight = 0, failed = 0, sent = 0;
  const done = new CompletionQueue();
  let firstSend: number | null = null, lastSend: number | null = null;
  const shardTag = spec.shard ? `${spec.shard.k}/${spec.shard.s}` : null;
  // `seq` numbers a level's requests in send order (the open loop's schedule index).
  /** A measured request recorded: its row journaled, its numbers added (run under the per-turn budget). */
  const record = (result: RequestResult, prompt: Prompt, seq: number, salt: string | null, cpuWait: number | null | undefined) => {
    const maxTokens = deps.runner.maxFor(prompt);
    const extra: Record<string, unknown> = { level: spec.name, seq, label: deps.label, max_tokens: maxTokens, prompt_tokens: promptTokens(result) };
    // Open loop: the loop thread's wait for a CPU while this request waited for its deadline (null: unread).
    if (cpuWait !== undefined) extra.send_cpu_wait_ms = cpuWait;
    const target = targetTokens(prompt);
    if (target !== null) extra.target_prompt_tokens = target;
    if (shardTag) extra.shard = shardTag;
    const row = requestRow(result, extra);
    if (!row.ok) failed++;
    deps.journal.write(row);
    // The output document (text, ids, every event's timing) is built when it is written, off this turn.
    deps.outputs.writeLazy(() => outputDoc(result, prompt, maxTokens, { level: spec.name, seq, salt }));
    const gaps = itlMs(result);
    acc.add(row, gaps);
    deps.live?.ended(spec.name, row, gaps);
    counts.add(row, maxTokens);
    if (windows && allOffsets) windows.add(allOffsets[seq], row.send_lag_ms, row.ok);
  };
  // Not an async function, and the body is recorded as it is sent: a suspended call would hold its
  // frame, and the prompt, for the whole response (issue 21). Whatever throws is a rejection, as
  // from an async function (the executors swallow or report it).
  const send = (seq: number, due: number | null, cpuWait?: number | null): Promise<void> => {
    let counted = false;
    try {
      const { prompt, salt } = pickFor(seq);
      inFlight++;
      counted = true;
      sent++;
      deps.live?.sent(spec.name);
      const t = performance.now();
      firstSend ??= t;
      lastSend = t;
      const measured = deps.runner.stream(prompt, salt, due, (body) => deps.inputs.write({ id: prompt.id, level: spec.name, seq, salt, body }));
      return measured.then((result) => {
        inFlight--;
        // The request is measured; what records it runs under the per-turn budget (completion_queue.ts).
        done.push(() => record(result, prompt, seq, salt, cpuWait));
      }, (e) => {
        inFlight--;
        throw e;
      });
    } catch (e) {
      if (counted) inFlight--;
      return Promise.reject(e);
    }
  };
  deps.live?.levelStart(spec.name, spec.ratePerS === Infinity ? null : spec.ratePerS, offsets ? offsets.length : spec.maxRequests);
  const lag = startLoopLag();
  const memory = deps.memory ? startClientMemory(deps.memory) : null;
  deps.sampler?.start();
  deps.telemetry?.start();
  const tick = setInterval(() => deps.onProgress?.({
    name: spec.name, planned: offsets?.length ?? null, sent, inFlight, failed,
    ttftP95Ms: acc.peekTtftP95(), sendLagP99Ms: acc.peekSendLagP99(),
  }), 1000);
  (tick as unknown as { unref?: () => void }).unref?.();
  let pacer: Pacing | null = null;
  let originMs: number | null = null;
  try {
    if (offsets) {
      ({ pacing: pacer, t0Ms: originMs } = await runOpenLoop((i, due, cpuWait) => send(seqOf(i), due, cpuWait), {
        offsetsMs: offsets, signal: deps.signal, spinMarginMs: spec.spinMarginMs, t0Ms: spec.t0Ms, maxInFlight: spec.maxInFlight,
        onSendsDone: () => {
          // The seqs after this shard's last one are drawn too, so the next level's picks match.
          if (allOffsets && !deps.signal?.aborted) while (picked < allOffsets.length) (pick(), picked++);
          deps.onSendsDone?.();
        },
      }));
    } else {
      if (spec.t0Ms !== undefined) await waitUntil(spec.t0Ms, undefined, { signal: deps.signal });
      const cap = spec.maxRequests === null ? null : shard ? ownedCount(spec.maxRequests, shard.k, shard.s) : spec.maxRequests;
      ({ t0Ms: originMs } = await runClosedLoop((i) => send(seqOf(i), null), { workers: spec.workers ?? 1, durationS: spec.durationS, maxRequests: cap, signal: deps.signal }));
      deps.onSendsDone?.();
    }
  } finally {
    deps.signal?.removeEventListener("abort", onAbort);
    clearInterval(tick);
    // Every ended request recorded (rows journaled, numbers added) before the level's numbers are read.
    await done.drain();
  }
  const loop = lag.stop();
  const clientMemory = memory ? { ...memory.stop(), exe_pages_released_mib: deps.exePagesReleasedMib ?? null } : null;
  deps.live?.levelEnd(spec.name);
  const server = deps.sampler ? await deps.sampler.stop() : null;
  const telemetry = deps.telemetry ? await deps.telemetry.stop() : null;
  await Promise.all([deps.journal.flush(), deps.outputs.flush(), deps.inputs.flush()]);
  const summary = acc.summary(deps.gpuCount);
  const interrupted = deps.signal?.aborted === true;
  // A level cut short or that sent nothing measured no verdict: its aborted rows are no SLO failure.
  const notJudged = interrupted ? "interrupted" : sent === 0 ? "nothing sent" : null;
  if (notJudged !== null) summary.slo_ok = null;
  const window = firstSend !== null && lastSend !== null ? (lastSend - firstSend) / 1000 : null;
  // One basis for offered and scheduled (arrivals over the schedule's window) where the level has its own schedule.
  const sched = facts && !shard && !spec.replay ? scheduledRate(facts) : null;
  const offered = offeredRate({ sent, firstSendMs: firstSend, lastSendMs: lastSend, originMs, scheduleWindowS: sched?.windowS ?? null });
  const why: string[] = [];
  const late = sendLagNote(summary.send_lag_ms.p99, summary.send_lag_without_cpu_wait_ms?.p99, SEND_LAG_LIMIT_MS);
  if (late !== null) why.push(late);
  const blocked = loopBlockNote(loop, LOOP_BLOCK_LIMIT_MS);
  if (blocked !== null) why.push(blocked);
  const clientLimited = why.length ? why.join("; ") : null;
  const scheduled = sched?.rps ?? (offsets ? scheduleRate(offsets) : null);
  // An interrupted level is already not judged; its offered rate says nothing about the client.
  const shortRaw = interrupted ? null : notAchieved({
    targetRps: spec.ratePerS, scheduledRps: scheduled, offeredRps: offered, clientLimited,
    maxRequests: spec.maxRequests === null ? null : shard ? ownedCount(spec.maxRequests, shard.k, shard.s) : spec.maxRequests, sent,
  });
  const short = shortRaw && spec.maxInFlight ? `${shortRaw} (or the cap of ${spec.maxInFlight} in flight held requests back)` : shortRaw;
  // The trace's arrivals, each window's due count: up to the interrupt where one came (none past it).
  const cutMs = interrupted ? (abortedAtMs !== null && originMs !== null ? abortedAtMs - originMs : -Infinity) : Infinity;
  if (windows && allOffsets) for (let i = 0; i < allOffsets.length && allOffsets[i] <= cutMs; i++) windows.schedule(allOffsets[i]);
  const replayRate = spec.replay && allOffsets ? traceRateRps(allOffsets) : null;
  return {
    level: spec.level,
    name: spec.name,
    // A replay whose arrivals have no span has no rate to target (its grid value is only a name).
    target_rate_rps: spec.replay && replayRate === null ? null : spec.ratePerS,
    scheduled_rate_rps: spec.replay ? replayRate : facts ? scheduledRate(facts).rps : null,
    schedule_note: scheduleNoteText,
    offered_rate_rps: offered,
    send_window_s: window,
    planned: offsets?.length ?? null,
    sent,
    ...(spec.shard ? { t0_mono_ms: spec.t0Ms ?? null, planned_all: allOffsets?.length ?? null } : {}),
    t_origin_ns: originMs !== null && sent > 0 ? Math.round(originMs * 1e6) : null,
    summary,
    event_loop_lag_ms: loopLagRecord(loop),
    client_memory: clientMemory,
    pacer,
    server,
    client_limited: clientLimited,
    interrupted,
    not_judged: notJudged,
    not_achieved: short,
    ...(windows ? { windows: windows.windows(), interrupted_at_s: interrupted && Number.isFinite(cutMs) ? Number((Math.max(0, cutMs) / 1000).toFixed(3)) : null } : {}),
    gpu: telemetry ? levelGpu(telemetry, summary.output_tokens, summary.window_s) : null,
    counts,
  };
}

/** A level's GPU figures: the telemetry (per GPU and in all) and the energy per output token. */
export function levelGpu(t: GpuTelemetry, outputTokens: number, windowS: number): LevelGpu {
  return { telemetry: t, energy: energyPerToken(t, outputTokens, windowS) };
}
