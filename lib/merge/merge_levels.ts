/**
 * The merged levels of a sharded run: every slice's rows on one clock (the reference shard's
 * monotonic frame, which its anchor ties to the wall clock; another shard's rows are moved by the
 * difference of the two anchors, in whole ns), each seq checked (once, on the shard seq mod S,
 * inside the schedule), ITL from the per-level outputs files, and every level accumulated in the
 * canonical (level, seq) order, so the numbers depend on the requests, not on how they were split.
 *
 * Per shard it also measures the send lag against the shared wall timetable and the anchor's
 * drift over the run. Aborted rows (an interrupted shard's) are counted, never accumulated.
 * @module
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { dataError } from "../cli/errors.ts";
import { parseJsonl } from "../compare/record_ref.ts";
import type { Artifact } from "../evidence/mod.ts";
import type { LoopLag } from "../executors/mod.ts";
import { Column, LevelAccumulator, percentiles, type Percentiles, type Slo } from "../metrics/mod.ts";
import { CountTally } from "../bench/count_limitations.ts";
import { LOOP_BLOCK_LIMIT_MS, type LevelResult, SEND_LAG_LIMIT_MS } from "../bench/load_level.ts";
import { levelName } from "../bench/serve_load.ts";
import type { Group } from "./consistency.ts";
import type { Obj, Slice } from "./slices.ts";

/** A shard whose sends sit this far (ms, median) from the other shards' on the wall timetable is named. */
export const SKEW_LIMIT_MS = 5;

/** A merged level: the load level plus what only a merge sees. */
export interface MergedLevel extends LevelResult {
  /** Requests of this level still running when the next level started. */
  overlapping: number;
  /** Rows of interrupted shards that were aborted (kept out of every statistic). */
  aborted: number;
  /** Requests in the schedule (every shard). */
  planned_all: number | null;
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
  /** How far its wall clock moved against its monotonic clock during the run (end anchor − start anchor). */
  anchor_drift_ms: number | null;
  clock_sync: Obj | null;
}

/** Everything merged. */
export interface Merged {
  levels: MergedLevel[];
  /** Per level, the rows in canonical order (times on the merged axis) and each row's output document. */
  rows: Map<string, { rows: Obj[]; outputs: Obj[]; inputs: Obj[] }>;
  shards: ShardStats[];
  /** Requests in the schedule that present, unkilled shards own, over all of it (1 when whole). */
  presentShare: number;
  salted: number;
}

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function anchorOffsetMs(s: Slice, key: "anchor" | "anchor_end" = "anchor"): number {
  const a = obj(obj(s.data.clock)[key]);
  const w = num(a.wall_ms), m = num(a.mono_ms);
  if (w === null || m === null) throw dataError(s.dir, `data.clock.${key} has no wall_ms/mono_ms`, "the slice was not written by ik bench serve --shard");
  return w - m;
}

async function levelFile(s: Slice, role: string, name: string): Promise<Obj[]> {
  const arts = (Array.isArray(s.record.artifacts) ? s.record.artifacts : []) as Artifact[];
  const a = arts.find((x) => x.role === role && x.path.endsWith(`/load-${name}.jsonl`));
  if (!a) return [];
  return parseJsonl(await readFile(resolve(s.dir, a.path), "utf8"));
}

function owned(n: number, k: number, s: number): number {
  return n > k ? Math.ceil((n - k) / s) : 0;
}

/** Merges a checked group's rows into levels. */
export async function mergeLevels(g: Group, slo: Slo, gpuCount: number): Promise<Merged> {
  const ref = g.ref, S = g.s;
  const kind = ref.data.level_kind === "concurrency" ? "concurrency" : "rate";
  const wl = obj(obj(ref.record.identity).workload);
  const grid = (kind === "concurrency" ? wl.concurrency : wl.rate_rps) as number[];
  const names = grid.map((l) => levelName(kind, l));
  const schedule = Array.isArray(ref.data.schedule) ? (ref.data.schedule as Obj[]) : null;
  const plannedN = new Map<string, number>(schedule ? schedule.map((l) => [String(l.name), Number(l.n)]) : []);
  const starts = (ref.data.level_starts_ms as number[]) ?? [];
  const refOff = anchorOffsetMs(ref);
  const shiftNs = new Map<number, number>(g.slices.map((s) => [s.k, Math.round((anchorOffsetMs(s) - refOff) * 1e6)]));
  const present = new Set(g.slices.map((s) => s.k));
  const byLevel = new Map<string, { rows: Obj[]; outputs: Obj[]; inputs: Obj[] }>(names.map((n) => [n, { rows: [], outputs: [], inputs: [] }]));
  const seen = new Map<string, Set<number>>(names.map((n) => [n, new Set()]));
  const shardLag = new Map<number, { own: Column; table: Column; sent: number }>();
  const levelEntries = new Map<number, Map<string, Obj>>();
  for (const s of g.slices) {
    const entries = new Map<string, Obj>((s.data.levels as Obj[] ?? []).map((l) => [String(l.name), l]));
    levelEntries.set(s.k, entries);
    const shift = shiftNs.get(s.k) as number;
    const stats = { own: new Column(), table: new Column(), sent: 0 };
    shardLag.set(s.k, stats);
    const arts = (Array.isArray(s.record.artifacts) ? s.record.artifacts : []) as Artifact[];
    const journal = arts.find((a) => a.role === "requests");
    if (!journal) throw dataError(s.dir, "the slice lists no requests artifact");
    const text = await readFile(resolve(s.dir, journal.path), "utf8");
    for (const row of parseJsonl(text)) {
      const name = String(row.level), seq = row.seq;
      const where = `${s.dir}/${journal.path}`;
      if (!byLevel.has(name)) throw dataError(where, `a row of level '${name}', which is not in the grid ${names.join(", ")}`);
      if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) throw dataError(where, `a row of level ${name} without a whole seq`);
      if (seq % S !== s.k) throw dataError(where, `seq ${seq} of level ${name} is on shard ${s.k}/${S}, but seq mod ${S} = ${seq % S}`, "each shard sends only seq mod S = K; these slices were not written by one sharded run");
      const n = plannedN.get(name);
      if (n !== undefined && seq >= n) throw dataError(where, `seq ${seq} of level ${name} is outside the schedule (${n} requests)`);
      const set = seen.get(name) as Set<number>;
      if (set.has(seq)) throw dataError(where, `seq ${seq} of level ${name} is seen twice`, "a shard's journal was copied or two processes sent one shard");
      set.add(seq);
      const moved: Obj = { ...row, t_send_ns: (row.t_send_ns as number) + shift, t_end_ns: (row.t_end_ns as number) + shift };
      if (typeof row.t_scheduled_ns === "number") moved.t_scheduled_ns = row.t_scheduled_ns + shift;
      byLevel.get(name)?.rows.push(moved);
      stats.sent++;
      if (typeof row.send_lag_ms === "number") stats.own.push(row.send_lag_ms);
      const j = names.indexOf(name), t0 = num(entries.get(name)?.t0_mono_ms);
      if (typeof row.t_scheduled_ns === "number" && t0 !== null && starts[j] !== undefined) {
        const due = starts[j] - refOff + (row.t_scheduled_ns / 1e6 - t0);
        stats.table.push((row.t_send_ns as number + shift) / 1e6 - due);
      }
    }
    for (const name of names) {
      const outs = await levelFile(s, "outputs", name);
      for (const d of outs) {
        const t = obj(d.timings);
        byLevel.get(name)?.outputs.push(typeof t.t_send_ns === "number" ? { ...d, timings: { ...t, t_send_ns: t.t_send_ns + shift } } : d);
      }
      byLevel.get(name)?.inputs.push(...await levelFile(s, "inputs", name));
    }
  }
  let plannedPresent = 0, plannedAll = 0;
  const killedOrMissing = new Set([...g.missing, ...g.killed.map((x) => x.k)]);
  const levels: MergedLevel[] = [];
  let salted = 0;
  for (const [j, name] of names.entries()) {
    const bucket = byLevel.get(name) as { rows: Obj[]; outputs: Obj[]; inputs: Obj[] };
    const bySeq = (a: Obj, b: Obj) => (a.seq as number) - (b.seq as number);
    bucket.rows.sort(bySeq);
    bucket.outputs.sort(bySeq);
    bucket.inputs.sort(bySeq);
    const itl = new Map<number, number[]>();
    for (const d of bucket.outputs) {
      const ev = obj(d.timings).event_ms;
      if (Array.isArray(ev)) {
        const gaps: number[] = [];
        for (let i = 1; i < ev.length; i++) gaps.push((ev[i] as number) - (ev[i - 1] as number));
        itl.set(d.seq as number, gaps);
      }
    }
    const acc = new LevelAccumulator(slo);
    const counts = new CountTally();
    let aborted = 0, firstSend = Infinity, lastSend = -Infinity;
    for (const r of bucket.rows) {
      firstSend = Math.min(firstSend, r.t_send_ns as number);
      lastSend = Math.max(lastSend, r.t_send_ns as number);
      if (r.salt !== null && r.salt !== undefined) salted++;
      if (r.error_kind === "aborted") {
        aborted++;
        continue;
      }
      acc.add(r as never, itl.get(r.seq as number) ?? []);
      counts.add(r as never, typeof r.max_tokens === "number" ? r.max_tokens : null);
    }
    const entries = g.slices.map((s) => levelEntries.get(s.k)?.get(name)).filter((e): e is Obj => e !== undefined);
    const n = plannedN.get(name) ?? null;
    let share = 1;
    let planned: number | null = null;
    if (n !== null) {
      planned = 0;
      for (let k = 0; k < S; k++) if (present.has(k) && !killedOrMissing.has(k)) planned += owned(n, k, S);
      share = n > 0 ? planned / n : 1;
      plannedPresent += planned;
      plannedAll += n;
    }
    const target = num(entries[0]?.target_rate_rps);
    const sent = bucket.rows.length;
    const window = sent > 1 ? (lastSend - firstSend) / 1e9 : null;
    const why: string[] = [];
    for (const s of g.slices) {
      const lv = levelEntries.get(s.k)?.get(name);
      const mine = new Column();
      for (const r of bucket.rows) if (r.shard === `${s.k}/${S}` && typeof r.send_lag_ms === "number") mine.push(r.send_lag_ms);
      const p99 = percentiles(mine).p99;
      if (p99 !== null && p99 > SEND_LAG_LIMIT_MS) why.push(`shard ${s.k}/${S} send lag p99 ${p99.toFixed(1)} ms > ${SEND_LAG_LIMIT_MS} ms`);
      const blocked = num(obj(lv?.event_loop_lag_ms).maxMs);
      if (blocked !== null && blocked > LOOP_BLOCK_LIMIT_MS) why.push(`shard ${s.k}/${S} event loop blocked ${blocked.toFixed(1)} ms > ${LOOP_BLOCK_LIMIT_MS} ms`);
    }
    const next = starts[j + 1];
    let overlapping = 0;
    if (next !== undefined) {
      const nextNs = (next - refOff) * 1e6;
      for (const r of bucket.rows) if ((r.t_end_ns as number) > nextNs) overlapping++;
    }
    // The worst shard's event-loop monitor (the one that blocked longest) stands for the level.
    const lags = entries.map((e) => obj(e.event_loop_lag_ms) as unknown as LoopLag);
    const worst = lags.reduce<LoopLag | null>((a, l) => (a === null || (l.maxMs ?? -1) > (a.maxMs ?? -1) ? l : a), null);
    const shard0 = levelEntries.get(0)?.get(name);
    levels.push({
      level: grid[j], name,
      target_rate_rps: target === null ? null : target * share,
      offered_rate_rps: window && window > 0 ? (sent - 1) / window : null,
      send_window_s: window,
      planned, planned_all: n, sent,
      summary: acc.summary(gpuCount),
      event_loop_lag_ms: worst ?? { samples: 0, p50Ms: null, p99Ms: null, maxMs: null },
      server: shard0 ? (shard0.server as Record<string, unknown> | null) ?? null : { available: false, note: "shard 0, the only one that scrapes, is missing" },
      client_limited: why.length ? why.join("; ") : null,
      interrupted: entries.length < g.slices.length || entries.some((e) => e.interrupted === true),
      counts, overlapping, aborted,
    });
  }
  const medians = new Map<number, number | null>();
  for (const [k, st] of shardLag) medians.set(k, percentiles(st.table).p50);
  const known = [...medians.values()].filter((v): v is number => v !== null).sort((a, b) => a - b);
  const mid = known.length ? (known.length % 2 ? known[(known.length - 1) / 2] : (known[known.length / 2 - 1] + known[known.length / 2]) / 2) : null;
  const shards: ShardStats[] = g.slices.map((s) => {
    const st = shardLag.get(s.k) as { own: Column; table: Column; sent: number };
    const m = medians.get(s.k) ?? null;
    let drift: number | null = null;
    try {
      drift = anchorOffsetMs(s, "anchor_end") - anchorOffsetMs(s);
    } catch { /* an interrupted slice may lack it */ }
    return {
      shard: `${s.k}/${S}`, evidence_id: String(s.record.evidence_id), complete: s.record.complete === true, sent: st.sent,
      send_lag_ms: percentiles(st.own), timetable_lag_ms: percentiles(st.table),
      median_offset_ms: m !== null && mid !== null ? m - mid : null, anchor_drift_ms: drift, clock_sync: (obj(s.data.clock).sync as Obj) ?? null,
    };
  });
  return { levels, rows: byLevel, shards, presentShare: plannedAll > 0 ? plannedPresent / plannedAll : 1, salted };
}
