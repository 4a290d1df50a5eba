/**
 * A shard's slice record (issue 12): kind `serve_benchmark` with `data.shard` K/S, the group id,
 * the timetable, the schedule hash, the clock anchor (start and end) and the host's clock-sync
 * state, its rows and outputs as artifacts. It carries no N*, no cost and no SLO verdict, and no
 * headline metrics: a 1/S sample must not look like a result. `ik merge` makes the result.
 * @module
 */
import { buildLoadRecord, type LoadRecordInput } from "../bench/load_records.ts";
import type { ShardRun } from "./shard_run.ts";

/** A host clock-sync estimate above this (ms), or an unsynced clock, is named in the limitations. */
export const CLOCK_ERROR_LIMIT_MS = 5;

/** What the slice adds to a load run's record. */
export interface SliceParts extends ShardRun {
  levelStartsMs: number[];
  scheduleHash: string | null;
  picksHash: string | null;
  anchorEnd: { wall_ms: number; mono_ms: number; wall_vs_date_ms: number };
  planned: { name: string; level: number; rate_rps: number; n: number }[] | null;
}

/** The limitation a host's clock-sync state calls for, or null when it claims ≤ 5 ms. */
export function clockLimitation(sync: Record<string, unknown> | undefined, who: string): string | null {
  if (!sync || sync.source !== "adjtimex") {
    return `${who}: the host's clock-sync state could not be read (${String(sync?.reason ?? "no adjtimex")}): its wall clock is unbounded, so its place on the shared timetable is unchecked`;
  }
  const est = typeof sync.est_error_ms === "number" ? sync.est_error_ms : null;
  if (sync.unsynced === true) return `${who}: the host's kernel reports its clock as not synchronised (${String(sync.state_name)}${est !== null ? `, estimated error ${est.toFixed(3)} ms` : ""}): its rows' place on the shared wall axis is unbounded`;
  if (est !== null && est > CLOCK_ERROR_LIMIT_MS) return `${who}: the host's clock claims an estimated error of ${est.toFixed(3)} ms (> ${CLOCK_ERROR_LIMIT_MS} ms): its rows' place on the shared wall axis is that uncertain`;
  return null;
}

const VERDICT_FIELDS = ["slo_checks", "slo_ok", "goodput_rps"] as const;

/** Builds the slice record (written into the run's directory by the caller). */
export async function buildSliceRecord(x: LoadRecordInput, parts: SliceParts): Promise<Record<string, unknown>> {
  const rec = await buildLoadRecord({ ...x, runDir: null });
  const { spec } = parts;
  const tag = `${spec.k}/${spec.s}`;
  const data = rec.data as Record<string, unknown>;
  const levels = (data.levels as Record<string, unknown>[]).map((l) => {
    const summary = { ...(l.summary as Record<string, unknown>) };
    for (const f of VERDICT_FIELDS) delete summary[f];
    return { ...l, summary };
  });
  const sent = x.levels.reduce((a, l) => a + l.sent, 0);
  const all = parts.planned?.reduce((a, l) => a + l.n, 0) ?? null;
  const limitations = [
    `SLICE ${tag} of group ${parts.groupId}: a 1/${spec.s} sample of the load, not a result; no N*, cost or SLO verdict here: run ik merge over every shard's slice`,
    ...(rec.limitations as string[]),
  ];
  if (x.closedLoop) limitations.splice(1, 0, `closed loop sharded: every shard runs N workers of its own, so ${spec.s} x N are in flight fleet-wide; no global schedule (no hash, no equality claim); each level's prompt pool starts afresh on every shard, so a prompt may be sent untagged more than once and find the prefix cache warm`);
  // One shard alone shares no axis with another host: its clock's sync state bounds nothing here.
  const clock = spec.s > 1 ? clockLimitation(x.clock?.sync, `shard ${tag}`) : null;
  if (clock) limitations.splice(1, 0, clock);
  return {
    ...rec,
    summary: `slice ${tag} of group ${parts.groupId} (${x.label} ${x.runner.cfg.model}): ${sent}${all !== null ? ` of the schedule's ${all}` : ""} request(s) sent over ${x.levels.length} level(s)${x.interrupted ? "; INTERRUPTED" : ""}; merge the group with ik merge`,
    metrics: [],
    limitations,
    data: {
      ...data,
      levels,
      slice: true,
      carried: { server_limitations: x.server.limitations, key_note: x.keyNote, token_ids: x.runner.cfg.tokenIds },
      shard: { k: spec.k, s: spec.s, source: spec.source, read: spec.read },
      group: { id: parts.groupId, source: parts.groupSource },
      start_at_ms: parts.startAtMs,
      level_gap_s: parts.levelGapS,
      level_starts_ms: parts.levelStartsMs,
      schedule_hash: parts.scheduleHash,
      picks_hash: parts.picksHash,
      schedule: parts.planned,
      clock: { ...(x.clock ?? {}), anchor_end: parts.anchorEnd },
      definitions: {
        ...(data.definitions as Record<string, unknown>),
        slice: "seq numbers a level's requests in the one schedule every shard computes; this shard sent those with seq mod S = K",
        schedule_hash: "sha256 of one line per planned request: level, seq, offset_ms (shortest round trip), prompt id, salt",
        picks_hash: "sha256 of one line per planned request: level, seq, prompt id, salt (a merge recomputes it from the rows)",
        level_starts_ms: "wall-clock start of each level: start_at + the earlier levels' duration_s (with --requests N: the span of their N arrivals) + j x level_gap_s",
      },
    },
  };
}
