/**
 * The merged levels of a sharded run, one level at a time: every slice's rows on one clock (the
 * reference shard's monotonic frame, which its anchor ties to the wall clock; another shard's rows
 * are moved by the difference of the two anchors, in whole ns), each seq checked (once, on the
 * shard seq mod S, inside the schedule), ITL streamed from the per-level outputs files, and the
 * rows accumulated and written in the canonical (level, seq) order, so the numbers depend on the
 * requests, not on how they were split. Only one level's rows are held at a time; outputs and
 * inputs are streamed through.
 *
 * Per shard it also measures the send lag against the shared wall timetable, its offset from the
 * other shards, and how far its wall clock moved against its monotonic clock during the run.
 * Aborted rows (an interrupted shard's) are counted, never accumulated.
 * @module
 */
import type { ClientMemoryRecord } from "../executors/client_memory.ts";
import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { dataError } from "../cli/errors.ts";
import type { Artifact, JsonlWriter } from "../evidence/mod.ts";
import { loopBlockNoteOfRecord, loopLagFromRecord, type LoopLagRecord } from "../executors/mod.ts";
import { Column, LevelAccumulator, percentiles, type Percentiles, sendLagWithoutCpuWait, type Slo } from "../metrics/mod.ts";
import { CountTally } from "../bench/count_limitations.ts";
import { LOOP_BLOCK_LIMIT_MS, type LevelResult, SEND_LAG_LIMIT_MS, sendLagNote } from "../bench/load_level.ts";
import { levelName } from "../bench/serve_load.ts";
import { ScheduleWindows } from "../metrics/windows.ts";
import type { GpuTelemetry } from "../gpu/mod.ts";
import { levelGpu } from "../bench/load_level.ts";
import { PicksHasher } from "../shard/schedule.ts";
import type { Group } from "./consistency.ts";
import { num, obj, type Obj, type Slice } from "./slices.ts";
import { ownedCount } from "../shard/shard_spec.ts";
import { capOf, DueSpan, plannedOf, shardsCutIn, unionNotAchieved } from "./level_verdict.ts";
import { median } from "../stats/mod.ts";

/** A shard whose sends sit this far (ms, median) from the other shards' on the wall timetable is named. */
export const SKEW_LIMIT_MS = 5;

/** A merged level: the load level plus what only a merge sees. */
export interface MergedLevel extends LevelResult {
  /** Requests of this level still running when the next level started. */
  overlapping: number;
  /** Rows of interrupted shards that were aborted (kept out of every statistic), by shard. */
  aborted: number;
  aborted_by_shard: Record<string, number>;
  /** Requests in the schedule (every shard). */
  planned_all: number | null;
  /** Ok rows whose output document was missing (their ITL is not in itl_ms). */
  outputs_missing: number;
  /** Each shard's own verdict on its sub-schedule ("shard K/S: …"), detail only: `not_achieved` is the union's. */
  not_achieved_by_shard: string | null;
  /** Shards interrupted during this level (the level is then not judged). */
  interrupted_shards: string[];
}

/** One shard, as the merge saw it. */
export interface ShardStats {
  shard: string;
  evidence_id: string;
  complete: boolean;
  sent: number;
  /** Its own send lag (sent − due on its clock). */
  send_lag_ms: Percentiles;
  /** Send lag against the shared wall timetable (its sends on the merged axis − the timetable). */
  timetable_lag_ms: Percentiles;
  /** Its timetable-lag median minus the median of every shard's. */
  median_offset_ms: number | null;
  /** How far its wall clock (Date.now) moved against its anchor's wall axis during the run. */
  anchor_drift_ms: number | null;
  clock_sync: Obj | null;
}

/** Where the merged rows, outputs and inputs go. */
export interface MergeSink {
  rows: JsonlWriter;
  /** A writer for one level's outputs or inputs (opened when the level is merged). */
  open(role: "outputs" | "inputs", level: string): Promise<JsonlWriter>;
}

/** Everything merged. */
export interface Merged {
  levels: MergedLevel[];
  /** Levels of the grid that no shard started. */
  notStarted: string[];
  shards: ShardStats[];
  /** Requests of the schedule that were sent (or are owned by shards that ran to the end), over all of it. */
  presentShare: number;
  salted: number;
  /** sha256 of every merged row's (level, seq, prompt id, salt) in canonical order. */
  picksHash: string;
}


function anchorOffsetMs(s: Slice): number {
  const a = obj(obj(s.data.clock).anchor);
  const w = num(a.wall_ms), m = num(a.mono_ms);
  if (w === null || m === null) throw dataError(s.dir, "data.clock.anchor has no wall_ms/mono_ms", "the slice was not written by ik bench serve --shard; rerun that shard");
  return w - m;
}

function artifactOf(s: Slice, role: string, name: string | null): Artifact | undefined {
  const arts = (Array.isArray(s.record.artifacts) ? s.record.artifacts : []) as Artifact[];
  return arts.find((x) => x.role === role && (name === null || x.path.endsWith(`/load-${name}.jsonl`)));
}

/** Each JSON object line of a file, streamed (a broken line, e.g. the torn last one of a killed run, is skipped). */
async function* lines(path: string): AsyncGenerator<Obj> {
  const rl = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v)) yield v as Obj;
    } catch { /* skipped */ }
  }
}


/** A slice level's server block in this build's record form: schema 1 slices wrote `startedAtMs`. */
function serverOfRecord(v: unknown): Record<string, unknown> | null {
  if (!v || typeof v !== "object") return null;
  const { startedAtMs, ...rest } = v as Record<string, unknown>;
  return startedAtMs === undefined || "started_at_ms" in rest ? (v as Record<string, unknown>) : { ...rest, started_at_ms: startedAtMs };
}

/**
 * A row's offset on its level's schedule (ms): its due time less its shard's t0, both on the
 * shard's own monotonic clock, in whole ns, then to the µs a replay's offsets are kept at (the row's
 * ns were rounded from t0 + offset, so the difference can be 1 ns short of a whole second).
 */
export function scheduleOffsetMs(tScheduledNs: number, t0MonoMs: number): number {
  return Math.round((tScheduledNs - Math.round(t0MonoMs * 1e6)) / 1e3) / 1e3;
}

/** Merges a checked group level by level, writing rows, outputs and inputs into `sink`. */
export async function mergeLevels(g: Group, slo: Slo, gpuCount: number, sink: MergeSink): Promise<Merged> {
  const ref = g.ref, S = g.s;
  const kind = ref.data.level_kind === "concurrency" ? "concurrency" : "rate";
  const wl = obj(obj(ref.record.identity).workload);
  const grid = (kind === "concurrency" ? wl.concurrency : wl.rate_rps) as number[];
  const refArgs = obj(obj(ref.record.request).args);
  // One process's per-level cap (load_run's levelBounds): --requests N, else --max-requests-per-level (0: none).
  const levelCap = num(refArgs.requests_per_level) || num(refArgs.max_requests_per_level) || null;
  const maxInFlight = num(wl.max_in_flight);
  // A replay's one level is named for what it is, not its mean rate.
  const replay = ref.data.trace !== undefined && ref.data.trace !== null;
  const names = replay ? ["trace"] : grid.map((l) => levelName(kind, l));
  const schedule = Array.isArray(ref.data.schedule) ? (ref.data.schedule as Obj[]) : null;
  const plannedN = new Map<string, number>(schedule ? schedule.map((l) => [String(l.name), Number(l.n)]) : []);
  const starts = (ref.data.level_starts_ms as number[]) ?? [];
  const refOff = anchorOffsetMs(ref);
  const shiftNs = new Map<number, number>(g.slices.map((s) => [s.k, Math.round((anchorOffsetMs(s) - refOff) * 1e6)]));
  const absent = new Set([...g.missing, ...g.killed.map((x) => x.k)]);
  const entriesOf = new Map<number, Map<string, Obj>>(g.slices.map((s) => [s.k, new Map((s.data.levels as Obj[] ?? []).map((l) => [String(l.name), l]))]));
  const lag = new Map<number, { own: Column; table: Column; sent: number }>(g.slices.map((s) => [s.k, { own: new Column(), table: new Column(), sent: 0 }]));
  const picks = new PicksHasher();
  const levels: MergedLevel[] = [];
  const notStarted: string[] = [];
  let plannedPresent = 0, plannedAll = 0, salted = 0;

  for (const [j, name] of names.entries()) {
    const ran = g.slices.filter((s) => entriesOf.get(s.k)?.has(name));
    if (!ran.length) {
      notStarted.push(name);
      continue;
    }
    const n = plannedN.get(name);
    const rows: Obj[] = [];
    const seen = new Set<number>();
    const okSeqs = new Set<number>();
    const abortedBy: Record<string, number> = {};
    const sentBy = new Map<number, number>();
    const levelLag = new Map<number, Column>();
    const levelLagLessWait = new Map<number, Column>();
    const dueAt = new Map<Obj, number>();
    const due = new DueSpan();
    // The schedule's origin on the merged clock: every shard's level starts at the same t0.
    let origin: number | null = null;
    for (const s of g.slices) {
      const journal = artifactOf(s, "requests", null);
      if (!journal) throw dataError(s.dir, "the slice lists no requests artifact", "the slice is damaged; rerun that shard");
      const where = `${s.dir}/${journal.path}`;
      const shift = shiftNs.get(s.k) as number;
      const st = lag.get(s.k) as { own: Column; table: Column; sent: number };
      const t0 = num(entriesOf.get(s.k)?.get(name)?.t0_mono_ms);
      if (origin === null && t0 !== null) origin = Math.round(t0 * 1e6) + shift;
      let sent = 0;
      const mine = new Column();
      levelLag.set(s.k, mine);
      // Its send lag less each row's wait for a CPU (rows that carry one), for its client-limited note.
      const mineLessWait = new Column();
      levelLagLessWait.set(s.k, mineLessWait);
      for await (const row of lines(resolve(s.dir, journal.path))) {
        const lv = String(row.level);
        if (!names.includes(lv)) throw dataError(where, `a row of level '${lv}', which is not in the grid ${names.join(", ")}`, "these slices are not one run's");
        if (lv !== name) continue;
        const seq = row.seq;
        if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) throw dataError(where, `a row of level ${name} without a whole seq`, "the slice was not written by ik bench serve --shard; rerun that shard");
        if (seq % S !== s.k) throw dataError(where, `seq ${seq} of level ${name} is on shard ${s.k}/${S}, but seq mod ${S} = ${seq % S}`, "each shard sends only seq mod S = K; these slices were not written by one sharded run");
        if (n !== undefined && seq >= n) throw dataError(where, `seq ${seq} of level ${name} is outside the schedule (${n} requests)`, "these slices were not written by one sharded run");
        if (seen.has(seq)) throw dataError(where, `seq ${seq} of level ${name} is seen twice`, "a shard's journal was copied, or two processes sent one shard; merge only one of them");
        seen.add(seq);
        const moved: Obj = { ...row, t_send_ns: (row.t_send_ns as number) + shift, t_end_ns: (row.t_end_ns as number) + shift };
        if (typeof row.t_scheduled_ns === "number") moved.t_scheduled_ns = row.t_scheduled_ns + shift;
        // A replay's offset on the schedule, from the shard's own t0 on its own clock (whole ns, no wall-clock ms in it).
        const offset = t0 !== null && typeof row.t_scheduled_ns === "number" ? scheduleOffsetMs(row.t_scheduled_ns, t0) : null;
        if (offset !== null) due.add(offset);
        if (replay && offset !== null) dueAt.set(moved, offset);
        rows.push(moved);
        sent++;
        st.sent++;
        if (row.error_kind === "aborted") abortedBy[`${s.k}/${S}`] = (abortedBy[`${s.k}/${S}`] ?? 0) + 1;
        else if (row.ok === true) okSeqs.add(seq);
        if (typeof row.send_lag_ms === "number") {
          st.own.push(row.send_lag_ms);
          mine.push(row.send_lag_ms);
          const own = sendLagWithoutCpuWait(row);
          if (own !== null) mineLessWait.push(own);
        }
        if (typeof row.t_scheduled_ns === "number" && t0 !== null && starts[j] !== undefined) {
          const due = starts[j] - refOff + (row.t_scheduled_ns / 1e6 - t0);
          st.table.push(((row.t_send_ns as number) + shift) / 1e6 - due);
        }
      }
      sentBy.set(s.k, sent);
    }
    rows.sort((a, b) => (a.seq as number) - (b.seq as number));

    const acc = new LevelAccumulator(slo);
    const counts = new CountTally();
    // A replay's per-second windows, by each row's offset on the schedule; every row sent is on
    // it, aborted ones too (as a run's own windows count them), so an interrupted merge's end where its sends did.
    const windows = replay ? new ScheduleWindows(1) : null;
    let aborted = 0, firstSend = Infinity, lastSend = -Infinity;
    for (const r of rows) {
      sink.rows.write(r);
      picks.add(name, r.seq as number, r.id as string | null, r.salt as string | null);
      firstSend = Math.min(firstSend, r.t_send_ns as number);
      lastSend = Math.max(lastSend, r.t_send_ns as number);
      if (r.salt !== null && r.salt !== undefined) salted++;
      const off = dueAt.get(r);
      if (windows && off !== undefined) {
        windows.schedule(off);
        windows.add(off, typeof r.send_lag_ms === "number" ? r.send_lag_ms : null, r.ok === true);
      }
      if (r.error_kind === "aborted") {
        aborted++;
        continue;
      }
      acc.add(r as never);
      counts.add(r as never, typeof r.max_tokens === "number" ? r.max_tokens : null);
    }
    // ITL from the outputs files, streamed (the ITL column is order-free); only ok rows count, as in a run.
    const outputs = await sink.open("outputs", name), inputs = await sink.open("inputs", name);
    for (const s of g.slices) {
      const shift = shiftNs.get(s.k) as number;
      const out = artifactOf(s, "outputs", name);
      if (!out) {
        if ((sentBy.get(s.k) ?? 0) > 0) throw dataError(s.dir, `level ${name} has rows but no outputs file`, "the slice is damaged; rerun that shard");
        continue;
      }
      for await (const d of lines(resolve(s.dir, out.path))) {
        if (d.level !== name) continue;
        const t = obj(d.timings);
        outputs.write(typeof t.t_send_ns === "number" ? { ...d, timings: { ...t, t_send_ns: t.t_send_ns + shift } } : d);
        const seq = d.seq as number;
        const ev = t.event_ms;
        if (okSeqs.has(seq) && Array.isArray(ev)) {
          okSeqs.delete(seq);
          const gaps = new Float64Array(Math.max(0, ev.length - 1));
          for (let i = 1; i < ev.length; i++) gaps[i - 1] = (ev[i] as number) - (ev[i - 1] as number);
          acc.addItl(gaps);
        }
      }
      const inp = artifactOf(s, "inputs", name);
      if (inp) for await (const d of lines(resolve(s.dir, inp.path))) if (d.level === name) inputs.write(d);
    }
    await outputs.close();
    await inputs.close();
    // The first failed write stops the merge here (exit 74), not after every level.
    await sink.rows.flush();
    if (sink.rows.failed) throw sink.rows.failed;

    const ranKs = new Set(ran.map((s) => s.k));
    let planned: number | null = null, share = 1;
    if (n !== undefined) {
      // The level stands for the seqs of the shards that started it (an interrupted one's too: a level
      // cut short in time keeps its rate); an absent shard, or one interrupted before it, owns none.
      planned = plannedOf(n, S, ranKs);
      share = n > 0 ? planned / n : 1;
      // The share of the schedule sent: shards that ran to the end own their seqs, an interrupted one only what it sent.
      for (let k = 0; k < S; k++) {
        if (absent.has(k)) continue;
        const sl = g.slices.find((x) => x.k === k);
        plannedPresent += sl && g.interrupted.includes(sl) ? (sentBy.get(k) ?? 0) : ownedCount(n, k, S);
      }
      plannedAll += n;
    }
    const entries = ran.map((s) => entriesOf.get(s.k)?.get(name) as Obj);
    const target = num(entries[0]?.target_rate_rps);
    const sent = rows.length;
    const window = sent > 1 ? (lastSend - firstSend) / 1e9 : null;
    const why: string[] = [];
    for (const s of ran) {
      const p99 = percentiles(levelLag.get(s.k) as Column).p99;
      const lessWait = levelLagLessWait.get(s.k) as Column;
      const late = sendLagNote(p99, lessWait.length ? percentiles(lessWait).p99 : null, SEND_LAG_LIMIT_MS);
      if (late !== null) why.push(`shard ${s.k}/${S} ${late}`);
      const blocked = loopBlockNoteOfRecord(loopLagFromRecord(entriesOf.get(s.k)?.get(name)?.event_loop_lag_ms), LOOP_BLOCK_LIMIT_MS);
      if (blocked !== null) why.push(`shard ${s.k}/${S} ${blocked}`);
    }
    const next = starts[j + 1];
    let overlapping = 0;
    if (next !== undefined) {
      const nextNs = (next - refOff) * 1e6;
      for (const r of rows) if ((r.t_end_ns as number) > nextNs) overlapping++;
    }
    // The worst shard's event-loop monitor (the one that blocked longest) stands for the level.
    const lags = entries.map((e) => loopLagFromRecord(e?.event_loop_lag_ms));
    const worst = lags.reduce<LoopLagRecord | null>((a, l) => (a === null || (l.max_ms ?? -1) > (a.max_ms ?? -1) ? l : a), null);
    const shard0 = entriesOf.get(0)?.get(name);
    // Each shard's own verdict on its sub-schedule: detail; the level's is the union's, below.
    const shortBy = ran.flatMap((s) => {
      const e = entriesOf.get(s.k)?.get(name);
      return typeof e?.not_achieved === "string" ? [`shard ${s.k}/${S}: ${e.not_achieved}`] : [];
    });
    // A shard interrupted during the level aborted what it had in flight: no verdict, as one interrupted process gives none.
    const cut = shardsCutIn(ran.map((s) => ({ k: s.k, entry: entriesOf.get(s.k)?.get(name) })), abortedBy, S);
    const notJudged = cut.length ? "interrupted" : sent === 0 ? "nothing sent" : null;
    const levelSummary = acc.summary(gpuCount);
    if (notJudged !== null) levelSummary.slo_ok = null;
    const targetRps = target === null ? null : target * share;
    const offered = window && window > 0 ? (sent - 1) / window : null;
    // Shard 0 sampled the GPUs (as it scraped the server): its telemetry, with the energy per token of the merged level.
    const tel = shard0 && shard0.gpu && typeof shard0.gpu === "object" ? (shard0.gpu as { telemetry?: GpuTelemetry }).telemetry ?? null : null;
    levels.push({
      gpu: tel ? levelGpu(tel, levelSummary.output_tokens, levelSummary.window_s) : null,
      level: grid[j], name,
      target_rate_rps: targetRps,
      // The whole schedule's rate and note, as every shard computed them (null from a slice that predates them).
      scheduled_rate_rps: num(entries[0]?.scheduled_rate_rps),
      schedule_note: typeof entries[0]?.schedule_note === "string" ? entries[0].schedule_note as string : null,
      offered_rate_rps: offered,
      send_window_s: window,
      planned, planned_all: n ?? null, sent,
      t_origin_ns: sent > 0 ? origin : null,
      summary: levelSummary,
      event_loop_lag_ms: worst ?? { samples: 0, p50_ms: null, p99_ms: null, max_ms: null },
      // Each shard is its own process: the largest shard's peaks stand for the level (not a sum).
      client_memory: largestClientMemory(entries.map((e) => e?.client_memory)),
      server: shard0 ? serverOfRecord(shard0.server) : { available: false, note: "shard 0, the only one that scrapes, is absent" },
      client_limited: why.length ? why.join("; ") : null,
      // Decided from the union (its offered rate against the schedule of the rows it sent), as one process decides its own.
      not_achieved: notJudged !== null ? null : unionNotAchieved({
        targetRps, due, offeredRps: offered, clientLimited: why.length ? why.join("; ") : null,
        cap: replay ? planned : capOf(levelCap, S, ranKs), sent, maxInFlight, shardNotes: shortBy,
      }),
      not_achieved_by_shard: shortBy.length ? shortBy.join("; ") : null,
      interrupted: ran.length < g.slices.length || entries.some((e) => e.interrupted === true) || cut.length > 0,
      interrupted_shards: cut.map((k) => `${k}/${S}`),
      // A level an absent shard (or one interrupted before it) did not send is judged at the share
      // that was sent (its target scaled, N* a scaled lower bound); one cut short by an interrupt is not.
      not_judged: notJudged,
      counts, overlapping, aborted, aborted_by_shard: abortedBy, outputs_missing: okSeqs.size,
      ...(windows ? { windows: windows.windows() } : {}),
    });
  }

  const medians = new Map<number, number | null>([...lag].map(([k, st]) => [k, percentiles(st.table).p50]));
  const mid = median([...medians.values()].filter((v): v is number => v !== null));
  const shards: ShardStats[] = g.slices.map((s) => {
    const st = lag.get(s.k) as { own: Column; table: Column; sent: number };
    const m = medians.get(s.k) ?? null;
    const a = obj(obj(s.data.clock).anchor), e = obj(obj(s.data.clock).anchor_end);
    const drift = num(e.wall_vs_date_ms) !== null && num(a.wall_vs_date_ms) !== null ? (e.wall_vs_date_ms as number) - (a.wall_vs_date_ms as number) : null;
    return {
      shard: `${s.k}/${S}`, evidence_id: String(s.record.evidence_id), complete: s.record.complete === true, sent: st.sent,
      send_lag_ms: percentiles(st.own), timetable_lag_ms: percentiles(st.table),
      median_offset_ms: m !== null && mid !== null ? m - mid : null, anchor_drift_ms: drift, clock_sync: (obj(s.data.clock).sync as Obj) ?? null,
    };
  });
  return { levels, notStarted, shards, presentShare: plannedAll > 0 ? plannedPresent / plannedAll : 1, salted, picksHash: picks.digest() };
}

/** The shard whose client held the most (peak RSS) among the merged slices, or null where none recorded it. */
function largestClientMemory(ms: unknown[]): ClientMemoryRecord | null {
  let best: ClientMemoryRecord | null = null;
  for (const m of ms) {
    if (!m || typeof m !== "object") continue;
    const r = m as ClientMemoryRecord;
    if (typeof r.rss_peak_mib !== "number") continue;
    if (best === null || r.rss_peak_mib > (best.rss_peak_mib ?? -1)) best = r;
  }
  return best;
}
