/**
 * The records `ik merge` writes: one measured `serve_benchmark` record (every level computed once
 * from all rows, its own requests.jsonl and per-level outputs/inputs in canonical order) and one
 * `capacity` record citing it (N*, cost, SLO). Both are built by the same code as an unsharded
 * load run's, from what the reference slice says about the run; the merge adds what only it sees
 * (missing shards, clocks, skew, overlapping levels). A partial merge is `complete: false` and
 * states N* as a lower bound: the nominal level times the share of the schedule that was sent.
 * @module
 */
import { JsonlWriter, newEvidenceId, StagedRun } from "../evidence/mod.ts";
import type { Slo } from "../metrics/mod.ts";
import type { PromptSet } from "../prompts/mod.ts";
import { buildCapacityRecord, buildLoadRecord, type LoadRecordInput } from "../bench/load_records.ts";
import type { Runner } from "../bench/runner.ts";
import { clockLimitation } from "../shard/slice_record.ts";
import type { Group } from "./consistency.ts";
import { mergeLevels, SKEW_LIMIT_MS } from "./merge_levels.ts";
import type { Obj } from "./slices.ts";

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});
const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** What a merge wrote. */
export interface MergeOutcome {
  measured: Obj;
  capacity: Obj;
  dir: string;
  partial: boolean;
  /** The rate or concurrency N* key of the capacity record's data. */
  starKey: string;
}

/** Merges a checked group and writes both records into `storeRoot`. */
export async function writeMerged(g: Group, storeRoot: string, invocation: Obj): Promise<MergeOutcome> {
  const ref = g.ref, d = ref.data, S = g.s;
  const args = obj(obj(ref.record.request).args);
  const identity = obj(ref.record.identity);
  const wl = obj(identity.workload);
  const slo: Slo = {
    ttftP95Ms: numOrNull(args.slo_ttft_p95_ms), tpotP95Ms: numOrNull(args.slo_tpot_p95_ms), e2eP95Ms: numOrNull(args.slo_e2e_p95_ms),
    maxFail: numOrNull(args.slo_max_fail) ?? 0,
  };
  const gpuCount = numOrNull(args.gpu_count) ?? 1;
  const merged = await mergeLevels(g, slo, gpuCount);
  const levelKind = d.level_kind === "concurrency" ? "concurrency" : "rate";
  const grid = (levelKind === "concurrency" ? wl.concurrency : wl.rate_rps) as number[];
  const label = String(d.label);

  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(storeRoot, id);
  const journal = await JsonlWriter.open(`${run.dir}/requests.jsonl`);
  const files: { rel: string; role: string }[] = [];
  for (const lv of merged.levels) {
    const b = merged.rows.get(lv.name) as { rows: Obj[]; outputs: Obj[]; inputs: Obj[] };
    for (const r of b.rows) journal.write(r);
    for (const [role, docs] of [["outputs", b.outputs], ["inputs", b.inputs]] as const) {
      const rel = `${role}/${label}/load-${lv.name}.jsonl`;
      const w = await JsonlWriter.open(`${run.dir}/${rel}`);
      for (const doc of docs) w.write(doc);
      await w.close();
      files.push({ rel, role });
    }
  }
  await journal.close();

  const carried = obj(d.carried);
  const profile = obj(d.request_profile);
  const runnerView = {
    asked: profile.asked ?? null,
    cfg: { tokenIds: String(carried.token_ids ?? args.token_ids ?? "auto"), engineKind: String(profile.engine_kind ?? args.engine_kind), api: String(profile.api ?? args.api), model: String(args.model) },
    maxFor: () => 0,
  } as unknown as Runner;
  const partial = g.missing.length > 0 || g.killed.length > 0;
  const interrupted = g.interrupted.length > 0;
  const notes: string[] = [];
  const gone = [...g.killed.map((x) => `${x.k}/${S} (killed: only a .staging journal)`), ...g.missing.map((k) => `${k}/${S} (missing)`)];
  notes.push(`merged from ${g.slices.length} of ${S} slice(s) of group ${g.id}${gone.length ? `; PARTIAL: shards ${gone.join(", ")} are not in this record` : ""}`);
  if (partial) {
    notes.push(`PARTIAL: the absent shards' requests (${((1 - merged.presentShare) * 100).toFixed(1)} % of the schedule) were dropped from the offered load: target rates are scaled to the ${(merged.presentShare * 100).toFixed(1)} % that was sent, so N* is a lower bound stated as the nominal level times that share`);
  }
  for (const x of g.interrupted) {
    const ab = merged.levels.reduce((a, l) => a + l.aborted, 0);
    notes.push(`shard ${x.k}/${S} was interrupted (complete: false)${ab ? `: ${ab} aborted request(s) kept out of the SLO and every percentile, failure-adjusted ones included` : ""}`);
  }
  for (const s of S > 1 ? g.slices : []) {
    const c = clockLimitation(obj(obj(s.data.clock).sync), `shard ${s.k}/${S}`);
    if (c) notes.push(c);
  }
  for (const st of merged.shards) {
    if (st.median_offset_ms !== null && Math.abs(st.median_offset_ms) > SKEW_LIMIT_MS) {
      notes.push(`shard ${st.shard} sent ${st.median_offset_ms > 0 ? "late" : "early"} by ${Math.abs(st.median_offset_ms).toFixed(1)} ms (median) against the other shards on the shared wall timetable (> ${SKEW_LIMIT_MS} ms): its clock or its start is off; its requests were not sent on the schedule the others kept`);
    }
    if (st.anchor_drift_ms !== null && Math.abs(st.anchor_drift_ms) > SKEW_LIMIT_MS) {
      notes.push(`shard ${st.shard}: its wall clock moved ${st.anchor_drift_ms.toFixed(1)} ms against its monotonic clock during the run (> ${SKEW_LIMIT_MS} ms): the clock was stepped or slewed; its rows sit on the wall axis of its start`);
    }
  }
  const over = merged.levels.filter((l) => l.overlapping > 0);
  if (over.length) notes.push(`requests still running when the next level started were kept and counted as overlapping: ${over.map((l) => `${l.name} ${l.overlapping}`).join(", ")}`);

  const input: LoadRecordInput = {
    runner: runnerView, set: { name: String(d.prompt_set_name), sha256: String(d.prompt_set_sha256) } as PromptSet, prompts: [],
    label, seed: numOrNull(args.seed) ?? 0, storeRoot, runDir: null, levelKind, grid, closedLoop: d.open_loop === false,
    durationS: numOrNull(args.duration_s) ?? 0, maxRequestsPerLevel: numOrNull(args.max_requests_per_level), burstiness: numOrNull(args.burstiness) ?? 1,
    refRequests: 0, refE2eMs: numOrNull(args.ref_e2e_ms), warmup: 0, slo, sweepAll: true, gpuCount, gpuPriceUsdH: numOrNull(args.gpu_price_usd_h),
    server: { limitations: [...notes, ...((carried.server_limitations as string[]) ?? [])], info: d.server as never },
    gpu: obj(identity.gpu), engine: identity.engine as never, args: { ...args, ...invocation },
    keyNote: typeof carried.key_note === "string" ? carried.key_note : null, isLocal: d.base_url_kind === "local",
    clock: d.clock as never,
    evidenceId: id, run, levels: merged.levels, files, e2eRefMs: numOrNull(d.e2e_ref_ms), referenceE2eMs: [],
    warmupE2eMs: g.slices.flatMap((s) => (s.data.warmup_e2e_ms as number[]) ?? []), needRef: false, salted: merged.salted, interrupted,
  };
  delete (input.args as Obj).shard;
  delete (input.args as Obj).shards;
  const measured = await buildLoadRecord(input);
  const mergeData = {
    group: g.id, shards: S, present: g.slices.map((s) => s.k), missing: g.missing, killed: g.killed.map((x) => x.k), interrupted: g.interrupted.map((x) => x.k),
    present_share: merged.presentShare, schedule_hash: d.schedule_hash ?? null, start_at_ms: d.start_at_ms, level_gap_s: d.level_gap_s,
    level_starts_ms: d.level_starts_ms, axis: `shard ${ref.k}/${S}'s monotonic clock (t_*_ns); wall = t / 1e6 + data.clock.anchor.wall_ms - data.clock.anchor.mono_ms`,
    slices: merged.shards,
  };
  Object.assign(measured, {
    identity: { ...obj(measured.identity), workload: wl },
    complete: !partial && !interrupted,
  });
  const md = obj(measured.data);
  delete md.slice;
  delete md.shard;
  delete md.group;
  delete md.carried;
  Object.assign(md, { merged: true, merge: mergeData });
  (md.definitions as Obj).overlapping = "requests of a level whose end came after the next level's start on the shared timetable";
  (md.definitions as Obj).timetable_lag_ms = "a shard's send on the merged wall axis minus its due time on the shared timetable (start_at + level offsets)";
  const dir = await run.finish(measured);
  const starKey = levelKind === "concurrency" ? "n_star" : "rate_star_rps";
  const capacity = await buildCapacityRecord(input, measured, storeRoot, (rec) => {
    Object.assign(rec, { identity: measured.identity, complete: !partial && !interrupted });
    const cd = obj(rec.data);
    cd.group = g.id;
    cd.shards = S;
    const star = numOrNull(cd[starKey]);
    if (partial || interrupted) {
      cd[`${starKey}_bound`] = "lower";
      cd[`${starKey}_lower_bound`] = star === null ? null : star * merged.presentShare;
      (rec.limitations as string[]).unshift(
        `PARTIAL (${gone.length ? `shards ${gone.join(", ")} absent` : "an interrupted shard"}): ${star === null ? "no level met the SLO with the load that was sent" : `the SLO held at nominal ${star} with ${(merged.presentShare * 100).toFixed(1)} % of its load sent, so capacity is at least ${(star * merged.presentShare).toFixed(3)}; read N* as that lower bound`}`,
      );
    }
  });
  return { measured, capacity, dir, partial: partial || interrupted, starKey };
}
