/**
 * The records `ik merge` writes: one measured `serve_benchmark` record (every level computed once
 * from all rows, its own requests.jsonl and per-level outputs/inputs in canonical order) and one
 * `capacity` record citing it (N*, cost, SLO). Both are built by the same code as an unsharded
 * load run's, from what the reference slice says about the run; the merge adds what only it sees
 * (missing shards, clocks, skew, overlapping levels). A partial merge is `complete: false` and
 * states N* as a lower bound: the nominal level times the share of the schedule that was sent.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { JsonlWriter, newEvidenceId, StagedRun } from "../evidence/mod.ts";
import type { Slo } from "../metrics/mod.ts";
import type { PromptSet } from "../prompts/mod.ts";
import { traceFactsOf } from "../schedule/trace_schedule.ts";
import { buildCapacityRecord, buildLoadRecord, type LoadRecordInput } from "../bench/load_records.ts";
import type { Runner } from "../bench/runner.ts";
import { clockLimitation } from "../shard/slice_record.ts";
import type { Group } from "./consistency.ts";
import { mergeLevels, SKEW_LIMIT_MS } from "./merge_levels.ts";
import { num as numOrNull, obj, type Obj } from "./slices.ts";


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
  const levelKind = d.level_kind === "concurrency" ? "concurrency" : "rate";
  const grid = (levelKind === "concurrency" ? wl.concurrency : wl.rate_rps) as number[];
  const label = String(d.label);

  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(storeRoot, id);
  const journal = await JsonlWriter.open(`${run.dir}/requests.jsonl`);
  const files: { rel: string; role: string }[] = [];
  let merged;
  try {
    merged = await mergeLevels(g, slo, gpuCount, {
      rows: journal,
      open: (role, level) => {
        const rel = `${role}/${label}/load-${level}.jsonl`;
        files.push({ rel, role });
        return JsonlWriter.open(`${run.dir}/${rel}`);
      },
    });
    await journal.close();
    // Exact: the rows' prompts and salts are the schedule's, seq by seq (complete open-loop merges).
    const whole = !g.missing.length && !g.killed.length && !g.interrupted.length && !merged.notStarted.length;
    if (whole && typeof d.picks_hash === "string" && merged.picksHash !== d.picks_hash) {
      throw dataError(ref.dir, `the merged rows' prompts and salts do not match the schedule (picks hash ${merged.picksHash.slice(0, 12)}… != ${d.picks_hash.slice(0, 12)}…)`, "a shard drew other prompts than the schedule: check that every shard ran the same ik build");
    }
  } catch (e) {
    await journal.close().catch(() => {});
    await run.discard();
    throw e;
  }
  const levels = merged.levels;

  const carried = obj(d.carried);
  const profile = obj(d.request_profile);
  const runnerView = {
    asked: profile.asked ?? null,
    cfg: { tokenIds: String(carried.token_ids ?? args.token_ids ?? "auto"), engineKind: String(profile.engine_kind ?? args.engine_kind), api: String(profile.api ?? args.api), model: String(args.model) },
    maxFor: () => 0,
  } as unknown as Runner;
  const absent = g.missing.length > 0 || g.killed.length > 0;
  const interrupted = g.interrupted.length > 0;
  const partial = absent || interrupted;
  const notes: string[] = [];
  const gone = [...g.killed.map((x) => `${x.k}/${S} (killed: only a .staging journal)`), ...g.missing.map((k) => `${k}/${S} (missing)`)];
  notes.push(`merged from ${g.slices.length} of ${S} slice(s) of group ${g.id}${gone.length ? `; PARTIAL: shards ${gone.join(", ")} are not in this record` : ""}`);
  if (partial) {
    notes.push(`PARTIAL: the requests of absent shards and those an interrupted shard never sent (${((1 - merged.presentShare) * 100).toFixed(1)} % of the schedule) were dropped from the offered load: a level an absent shard (or one interrupted before it) did not send has its target rate scaled to the share the others sent, so N* is a lower bound (the nominal level times its share)`);
  }
  const cutLevels = levels.filter((l) => l.interrupted_shards.length);
  if (cutLevels.length) {
    notes.push(`not judged: ${cutLevels.map((l) => `${l.name} (shard ${l.interrupted_shards.join(", ")} interrupted during it)`).join(", ")}: the requests in flight at the interrupt were aborted and dropped, which leaves the rest biased fast, so such a level gets no verdict (as one interrupted process gives none) and N* stops below it`);
  }
  for (const x of g.interrupted) {
    const ab = levels.reduce((a, l) => a + (l.aborted_by_shard[`${x.k}/${S}`] ?? 0), 0);
    notes.push(`shard ${x.k}/${S} was interrupted (complete: false)${ab ? `: its ${ab} aborted request(s) are kept out of the SLO and every percentile, failure-adjusted ones included` : ""}`);
  }
  const noOutput = levels.filter((l) => l.outputs_missing > 0);
  if (noOutput.length) notes.push(`ok requests without their output document (their ITL is missing): ${noOutput.map((l) => `${l.name} ${l.outputs_missing}`).join(", ")}`);
  for (const s of S > 1 ? g.slices : []) {
    const c = clockLimitation(obj(obj(s.data.clock).sync), `shard ${s.k}/${S}`);
    if (c) notes.push(c);
  }
  for (const st of merged.shards) {
    if (st.median_offset_ms !== null && Math.abs(st.median_offset_ms) > SKEW_LIMIT_MS) {
      const pair = merged.shards.length === 2 ? " (with two shards the median of all shards is the earlier of the two, by nearest rank: the check cannot tell which one is off)" : "";
      notes.push(`shard ${st.shard} sent ${st.median_offset_ms > 0 ? "late" : "early"} by ${Math.abs(st.median_offset_ms).toFixed(1)} ms (median) against the median of all shards on the shared wall timetable (> ${SKEW_LIMIT_MS} ms)${pair}: it did not keep the timetable its clock gives (a late start, a stalled client, a clock stepped after the anchor); a host clock that is wrong but steady shows only in the sync state above`);
    }
    if (st.anchor_drift_ms !== null && Math.abs(st.anchor_drift_ms) > SKEW_LIMIT_MS) {
      notes.push(`shard ${st.shard}: its system wall clock moved ${st.anchor_drift_ms.toFixed(1)} ms against its monotonic clock during the run (> ${SKEW_LIMIT_MS} ms): the clock was stepped or slewed; its rows sit on the wall axis of its start`);
    }
  }
  if (d.open_loop === false) {
    // Each shard ran its own N workers: the fleet had (shards that ran) × N in flight.
    const ran = g.slices.length;
    for (const l of levels) (l as { fleet_workers?: number }).fleet_workers = ran * l.level;
    notes.push(`closed loop sharded: each of the ${ran} shard(s) that ran had N workers of its own, so ${levels.map((l) => `${l.name}: ${ran * l.level}`).join(", ")} were in flight fleet-wide (fleet_workers); each shard's prompt pool started afresh, so a prompt may have been sent untagged more than once and found the prefix cache warm`);
  }
  const over = levels.filter((l) => l.overlapping > 0);
  if (over.length) notes.push(`requests still running when the next level started were kept and counted as overlapping: ${over.map((l) => `${l.name} ${l.overlapping}`).join(", ")}`);

  const input: LoadRecordInput = {
    runner: runnerView, set: { name: String(d.prompt_set_name), sha256: String(d.prompt_set_sha256) } as PromptSet, prompts: [],
    label, seed: numOrNull(args.seed) ?? 0, storeRoot, runDir: null, levelKind, grid, closedLoop: d.open_loop === false,
    durationS: numOrNull(args.duration_s) ?? 0, maxRequestsPerLevel: numOrNull(args.max_requests_per_level), requestsPerLevel: numOrNull(args.requests_per_level), burstiness: numOrNull(args.burstiness) ?? 1,
    refRequests: 0, refE2eMs: numOrNull(args.ref_e2e_ms), warmup: 0, slo, sweepAll: true, gpuCount, gpuPriceUsdH: numOrNull(args.gpu_price_usd_h),
    server: { limitations: [...notes, ...((carried.server_limitations as string[]) ?? [])], info: d.server as never },
    gpu: obj(identity.gpu), engine: identity.engine as never, args: { ...args, ...invocation },
    keyNote: typeof carried.key_note === "string" ? carried.key_note : null, isLocal: d.base_url_kind === "local",
    clock: d.clock as never,
    evidenceId: id, run, levels, files, e2eRefMs: numOrNull(d.e2e_ref_ms), referenceE2eMs: [],
    warmupE2eMs: g.slices.flatMap((s) => (s.data.warmup_e2e_ms as number[]) ?? []), needRef: false, salted: merged.salted, interrupted,
    lengthMethods: (obj(d.prompt_lengths).length_methods as Record<string, number> | undefined) ?? null,
    traceFacts: traceFactsOf(d.trace),
  };
  delete (input.args as Obj).shard;
  delete (input.args as Obj).shards;
  const measured = await buildLoadRecord(input);
  const mergeData = {
    group: g.id, shards: S, present: g.slices.map((s) => s.k), missing: g.missing, killed: g.killed.map((x) => x.k), interrupted: g.interrupted.map((x) => x.k),
    present_share: merged.presentShare, not_started: merged.notStarted, schedule_hash: d.schedule_hash ?? null, picks_hash: merged.picksHash, start_at_ms: d.start_at_ms, level_gap_s: d.level_gap_s,
    level_starts_ms: d.level_starts_ms, axis: `shard ${ref.k}/${S}'s monotonic clock (t_*_ns); wall = t / 1e6 + data.clock.anchor.wall_ms - data.clock.anchor.mono_ms`,
    slices: merged.shards,
  };
  Object.assign(measured, {
    // The slices' workload, with the SLO in this build's record form (a slice may predate schema 2).
    identity: { ...obj(measured.identity), workload: { ...wl, slo: obj(obj(measured.identity).workload).slo ?? null } },
    complete: !partial,
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
    Object.assign(rec, { identity: measured.identity, complete: !partial });
    const cd = obj(rec.data);
    Object.assign(cd, { group: g.id, shards: S, schedule_hash: d.schedule_hash ?? null });
    const star = numOrNull(cd[starKey]);
    if (!partial) return;
    // The SLO held at the nominal level with only a share of its load: capacity is at least level × share.
    const at = levels.find((l) => l.level === star);
    const share = at && at.planned !== null && at.planned_all ? at.planned / at.planned_all : merged.presentShare;
    const bound = star === null ? null : star * share;
    // A bound stated is a lower bound, as one process states its own (n_star_lower_bound with the same key for either kind).
    Object.assign(cd, {
      [starKey]: bound, [`${starKey}_nominal`]: star, [`${starKey}_bound`]: star === null ? null : "lower", [`${starKey}_share_sent`]: star === null ? null : share,
      n_star_lower_bound: bound !== null, usd_per_1m_output_tokens_bound: cd.usd_per_1m_output_tokens == null ? null : "upper",
    });
    for (const m of rec.metrics as Obj[]) if (m.name === starKey) Object.assign(m, { value: bound, stat: "lower_bound" });
    const why = [...g.killed.map((x) => `${x.k}/${S} killed`), ...g.missing.map((k) => `${k}/${S} missing`), ...g.interrupted.map((x) => `${x.k}/${S} interrupted`)].join(", ");
    const word = starKey === "n_star" ? "N*" : "max rate";
    const text = String(rec.summary);
    const unit = starKey === "n_star" ? "streams" : "req/s";
    const stated = `${word} >= ${bound?.toFixed(3)} ${unit} (a lower bound: nominal ${star}, ${(share * 100).toFixed(1)} % of its load sent)`;
    // The nominal claim as buildCapacityRecord wrote it: "= N", or ">= N" where N* was already a lower bound (a level not judged above it).
    const nominal = [`${word} = ${star} ${unit}`, `${word} >= ${star} ${unit}`].find((t) => text.includes(t));
    rec.summary = `PARTIAL (${why}): ` + (star === null || nominal === undefined ? text : text.replace(nominal, stated));
    (rec.limitations as string[]).unshift(
      `PARTIAL (${why}): ${star === null ? `no capacity is stated (${String(cd.reason)})` : `the SLO held at nominal ${star} with ${(share * 100).toFixed(1)} % of its load sent, so capacity is at least ${bound?.toFixed(3)} (data.${starKey}; the nominal level is data.${starKey}_nominal)`}; ` +
        (star === null ? "no cost at N* either" : share < 1 ? "the cost at N* was measured at that reduced load, so read it as an upper bound" : "the cost at N* is an upper bound for the same reason (more capacity costs less per token)"),
    );
  });
  return { measured, capacity, dir, partial, starKey };
}
