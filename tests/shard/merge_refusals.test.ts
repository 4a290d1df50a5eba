/**
 * Every refusal of `ik merge` through dist/ik (exit 65, one line naming the first difference):
 * slices of one short `--shard 0/1` run against `ik mock`, split by seq into three slices, each
 * case changing one thing in one slice (artifacts re-hashed, so the integrity check passes and the
 * merge's own rule must catch it). Bun only: about 15 s.
 */
import assert from "node:assert/strict";
import { appendFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { runIk } from "../_helpers/ik.ts";
import { jsonl, merge, type Obj, oneSliceRun, splitSlice } from "./_sharded.ts";

const skip = runtime.name !== "bun" ? "end-to-end merge tests run under Bun only" : false;
let dir = "";
let env: Record<string, string> = {};
let run: Awaited<ReturnType<typeof oneSliceRun>> | undefined;
let sliceDir = "";
let n = 0;

const args = (r: Obj) => (r.request as Obj).args as Obj;
const data = (r: Obj) => r.data as Obj;

/** Splits the run into 3 slices with `edit` applied to shard 1, merges them, and returns the run. */
async function mergeEdited(edit: (rec: Obj, dir: string) => void | Promise<void>, extra: string[] = [], take = (d: string[]) => d) {
  const root = join(dir, `case-${n++}`);
  const dirs = await splitSlice(sliceDir, 3, root, async (rec, k, d) => {
    if (k === 1) await edit(rec, d);
  });
  return merge(take(dirs), env, join(root, "merged"), extra);
}

describe("ik merge refusals", { skip }, () => {
  before(async () => {
    run = await oneSliceRun("ik-merge-");
    ({ dir, env, sliceDir } = run);
  });
  after(() => run?.close());

  test("the unedited split merges (exit 0): every refusal below is the edit's doing", async () => {
    const r = await mergeEdited(() => {});
    assert.equal(r.code, 0, r.stderr);
  });

  const cases: [string, (rec: Obj) => void, RegExp][] = [
    ["a different group id", (r) => ((data(r).group as Obj).id = "another-run"), /different group ids: '\d+' .* and 'another-run'/],
    ["a different schedule hash", (r) => (data(r).schedule_hash = "0".repeat(64)), /different schedule hash: "0000/],
    ["a different request set", (r) => (((r.identity as Obj).workload as Obj).request_set = { sha256: "x" }), /different request set/],
    ["a different seed", (r) => (args(r).seed = 7), /different seed: 7 here, 0 in shard 0\/3/],
    ["a different grid", (r) => (args(r).rates = [20, 40]), /different grid/],
    ["a different SLO", (r) => (args(r).slo_ttft_p95_ms = 250), /different SLO/],
    ["a different model", (r) => (args(r).model = "other-model"), /different model: "other-model"/],
    ["a different gpu count", (r) => (args(r).gpu_count = 8), /different gpu count: 8/],
    ["a different gpu price", (r) => (args(r).gpu_price_usd_h = 2.5), /different gpu price: 2.5/],
    ["a different timeout", (r) => (args(r).timeout_s = 5), /different timeouts/],
    ["a different gap", (r) => (data(r).level_gap_s = 2), /different level gap: 2/],
    ["a different start-at", (r) => (data(r).start_at_ms = (data(r).start_at_ms as number) + 1), /different --start-at/],
    ["a different ik version", (r) => ((r.tool as Obj).version = "0.0.1"), /different ik version: "0\.0\.1/],
    ["a different endpoint", (r) => (args(r).base_url = "hmac-sha256:" + "1".repeat(64)), /different endpoint/],
    ["a duplicate K", (r) => ((data(r).shard as Obj).k = 0), /shard 0\/3 appears twice/],
    ["an out-of-range K", (r) => ((data(r).shard as Obj).k = 3), /shard index 3 is out of range 0\.\.2/],
    ["a slice of another S", (r) => ((data(r).shard as Obj).s = 4), /shard 1\/4 is one of 4 shards/],
  ];
  for (const [what, edit, re] of cases) {
    test(`refuses ${what} (65)`, async () => {
      const r = await mergeEdited(edit);
      assert.equal(r.code, 65, `${r.stderr}${r.stdout}`);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    });
  }

  test("refuses a seq seen twice, and a seq on a shard other than seq mod S", async () => {
    const twice = await mergeEdited(async (_rec, d) => {
      const rows = await readFile(join(d, "requests.jsonl"), "utf8");
      await appendFile(join(d, "requests.jsonl"), rows.split("\n")[0] + "\n");
    });
    assert.equal(twice.code, 65);
    assert.match(twice.stderr, /seq \d+ of level r20 is seen twice/);
    const wrong = await mergeEdited(async (_rec, d) => {
      const rows = jsonl(await readFile(join(d, "requests.jsonl"), "utf8"));
      rows[0].seq = (rows[0].seq as number) + 1;
      await writeFile(join(d, "requests.jsonl"), rows.map((x) => JSON.stringify(x) + "\n").join(""));
    });
    assert.equal(wrong.code, 65);
    assert.match(wrong.stderr, /seq \d+ of level r20 is on shard 1\/3, but seq mod 3 = 2/);
  });

  test("refuses a changed artifact (integrity) and a missing shard; --allow-partial takes the missing one", async () => {
    const root = join(dir, "integrity");
    const dirs = await splitSlice(sliceDir, 3, root);
    await appendFile(join(dirs[2], "requests.jsonl"), "{}\n");
    const bad = await merge(dirs, env, join(root, "m"));
    assert.equal(bad.code, 65);
    assert.match(bad.stderr, /requests\.jsonl' \(requests\) changed: sha256/);
    const missing = await mergeEdited(() => {}, [], (d) => [d[0], d[2]]);
    assert.equal(missing.code, 65);
    assert.match(missing.stderr, /shard 1\/3 is missing \(1 of 3 missing: 1\)/);
    const partial = await mergeEdited(() => {}, ["--allow-partial"], (d) => [d[0], d[2]]);
    assert.equal(partial.code, 0, partial.stderr);
    const cap = JSON.parse(partial.stdout);
    assert.equal(cap.complete, false);
    assert.equal(cap.data.rate_star_rps_bound, "lower");
    assert.equal(cap.data.rate_star_rps_nominal, 30);
    assert.ok(cap.data.rate_star_rps < 30 * 0.7 && cap.data.rate_star_rps > 30 * 0.6, String(cap.data.rate_star_rps));
    // ik report of the merged record: PARTIAL, the lower bound, and one row per shard present.
    const store = join(dir, `case-${n - 1}`, "merged");
    const rep = await runIk(["report", cap.data.measurement], { env: { ...env, IK_RUNS_DIR: store }, timeoutMs: 30_000 });
    assert.equal(rep.code, 0, rep.stderr);
    assert.match(rep.stdout, /PARTIAL: serve_benchmark-\S+ merges 2 of 3 shards \(absent: 1; interrupted: none\); N\\?\* is a lower bound/);
    assert.match(rep.stdout, /### Shards \(group \d+, 3 shards\)/);
    assert.match(rep.stdout, /\| 0\/3 \| \d+ \|/);
    assert.match(rep.stdout, /\| 2\/3 \| \d+ \|/);
    // A partial merge's N* is a lower bound: the report reads "≥" before it.
    assert.match(rep.stdout, new RegExp(`N\\\\\\*:\\*\\* ≥ ${String(cap.data.rate_star_rps).slice(0, 4)}`));
  });

  test("a second process's staging journal for a shard that also finished is refused as sent twice; the record's own leftover is not", async () => {
    const root = join(dir, "dup-staging");
    const dirs = await splitSlice(sliceDir, 3, root);
    const rec1 = JSON.parse(await readFile(join(dirs[1], "evidence.json"), "utf8"));
    const group = ((rec1.data as Obj).group as Obj).id as string;
    const note = (id: string) => JSON.stringify({ evidence_id: id, group_id: group, shard: "1/3", k: 1, s: 3, start_at_ms: 0 }) + "\n";
    // Another process ran --shard 1/3 too and was killed: the server got shard 1's requests twice.
    const other = join(root, ".staging", "serve_benchmark-20260101T000000Z-0000dup1");
    await mkdir(other, { recursive: true });
    await writeFile(join(other, "shard.json"), note("serve_benchmark-20260101T000000Z-0000dup1"));
    const twice = await merge([root], env, join(root, "m1"));
    assert.equal(twice.code, 65, twice.stderr);
    assert.match(twice.stderr, /shard 1\/3 appears twice \(also /);
    // The finished record's own staging leftover (same evidence id) is no second process.
    await rm(other, { recursive: true });
    const own = join(root, ".staging", rec1.evidence_id);
    await mkdir(own, { recursive: true });
    await writeFile(join(own, "shard.json"), note(rec1.evidence_id));
    const ok = await merge([root], env, join(root, "m2"));
    assert.equal(ok.code, 0, ok.stderr);
  });

  test("a directory with no slice, and a record that is not a slice, are refused (65); a store with two runs needs --group", async () => {
    const none = await runIk(["merge"], { env, timeoutMs: 30_000 });
    assert.equal(none.code, 64);
    assert.match(none.stderr, /^ik: merge: needs at least one DIR/);
    const empty = join(dir, "empty");
    await mkdir(empty, { recursive: true });
    const r = await merge([empty], env, join(dir, "m-empty"));
    assert.equal(r.code, 65);
    assert.match(r.stderr, /holds no slice record/);
    const two = join(dir, "two");
    await splitSlice(sliceDir, 2, two);
    await splitSlice(sliceDir, 2, two, (rec) => void ((data(rec).group as Obj).id = "second-run"));
    const both = await merge([two], env, join(dir, "m-two"));
    assert.equal(both.code, 65);
    assert.match(both.stderr, /different group ids/);
    // A finished shard whose evidence.json was damaged is said to be damaged (not "killed, left a staging journal").
    const torn = join(dir, "torn");
    const tornDirs = await splitSlice(sliceDir, 2, torn);
    await writeFile(join(tornDirs[1], "shard.json"), JSON.stringify({ k: 1, s: 2, group_id: "g", evidence_id: "x" }));
    await writeFile(join(tornDirs[1], "evidence.json"), "{ not json");
    const damaged = await merge([torn], env, join(dir, "m-torn"));
    assert.equal(damaged.code, 65, damaged.stderr);
    assert.match(damaged.stderr, /evidence\.json: not valid JSON; the record is damaged/);
    assert.doesNotMatch(damaged.stderr, /staging journal/);
    // A --group no slice has is a usage error naming the groups found.
    const nope = await merge([two], env, join(dir, "m-nope"), ["--group", "nope"]);
    assert.equal(nope.code, 64, nope.stderr);
    assert.match(nope.stderr, /^ik: --group: no slice of group 'nope' here \(found: .*second-run.*\); give one of the groups found/m);
    const picked = await merge([two], env, join(dir, "m-two"), ["--group", "second-run"]);
    assert.equal(picked.code, 0, picked.stderr);
    const notSlice = await merge([join(dir, "m-two", JSON.parse(picked.stdout).data.measurement)], env, join(dir, "m-x"));
    assert.equal(notSlice.code, 65);
    assert.match(notSlice.stderr, /not a slice record \(kind serve_benchmark, no data\.slice\)/);
  });

  test("rows whose prompts or salts differ from the schedule are refused (picks hash), though every other field agrees", async () => {
    const r = await mergeEdited(async (_rec, d) => {
      const rows = jsonl(await readFile(join(d, "requests.jsonl"), "utf8"));
      rows[rows.length - 1].salt = "ik-s0-r30-999";
      await writeFile(join(d, "requests.jsonl"), rows.map((x) => JSON.stringify(x) + "\n").join(""));
    });
    assert.equal(r.code, 65, r.stderr);
    assert.match(r.stderr, /the merged rows' prompts and salts do not match the schedule \(picks hash/);
  });

  test("a shard whose system clock moved during the run is named (anchor drift)", async () => {
    const root = join(dir, "drift");
    const dirs = await splitSlice(sliceDir, 3, root, (rec, k) => {
      // The real run's own drift (a host whose clock is slewed can show a few ms) is set to none, so
      // shard 2's 20 ms is the only movement.
      const c = data(rec).clock as { anchor: Obj; anchor_end: Obj };
      c.anchor_end.wall_vs_date_ms = (c.anchor.wall_vs_date_ms as number) + (k === 2 ? 20 : 0);
    });
    const r = await merge(dirs, env, join(root, "m"));
    assert.equal(r.code, 0, r.stderr);
    const measured = JSON.parse(await readFile(join(root, "m", JSON.parse(r.stdout).data.measurement, "evidence.json"), "utf8"));
    const lines = measured.limitations.filter((l: string) => /wall clock moved/.test(l));
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0], /^shard 2\/3: its system wall clock moved 20\.0 ms/);
  });

  test("every shard interrupted before the last level: that level is not started (not an SLO failure); N* a lower bound", async () => {
    const root = join(dir, "unstarted");
    const dirs = await splitSlice(sliceDir, 3, root, async (rec, _k, d) => {
      rec.complete = false;
      data(rec).levels = (data(rec).levels as Obj[]).slice(0, 1);
      const rows = jsonl(await readFile(join(d, "requests.jsonl"), "utf8")).filter((x) => x.level === "r20");
      await writeFile(join(d, "requests.jsonl"), rows.map((x) => JSON.stringify(x) + "\n").join(""));
      for (const f of ["outputs", "inputs"]) await writeFile(join(d, f, "vllm", "load-r30.jsonl"), "");
    });
    const refused = await merge(dirs, env, join(root, "m"));
    assert.equal(refused.code, 65);
    assert.match(refused.stderr, /shard 0\/3 was interrupted \(complete: false\)/);
    const r = await merge(dirs, env, join(root, "m"), ["--allow-partial"]);
    assert.equal(r.code, 0, r.stderr);
    const cap = JSON.parse(r.stdout);
    const measured = JSON.parse(await readFile(join(root, "m", cap.data.measurement, "evidence.json"), "utf8"));
    assert.deepEqual(measured.data.levels.map((l: Obj) => l.name), ["r20"]);
    assert.deepEqual(measured.data.merge.not_started, ["r30"]);
    assert.match(measured.limitations.join("\n"), /levels not started: 30/);
    assert.equal(cap.data.rate_star_rps_nominal, 20, "r30 is not scored as a failed level");
    assert.equal(cap.data.rate_star_rps_bound, "lower");
  });

  /**
   * Splits the slice in 3 with every row of shard k rewritten by `row` (the source slice's own lag
   * depends on how busy the host was when it ran) and no loop blocked anywhere, then merges them.
   */
  async function mergeLagging(name: string, row: (x: Record<string, unknown>, k: number) => Record<string, unknown>) {
    const root = join(dir, name);
    const dirs = await splitSlice(sliceDir, 3, root, async (rec, k, d) => {
      const rows = jsonl(await readFile(join(d, "requests.jsonl"), "utf8")).map((x) => row(x, k));
      await writeFile(join(d, "requests.jsonl"), rows.map((x) => JSON.stringify(x) + "\n").join(""));
      for (const l of ((rec.data as Record<string, unknown>).levels ?? []) as Record<string, unknown>[]) {
        l.event_loop_lag_ms = { samples: 10, p50Ms: 0.1, p99Ms: 0.5, maxMs: 0.5 };
      }
    });
    const r = await merge(dirs, env, join(root, "m"));
    assert.equal(r.code, 0, r.stderr);
    return { r, measured: JSON.parse(await readFile(join(root, "m", JSON.parse(r.stdout).data.measurement, "evidence.json"), "utf8")) };
  }

  test("a shard whose send lag p99 passed 5 ms raises the client-bottleneck flag and is named", async () => {
    // Shards 0 and 1 quiet, shard 2 at 8 ms; no row says how long the loop thread waited for a CPU
    // (slices from before it was read).
    const { r, measured } = await mergeLagging("lagging", ({ send_cpu_wait_ms: _w, ...x }, k) => ({ ...x, send_lag_ms: k === 2 ? 8 : 0.2 }));
    assert.match(measured.limitations.join("\n"), /the client may have limited these levels: r20 \(shard 2\/3 send lag p99 8\.0 ms > 5 ms\)/);
    assert.doesNotMatch(measured.limitations.join("\n"), /shard [01]\/3 send lag/);
    assert.match(JSON.parse(r.stdout).limitations.join("\n"), /the client may have limited the measurement at .*shard 2\/3/);
  });

  test("a lagging shard whose loop thread waited for a CPU most of the lag: the note says the host caused it", async () => {
    // Shard 2's sends were 8 ms late, 7.5 ms of it waiting for a CPU; the others on time.
    const { measured } = await mergeLagging("lagging-host", (x, k) => ({ ...x, send_lag_ms: k === 2 ? 8 : 0.2, send_cpu_wait_ms: k === 2 ? 7.5 : 0 }));
    assert.match(measured.limitations.join("\n"), /r20 \(shard 2\/3 send lag p99 8\.0 ms > 5 ms \(0\.5 ms less the loop thread's wait for a CPU: the rest was the host/);
    // The merged level's summary takes the rows' waits out too: 0.2 (shards 0, 1) and 0.5 (shard 2).
    const s = measured.data.levels.find((l: { name: string }) => l.name === "r20").summary;
    assert.equal(s.send_lag_ms.p99, 8);
    assert.equal(s.send_lag_without_cpu_wait_ms.p99, 0.5);
  });

  test("--fail-on-slo exits 2 when no level met the SLO", async () => {
    const r = await mergeEdited(() => {}, ["--fail-on-slo"]);
    assert.equal(r.code, 0, r.stderr);
    // The same slices with an SLO nothing meets: every slice edited alike.
    const root = join(dir, "strict");
    const dirs = await splitSlice(sliceDir, 3, root, (rec) => void (args(rec).slo_ttft_p95_ms = 0.001));
    const fail = await merge(dirs, env, join(root, "m"), ["--fail-on-slo"]);
    assert.equal(fail.code, 2, fail.stderr);
    const cap = JSON.parse(fail.stdout);
    assert.equal(cap.data.rate_star_rps, null);
    // The merged records say how the merge was asked (they said fail_on_slo: false).
    const measured = JSON.parse(await readFile(join(root, "m", cap.data.measurement, "evidence.json"), "utf8"));
    assert.equal(measured.request.args.fail_on_slo, true);
  });
});

if (skip) test("ik merge refusals (skipped)", { skip }, () => {});
