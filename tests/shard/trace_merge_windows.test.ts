/**
 * `ik merge` of a sharded replay bins each row by its offset on the schedule, taken on its own
 * shard's clock in whole ns (its t_scheduled_ns less its level's t0_mono_ms) and kept to the µs: a
 * row due at a whole second lands in that second's window, not the one before (the wall-clock
 * level start minus the anchor, ~1.8e12 ms, is 0.1 µs off in floating point). Every row sent is on
 * the windows, aborted ones too, as a run's own windows count them. The clock values are those of
 * two real slices whose merge put whole-second arrivals in the previous window.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { JsonlWriter } from "../../lib/evidence/mod.ts";
import type { Group } from "../../lib/merge/consistency.ts";
import { mergeLevels, scheduleOffsetMs } from "../../lib/merge/merge_levels.ts";
import type { Obj, Slice } from "../../lib/merge/slices.ts";

/** The two slices' clocks: each shard's anchor and its level's t0 on its own monotonic clock. */
const SHARDS = [
  { wall: 1796654581579.6042, mono: 322.002101, t0: 4749.39794921875 },
  { wall: 1796654581568.1553, mono: 284.70129, t0: 4723.5458984375 },
];
const LEVEL_START_WALL_MS = 1796654586007;
/** The trace's offsets (ms): seq i on shard i mod 2. */
const OFFSETS = [0, 474.148, 1000, 1974.148, 2000, 2000, 2000, 2674.148, 3200, 4074.148, 4600, 5374.148];

function row(seq: number, t0: number, aborted: boolean): Obj {
  const due = Math.round((t0 + OFFSETS[seq]) * 1e6);
  const send = due + 700_000, end = send + 40_000_000;
  return {
    id: `mooncake-${seq}`, bucket: "mooncake", salt: null, ok: !aborted, error: aborted ? "interrupted" : null, error_kind: aborted ? "aborted" : null, status: aborted ? 0 : 200,
    ttft_ms: aborted ? null : 22, tpot_ms: aborted ? null : 5, e2e_ms: aborted ? null : 40, n_tokens: aborted ? 0 : 5, token_count_method: "ids",
    send_lag_ms: 0.7, t_scheduled_ns: due, t_send_ns: send, t_end_ns: end, level: "trace", seq, label: "vllm", max_tokens: 5, prompt_tokens: 100,
  };
}

async function slice(root: string, k: number, abortSeq: number | null): Promise<Slice> {
  const c = SHARDS[k];
  const dir = join(root, `s${k}`);
  await mkdir(join(dir, "outputs", "vllm"), { recursive: true });
  const rows = OFFSETS.map((_, seq) => seq).filter((seq) => seq % 2 === k).map((seq) => row(seq, c.t0, seq === abortSeq));
  await writeFile(join(dir, "requests.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  await writeFile(join(dir, "outputs", "vllm", "load-trace.jsonl"), "");
  const data: Obj = {
    level_kind: "rate", trace: { rows: 12, planned_rows: 12, sent_rows: 12, dropped_after_max_duration: 0, time_scale: 1, max_duration_s: null, span_s: 5.4, mean_rate_rps: 11 / 5.4 },
    schedule: [{ name: "trace", level: 2.03704, rate_rps: 2.03704, n: 12 }], level_starts_ms: [LEVEL_START_WALL_MS],
    clock: { anchor: { wall_ms: c.wall, mono_ms: c.mono } },
    levels: [{ name: "trace", level: 2.03704, target_rate_rps: 2.03704, t0_mono_ms: c.t0, planned: 6, sent: 6, interrupted: false }],
  };
  const record: Obj = {
    evidence_id: `serve_benchmark-x-${k}`, complete: true, identity: { workload: { rate_rps: [2.03704] } },
    artifacts: [{ path: "requests.jsonl", role: "requests" }, { path: "outputs/vllm/load-trace.jsonl", role: "outputs" }],
  };
  return { dir, record, data, k, s: 2, group: "g" };
}

test("scheduleOffsetMs: a row due at a whole second is that second on the schedule, to the µs", () => {
  const t0 = SHARDS[0].t0;
  assert.equal(scheduleOffsetMs(Math.round((t0 + 1000) * 1e6), t0), 1000);
  assert.equal(scheduleOffsetMs(Math.round((t0 + 474.148) * 1e6), t0), 474.148);
  // What the wall-clock start gives instead: just under 1000 ms, floored into window 0.
  const levelStartMono = LEVEL_START_WALL_MS - (SHARDS[0].wall - SHARDS[0].mono);
  assert.ok(Math.round((t0 + 1000) * 1e6) / 1e6 - levelStartMono < 1000, "the old axis is short of the whole second");
});

test("mergeLevels: a sharded replay's windows hold the trace's counts per second, aborted rows on them too", async () => {
  const root = await mkdtemp(join(tmpdir(), "ik-trace-merge-"));
  try {
    const slices = [await slice(root, 0, null), await slice(root, 1, 11)];
    const g: Group = { id: "g", s: 2, slices, ref: slices[0], missing: [], killed: [], interrupted: [] };
    const rows = await JsonlWriter.open(join(root, "merged.jsonl"));
    const open = (role: string, level: string) => JsonlWriter.open(join(root, `${role}-${level}.jsonl`));
    const merged = await mergeLevels(g, {}, 1, { rows, open });
    await rows.close();
    const lv = merged.levels[0];
    const trace = lv.windows?.map((w) => w.trace_rps);
    const due = [0, 0, 0, 0, 0, 0];
    for (const off of OFFSETS) due[Math.floor(off / 1000)]++;
    assert.deepEqual(trace, due, "seq 2 (1000 ms) and seqs 4-6 (2000 ms) in their own seconds; seq 11, aborted, in window 5");
    assert.deepEqual(lv.windows?.map((w) => w.ok), [2, 2, 4, 1, 2, 0], "the aborted row is due, sent and not ok");
    assert.equal(lv.aborted, 1);
    assert.equal(lv.summary.n_requests, 11, "aborted rows stay out of the statistics");
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
