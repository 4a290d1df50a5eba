/**
 * What a merged level may claim, from synthetic slices merged by `mergeLevels` (no binary): a level
 * during which a shard was interrupted gets no verdict (`not_judged: "interrupted"`, its target the
 * level's rate, not scaled down for what the interrupt kept from being sent), the levels before it
 * keep theirs; an absent shard's level is judged at the share that was sent; and `not_achieved` is
 * the union's offered rate against the union's schedule, never the shards' own verdicts joined.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { JsonlWriter } from "../../lib/evidence/mod.ts";
import type { Group } from "../../lib/merge/consistency.ts";
import { DueSpan, unionNotAchieved } from "../../lib/merge/level_verdict.ts";
import { type Merged, mergeLevels } from "../../lib/merge/merge_levels.ts";
import type { Obj, Slice } from "../../lib/merge/slices.ts";

const S = 2;
const N = 20; // requests per level, every 100 ms: the schedule asks for 19 / 1.9 s = 10 req/s
const GAP_MS = 100;
const LEVELS = [{ name: "r10", t0: 5000 }, { name: "r20", t0: 9000 }];
const ANCHOR = { wall_ms: 1796654581000, mono_ms: 300 };

/** How one shard's rows of one level go. */
interface Plan {
  /** ms added to every send (a shard that kept its own pace but started late). */
  lateMs?: number;
  /** Its rows stop after this many (the interrupt), the last one aborted. */
  cutAfter?: number;
  /** The slice's own verdict on its sub-schedule. */
  note?: string;
}

function row(level: string, seq: number, t0: number, lateMs: number, aborted: boolean): Obj {
  const due = Math.round((t0 + seq * GAP_MS) * 1e6);
  const send = due + 300_000 + Math.round(lateMs * 1e6), end = send + 40_000_000;
  return {
    id: `p-${seq}`, bucket: "b", salt: null, ok: !aborted, error: aborted ? "interrupted" : null, error_kind: aborted ? "aborted" : null, status: aborted ? 0 : 200,
    ttft_ms: aborted ? null : 20, tpot_ms: aborted ? null : 5, e2e_ms: aborted ? null : 40, n_tokens: aborted ? 0 : 5, token_count_method: "ids",
    send_lag_ms: 0.3 + lateMs, t_scheduled_ns: due, t_send_ns: send, t_end_ns: end, level, seq, label: "vllm", max_tokens: 5, prompt_tokens: 100,
  };
}

/** Writes shard k's slice: `plans[level]` says how its rows of that level went (absent: the shard never started it). */
async function slice(root: string, k: number, plans: Record<string, Plan | undefined>): Promise<Slice> {
  const dir = join(root, `s${k}`);
  await mkdir(join(dir, "outputs", "vllm"), { recursive: true });
  const rows: Obj[] = [];
  const entries: Obj[] = [];
  const artifacts: Obj[] = [{ path: "requests.jsonl", role: "requests" }];
  for (const lv of LEVELS) {
    const plan = plans[lv.name];
    if (!plan) continue;
    const mine = Array.from({ length: N }, (_, seq) => seq).filter((seq) => seq % S === k);
    const kept = plan.cutAfter === undefined ? mine : mine.slice(0, plan.cutAfter);
    kept.forEach((seq, i) => rows.push(row(lv.name, seq, lv.t0, plan.lateMs ?? 0, plan.cutAfter !== undefined && i === kept.length - 1)));
    await writeFile(join(dir, "outputs", "vllm", `load-${lv.name}.jsonl`), "");
    artifacts.push({ path: `outputs/vllm/load-${lv.name}.jsonl`, role: "outputs" });
    entries.push({
      name: lv.name, level: Number(lv.name.slice(1)), target_rate_rps: Number(lv.name.slice(1)), t0_mono_ms: lv.t0, planned: mine.length, sent: kept.length,
      interrupted: plan.cutAfter !== undefined, not_judged: plan.cutAfter !== undefined ? "interrupted" : null, not_achieved: plan.note ?? null,
    });
  }
  await writeFile(join(dir, "requests.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const data: Obj = {
    level_kind: "rate", schedule: LEVELS.map((l) => ({ name: l.name, n: N })), level_starts_ms: LEVELS.map((l) => ANCHOR.wall_ms - ANCHOR.mono_ms + l.t0),
    clock: { anchor: ANCHOR }, levels: entries,
  };
  const interrupted = Object.values(plans).some((p) => p?.cutAfter !== undefined) || Object.keys(plans).length < LEVELS.length;
  const record: Obj = { evidence_id: `serve_benchmark-x-${k}`, complete: !interrupted, identity: { workload: { rate_rps: [10, 20] } }, request: { args: {} }, artifacts };
  return { dir, record, data, k, s: S, group: "g" };
}

/** Merges the slices (shards in `missing` absent) with a TTFT SLO every row meets. */
async function mergeOf(plans: Record<string, Plan | undefined>[], missing: number[] = []): Promise<Merged> {
  const root = await mkdtemp(join(tmpdir(), "ik-merge-verdict-"));
  try {
    const slices: Slice[] = [];
    for (let k = 0; k < S; k++) if (!missing.includes(k)) slices.push(await slice(root, k, plans[k]));
    const g: Group = { id: "g", s: S, slices, ref: slices[0], missing, killed: [], interrupted: slices.filter((s) => s.record.complete !== true) };
    const rows = await JsonlWriter.open(join(root, "merged.jsonl"));
    const merged = await mergeLevels(g, { ttftP95Ms: 500, maxFail: 0 }, 1, { rows, open: (role, level) => JsonlWriter.open(join(root, `${role}-${level}.jsonl`)) });
    await rows.close();
    return merged;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const whole: Record<string, Plan> = { r10: {}, r20: {} };

test("a level during which a shard was interrupted is not judged at its own rate; the level before keeps its verdict", async () => {
  const m = await mergeOf([whole, { r10: {}, r20: { cutAfter: 4 } }]);
  const [r10, r20] = m.levels;
  assert.equal(r10.not_judged, null);
  assert.equal(r10.summary.slo_ok, true, "the level the interrupted shard completed keeps its verdict");
  assert.equal(r10.target_rate_rps, 10);
  assert.equal(r20.not_judged, "interrupted");
  assert.equal(r20.summary.slo_ok, null, "no verdict from a level whose in-flight requests were aborted");
  assert.deepEqual(r20.interrupted_shards, ["1/2"]);
  assert.equal(r20.target_rate_rps, 20, "a level cut short in time keeps its rate (not rate x share)");
  assert.equal(r20.planned, N);
  assert.equal(r20.not_achieved, null, "an interrupted level's offered rate judges nothing");
  assert.equal(r20.aborted, 1);
  // present_share still says what was sent: 20 + 10 + 4 of 40.
  assert.equal(m.presentShare, 34 / 40);
});

test("a shard interrupted before a level: that level is judged at the share the others sent, as with an absent shard", async () => {
  const m = await mergeOf([whole, { r10: { cutAfter: 3 } }]);
  const [r10, r20] = m.levels;
  assert.equal(r10.not_judged, "interrupted");
  assert.equal(r20.not_judged, null);
  assert.equal(r20.target_rate_rps, 20 * 10 / N);
  assert.equal(r20.planned, 10);
});

test("an absent shard: every level judged at the share sent (the documented partial rule)", async () => {
  const m = await mergeOf([whole, whole], [1]);
  for (const l of m.levels) {
    assert.equal(l.not_judged, null);
    assert.equal(l.summary.slo_ok, true);
    assert.equal(l.target_rate_rps, l.level * 10 / N);
    assert.equal(l.not_achieved, null, "the present shard sent its own seqs at their pace");
  }
});

test("not_achieved is the union's: a shard that kept its own pace but sent 1.5 s late stretches the fleet's window", async () => {
  // Each shard's own verdict on its sub-schedule: achieved. The union offered 19 / 3.4 s against 10 req/s.
  const m = await mergeOf([whole, { r10: { lateMs: 1500 }, r20: {} }]);
  const [r10, r20] = m.levels;
  assert.match(String(r10.not_achieved), /^offered 5\.59 of the 10\.0 req\/s scheduled \(< 0\.9 x\): the client could not send faster \(shard 1\/2 send lag p99/);
  assert.equal(r10.not_achieved_by_shard, null);
  assert.equal(r20.not_achieved, null);
});

test("not_achieved is the union's: shards that each missed their own sub-schedule do not fail a level the fleet achieved", async () => {
  const note = "offered 4.00 of the 5.00 req/s scheduled (< 0.9 x): the client could not send at this rate";
  const m = await mergeOf([{ r10: { note }, r20: {} }, { r10: { note }, r20: {} }]);
  const [r10] = m.levels;
  assert.equal(r10.not_achieved, null, "the union sent 19 / 1.9 s = the schedule's 10 req/s");
  assert.equal(r10.not_achieved_by_shard, `shard 0/2: ${note}; shard 1/2: ${note}`);
});

test("unionNotAchieved: the union's schedule rate is (n - 1) / span; each shard's note follows as detail", () => {
  const due = new DueSpan();
  for (let i = 0; i < 11; i++) due.add(i * 100);
  assert.equal(due.rate(), 10);
  const base = { targetRps: 10, due, clientLimited: null, cap: null, sent: 11, maxInFlight: null, shardNotes: [] as string[] };
  assert.equal(unionNotAchieved({ ...base, offeredRps: 9 }), null, "0.9 x is achieved");
  assert.match(String(unionNotAchieved({ ...base, offeredRps: 8.9, shardNotes: ["shard 1/2: x"] })), /^offered 8\.90 of the 10\.0 req\/s scheduled .*; by shard: shard 1\/2: x$/);
  assert.match(String(unionNotAchieved({ ...base, offeredRps: 5, cap: 11 })), /--max-requests-per-level 11 let only 11 requests go/);
  const one = new DueSpan();
  one.add(0);
  assert.equal(one.rate(), null);
  assert.match(String(unionNotAchieved({ ...base, targetRps: 4, due: one, offeredRps: 1 })), /^offered 1\.00 of the 4\.00 req\/s scheduled/, "no schedule span: the target stands");
});
