/**
 * Sharded load through dist/ik against one `ik mock` batching simulator (B=4, A=10 ms), issue 12:
 *
 * - one process (`--shard 0/1`) merged, and the same run split by seq after the fact and merged,
 *   give the same records field by field (ids, timestamps, artifact hashes and provenance aside);
 * - a real Slurm step (`srun -n 4 --kill-on-bad-exit=0 --output=…-%t.json … --shard auto`) and an
 *   Indexed-Job simulation (3 processes with JOB_COMPLETION_INDEX started 1 s apart) each merge to
 *   the reference's schedule hash and (level, seq, prompt, salt) multiset, the same rate* with the
 *   SLO at least 30 % from the measured p95s, and the low-load median TTFT within [A, 1.5A + 5];
 * - a shard built with the clock-skew-50ms fault is seen 50 ms early in the mock's own request log
 *   and named by the merge; the others are not;
 * - a SIGKILLed shard (and a SIGTERMed one) are refused, then merged with --allow-partial: the level
 *   the SIGTERMed shard was cut short in is not judged, and N* stops below it as a lower bound.
 *
 * Bun only (CONTRACTS.md CI time): about 100 s.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";
import { ikBin, ROOT, runArgv, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { comparable, jsonl, loadArgs, merge, mergedRecords, type Obj, readSliceDir, runLocalShards, shardEnv, splitSlice, startAt } from "./_sharded.ts";

const skip = runtime.name !== "bun" ? "heavy end-to-end sharded tests run under Bun only" : false;
const A = 10; // simulator step, ms
const SLO_TTFT = 100; // ms: the r4 level sits far below it, r100 (twice the capacity of 50 req/s) far above
const GRID = ["--rates", "4,100", "--duration-s", "3", "--level-gap-s", "1", "--max-tokens", "8", "--slo-ttft-p95-ms", String(SLO_TTFT)];

let dir = "";
let mock: MockProc;
let slowMock: MockProc | undefined;
let env: Record<string, string> = {};
let refSliceDir = "";
let ref: { capacity: Obj; measured: Obj; dir: string };

const levels = (m: Obj) => (m.data as Obj).levels as Obj[];
const summary = (l: Obj) => l.summary as Record<string, { p50: number; p95: number }>;

async function freshStore(name: string): Promise<Record<string, string>> {
  const runs = join(dir, name);
  await mkdir(runs, { recursive: true });
  return { ...env, IK_RUNS_DIR: runs };
}

/** The (level, seq, prompt, salt) multiset of a merged record, from its own rows. */
async function multiset(recDir: string): Promise<string[]> {
  return jsonl(await readFile(join(recDir, "requests.jsonl"), "utf8")).map((r) => `${r.level}\t${r.seq}\t${r.id}\t${r.salt}`).sort();
}

/** What every sharded run must share with the reference process. */
async function checkAgainstReference(got: { capacity: Obj; measured: Obj; dir: string }, s: number) {
  const gm = (got.measured.data as Obj).merge as Obj, rm_ = (ref.measured.data as Obj).merge as Obj;
  assert.equal(gm.shards, s);
  assert.equal(gm.schedule_hash, rm_.schedule_hash, "schedule hash of the merged run = one process's");
  assert.deepEqual(await multiset(got.dir), await multiset(ref.dir), "same (level, seq, prompt, salt) multiset");
  assert.equal((got.capacity.data as Obj).rate_star_rps, 4);
  assert.equal((ref.capacity.data as Obj).rate_star_rps, 4);
  for (const m of [got.measured, ref.measured]) {
    const [lo, hi] = levels(m).map(summary);
    assert.ok(lo.ttft_ms.p95 <= 0.7 * SLO_TTFT && hi.ttft_ms.p95 >= 1.3 * SLO_TTFT, `SLO ${SLO_TTFT} not 30 % away: p95 ${lo.ttft_ms.p95} / ${hi.ttft_ms.p95}`);
    assert.ok(lo.ttft_ms.p50 >= A && lo.ttft_ms.p50 <= 1.5 * A + 5, `low-load median TTFT ${lo.ttft_ms.p50} ms not in [${A}, ${1.5 * A + 5}]`);
  }
  assert.equal(got.measured.complete, true);
  const lims = (got.measured.limitations as string[]).join("\n");
  for (const sl of gm.slices as Obj[]) {
    assert.ok(Math.abs(sl.median_offset_ms as number) <= 5, JSON.stringify(sl));
    // A host that says it is unsynced (or > 5 ms off) is named; a synced one is not.
    const sync = sl.clock_sync as Obj;
    const flagged = sync.source !== "adjtimex" || sync.unsynced === true || (sync.est_error_ms as number) > 5;
    assert.equal(lims.includes(`shard ${sl.shard}: the host`), flagged, `${sl.shard} ${JSON.stringify(sync)}`);
  }
  assert.doesNotMatch(((ref.measured.limitations as string[]).join("\n")), /shard 0\/1: the host/, "one process shares no axis");
}

describe("sharded load and ik merge through dist/ik", { skip }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-shard-"));
    env = await shardEnv(dir);
    mock = await startMock(["--engine", "vllm", "--max-batch", "4", "--step-ms", String(A), "--request-log"]);
    const store = await freshStore("ref");
    const [r] = await runLocalShards(1, loadArgs(mock.base, startAt(2500), GRID), { env: store, staggerMs: 0, jobIndex: false });
    assert.equal(r.code, 0, r.stderr);
    refSliceDir = join(store.IK_RUNS_DIR, JSON.parse(r.stdout).evidence_id);
    const m = await merge([refSliceDir], env, join(dir, "ref-merged"));
    assert.equal(m.code, 0, m.stderr);
    ref = await mergedRecords(m, join(dir, "ref-merged"));
  });
  after(async () => {
    await mock?.stop();
    await slowMock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("a slice carries no N*, cost or verdict; one process split by seq merges to its own record, field by field", async () => {
    const slice = await readSliceDir(refSliceDir);
    assert.equal(slice.kind, "serve_benchmark");
    assert.deepEqual(slice.metrics, []);
    assert.match((slice.limitations as string[])[0], /^SLICE 0\/1 of group \d+: .*not a result/);
    for (const l of levels(slice)) for (const k of ["slo_ok", "slo_checks", "goodput_rps"]) assert.ok(!(k in (l.summary as Obj)), k);
    assert.match(String((slice.data as Obj).schedule_hash), /^[0-9a-f]{64}$/);
    const split = join(dir, "split");
    const dirs = await splitSlice(refSliceDir, 3, split);
    const m = await merge(dirs, env, join(dir, "split-merged"));
    assert.equal(m.code, 0, m.stderr);
    const got = await mergedRecords(m, join(dir, "split-merged"));
    assert.deepEqual(comparable(got.measured), comparable(ref.measured));
    assert.deepEqual(comparable(got.capacity), comparable(ref.capacity));
    assert.equal(((got.measured.data as Obj).merge as Obj).shards, 3);
    // The merged rows are the same rows in the same canonical (level, seq) order, only the shard named differs.
    const rowsOf = async (d: string) => jsonl(await readFile(join(d, "requests.jsonl"), "utf8")).map(({ shard: _s, ...r }) => r);
    const refRows = await rowsOf(ref.dir);
    assert.deepEqual(await rowsOf(got.dir), refRows);
    const order = refRows.map((r) => `${r.level}:${r.seq}`);
    const canon = [...refRows].sort((a, b) => ["r4", "r100"].indexOf(a.level as string) - ["r4", "r100"].indexOf(b.level as string) || (a.seq as number) - (b.seq as number)).map((r) => `${r.level}:${r.seq}`);
    assert.deepEqual(order, canon);
    // Each level's schedule origin, on the merged rows' clock: before every due time, within the level's first second.
    for (const l of levels(got.measured)) {
      const due = refRows.filter((r) => r.level === l.name).map((r) => r.t_scheduled_ns as number);
      const lead = Math.min(...due) - (l.t_origin_ns as number);
      assert.ok(lead >= 0 && lead < 1e9, `${l.name}: first due ${lead} ns after the origin`);
    }
    // Not vacuous: the records hold the numbers.
    assert.ok(summary(levels(got.measured)[0]).ttft_ms.p50 > 0);
    assert.ok(((got.measured.metrics as Obj[]).length) > 10);
  });

  test("Slurm: srun -n 4 --shard auto, each shard's stdout a slice, merged exact against one process", async () => {
    const slurmLocal = resolve(ROOT, "..", "shared", "tools", "slurm-local");
    let sinfo = spawnSync("sinfo", ["-h", "-o", "%t"], { encoding: "utf8", env: { ...runtime.envAll(), SLURM_CONF: "/tmp/ik-slurm/slurm.conf" } });
    if (sinfo.status !== 0 && existsSync(slurmLocal)) {
      spawnSync(slurmLocal, ["up"], { encoding: "utf8", timeout: 240_000 });
      sinfo = spawnSync("sinfo", ["-h", "-o", "%t"], { encoding: "utf8", env: { ...runtime.envAll(), SLURM_CONF: "/tmp/ik-slurm/slurm.conf" } });
    }
    if (sinfo.status !== 0 && runtime.env("CI") !== "true") return void console.error("no Slurm here (../shared/tools/slurm-local up): test not run");
    assert.equal(sinfo.status, 0, `Slurm is not up: ${sinfo.stderr}`);
    const store = await freshStore("slurm");
    const out = join(dir, "slurm-out");
    await mkdir(out, { recursive: true });
    const start = startAt(6000);
    const r = await runArgv(["srun"], ["-n", "4", "--kill-on-bad-exit=0", `--output=${out}/slice-%t.json`, `--error=${out}/slice-%t.err`,
      ikBin(), ...loadArgs(mock.base, start, GRID), "--shard", "auto"], { env: { ...store, SLURM_CONF: "/tmp/ik-slurm/slurm.conf" }, timeoutMs: 90_000 });
    assert.equal(r.code, 0, `${r.stderr}\n${await readFile(`${out}/slice-0.err`, "utf8").catch(() => "")}`);
    const groups = new Set<string>();
    for (let t = 0; t < 4; t++) {
      const rec = JSON.parse(await readFile(`${out}/slice-${t}.json`, "utf8"));
      const d = rec.data as Obj;
      assert.deepEqual([(d.shard as Obj).k, (d.shard as Obj).s, (d.shard as Obj).source], [t, 4, "slurm"]);
      assert.match(String((d.shard as Obj).read), /SLURM_PROCID=\d .*SLURM_STEP_NUM_TASKS=4/);
      groups.add(String((d.group as Obj).id));
    }
    assert.equal(groups.size, 1);
    // Only shard 0 scrapes the server's gauges.
    for (let t = 0; t < 4; t++) {
      const lv = levels(JSON.parse(await readFile(`${out}/slice-${t}.json`, "utf8")))[0];
      if (t === 0) assert.ok(lv.server && typeof lv.server === "object", "shard 0 sampled the server");
      else assert.equal(lv.server, null, `shard ${t} must not scrape`);
    }
    assert.match([...groups][0], new RegExp(`^${start}-\\d+\\.\\d+$`), "group = --start-at + SLURM_JOB_ID.SLURM_STEP_ID");
    const m = await merge([store.IK_RUNS_DIR], env, join(dir, "slurm-merged"));
    assert.equal(m.code, 0, m.stderr);
    await checkAgainstReference(await mergedRecords(m, join(dir, "slurm-merged")), 4);
    // A batch script that calls ik without srun: the real batch step has SLURM_PROCID=0 but no step id.
    const cmd = [ikBin(), ...loadArgs(mock.base, startAt(60_000), GRID), "--shard", "auto"].map((a) => `'${a}'`).join(" ");
    const sb = await runArgv(["sbatch"], ["--wait", "-o", `${out}/batch.out`, "-e", `${out}/batch.err`, "--wrap", cmd], { env: { ...store, SLURM_CONF: "/tmp/ik-slurm/slurm.conf" }, timeoutMs: 60_000 });
    assert.equal(sb.code, 64, `${sb.stderr}${await readFile(`${out}/batch.err`, "utf8").catch(() => "")}`);
    assert.match(await readFile(`${out}/batch.err`, "utf8"), /ik: --shard auto: no SLURM_STEP_ID \(SLURM_PROCID=0 .*SLURM_JOB_ID=\d+\): outside a job step/);
  });

  test("Indexed Job simulation: 3 processes with JOB_COMPLETION_INDEX started 1 s apart merge exact against one process", async () => {
    const store = await freshStore("k8s");
    const runs = await runLocalShards(3, loadArgs(mock.base, startAt(7000), GRID), { env: store, staggerMs: 1000, jobIndex: true });
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const ks = runs.map((r) => ((JSON.parse(r.stdout).data as Obj).shard as Obj));
    assert.deepEqual(ks.map((s) => [s.k, s.s, s.source]), [[0, 3, "kubernetes"], [1, 3, "kubernetes"], [2, 3, "kubernetes"]]);
    const m = await merge([store.IK_RUNS_DIR], env, join(dir, "k8s-merged"));
    assert.equal(m.code, 0, m.stderr);
    await checkAgainstReference(await mergedRecords(m, join(dir, "k8s-merged")), 3);
  });

  test("a shard whose clock runs 50 ms ahead (fault build) is early in the mock's request log and named by the merge", async () => {
    const faulty = join(dir, "ik-clock-skew");
    // The fault build carries the rev of the binary under test, whatever the working tree is now (merge refuses two revs).
    const rev = JSON.parse(spawnSync(ikBin(), ["--version", "--json"], { encoding: "utf8" }).stdout).git_rev as string;
    const b = spawnSync("bash", ["scripts/build.sh", "--fault", "clock-skew-50ms", "--outfile", faulty], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 180_000,
      env: { ...runtime.envAll(), IK_FAULT_REV: rev },
    });
    assert.equal(b.status, 0, b.stderr);
    const store = await freshStore("skew");
    const logFrom = mock.proc.stdout().length;
    const rate = 15, durationS = 3, start = startAt(4000);
    const runs = await runLocalShards(3, loadArgs(mock.base, start, ["--rates", String(rate), "--duration-s", String(durationS), "--max-tokens", "4"]), {
      env: store, staggerMs: 0, jobIndex: false, bin: (k) => (k === 1 ? faulty : undefined),
    });
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const m = await merge([store.IK_RUNS_DIR], env, join(dir, "skew-merged"));
    assert.equal(m.code, 0, m.stderr);
    const got = await mergedRecords(m, join(dir, "skew-merged"));
    const lims = (got.measured.limitations as string[]).filter((l) => /sent (early|late) by/.test(l));
    assert.equal(lims.length, 1, lims.join("\n"));
    assert.match(lims[0], /^shard 1\/3 sent early by (4\d|5\d)\.\d ms/);
    const sl = ((got.measured.data as Obj).merge as Obj).slices as Obj[];
    assert.ok((sl[1].median_offset_ms as number) < -40 && (sl[1].median_offset_ms as number) > -60, JSON.stringify(sl[1]));
    // The mock's own wall receive times: each request matched to the merged row sent nearest before it.
    const clock = (got.measured.data as Obj).clock as { anchor: { wall_ms: number; mono_ms: number } };
    const off = clock.anchor.wall_ms - clock.anchor.mono_ms;
    const offsets = arrivalOffsetsMs({ ratePerS: rate, durationS, seed: levelSeed(0, 0) });
    const rows = jsonl(await readFile(join(got.dir, "requests.jsonl"), "utf8")).map((r) => ({ shard: r.shard as string, send: (r.t_send_ns as number) / 1e6 + off, due: start + offsets[r.seq as number] }));
    rows.sort((a, b) => a.send - b.send);
    const recv = [...mock.proc.stdout().slice(logFrom).matchAll(/recv_wall_ms=([0-9.]+)/g)].map((x) => Number(x[1]));
    const early: Record<string, number[]> = {};
    for (const w of recv) {
      const r = rows.filter((x) => x.send <= w + 0.5 && w - x.send < 20).at(-1);
      if (r) (early[r.shard] ??= []).push(w - r.due);
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    assert.ok(early["1/3"]?.length >= 10 && early["0/3"]?.length >= 10, JSON.stringify(Object.fromEntries(Object.entries(early).map(([k, v]) => [k, v.length]))));
    assert.ok(med(early["1/3"]) < -40 && med(early["1/3"]) > -60, `the mock received shard 1 at ${med(early["1/3"]).toFixed(1)} ms from its due time`);
    assert.ok(Math.abs(med(early["0/3"])) < 10 && Math.abs(med(early["2/3"])) < 10, `shards 0 and 2 at ${med(early["0/3"])}, ${med(early["2/3"])} ms`);
  });

  test("a SIGKILLed and a SIGTERMed shard: merge refuses (65) naming them, --allow-partial merges the rest as a lower bound, the cut level not judged", async () => {
    const store = await freshStore("partial");
    // A lead that four processes starting at once on a busy 2-core host still make.
    const start = startAt(6000);
    // Its own mock, whose requests run 1.4 s (8 tokens, 200 ms apart; TTFT 5 ms): the SIGTERMed shard
    // (5 req/s at r20) has about 7 in flight when it is cut, so some are aborted.
    slowMock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "200"]);
    const args = loadArgs(slowMock.base, start, ["--rates", "10,20", "--duration-s", "3", "--level-gap-s", "1", "--max-tokens", "8", "--slo-ttft-p95-ms", String(SLO_TTFT)]);
    const procs = [0, 1, 2, 3].map((k) => startArgv([ikBin()], [...args, "--shard", `${k}/4`], { env: store }));
    // Shard 2 SIGKILLed 1.5 s into r10; shard 3 SIGTERMed 1.5 s into r20 (r10: 3 s, then a 1 s gap).
    await new Promise((r) => setTimeout(r, start + 1500 - startAt(0)));
    // bench serve is one process (execve with a raised fetch limit); under IK_LAUNCHER=1 it would be a
    // launcher and a measuring child: kill any child too, at once.
    spawnSync("pkill", ["-KILL", "-P", String(procs[2].pid)]);
    process.kill(procs[2].pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, start + 5500 - startAt(0)));
    await procs[3].stop("SIGTERM");
    const ends = await Promise.all(procs.map((p) => p.exited));
    assert.equal(ends[2].signal, "SIGKILL");
    assert.equal(ends[3].code, 130, procs[3].stderr());
    assert.equal(ends[0].code, 0, procs[0].stderr());
    const staging = await readdir(join(store.IK_RUNS_DIR, ".staging"));
    assert.equal(staging.length, 1, "the killed shard left its staging directory");
    const refused = await merge([store.IK_RUNS_DIR], env, join(dir, "partial-merged"));
    assert.equal(refused.code, 65, refused.stderr);
    assert.match(refused.stderr, /shard 2\/4 left only a \.staging journal/);
    const m = await merge([store.IK_RUNS_DIR], env, join(dir, "partial-merged"), ["--allow-partial"]);
    assert.equal(m.code, 0, m.stderr);
    const got = await mergedRecords(m, join(dir, "partial-merged"));
    assert.equal(got.measured.complete, false);
    assert.equal(got.capacity.complete, false);
    const mg = (got.measured.data as Obj).merge as Obj;
    assert.deepEqual(mg.killed, [2]);
    assert.deepEqual(mg.interrupted, [3]);
    // Shard 2's seqs and those shard 3 never sent are dropped: less than 3/4 of the schedule was sent.
    assert.ok((mg.present_share as number) < 0.75 && (mg.present_share as number) > 0.4, String(mg.present_share));
    const [l0, l1] = levels(got.measured);
    assert.equal(l0.target_rate_rps, 10 * (l0.planned as number) / (l0.planned_all as number), "the absent shard's seqs are dropped from the target rate");
    assert.ok((l0.planned as number) < (l0.planned_all as number));
    assert.equal(l0.not_judged, null, "r10, which shard 3 completed, keeps its verdict");
    assert.equal((l0.summary as Obj).slo_ok, true);
    // r20, cut short by shard 3's SIGTERM: no verdict, and its target the level's rate less only the absent shard 2's seqs.
    assert.equal(l1.not_judged, "interrupted");
    assert.equal((l1.summary as Obj).slo_ok, null);
    assert.deepEqual(l1.interrupted_shards, ["3/4"]);
    const owned = (n: number, k: number) => (n > k ? Math.ceil((n - k) / 4) : 0);
    assert.equal(l1.planned, [0, 1, 3].reduce((a, k) => a + owned(l1.planned_all as number, k), 0));
    assert.equal(l1.target_rate_rps, 20 * (l1.planned as number) / (l1.planned_all as number));
    const aborted = levels(got.measured).reduce((a, l) => a + (l.aborted as number), 0);
    assert.ok(aborted >= 1, "the SIGTERMed shard's running requests were aborted");
    for (const l of levels(got.measured)) assert.ok(!("aborted" in ((l.summary as Obj).failures_by_kind as Obj)), "aborted rows are kept out");
    assert.match((got.measured.limitations as string[]).join("\n"), /PARTIAL: shards 2\/4 \(killed: only a \.staging journal\)/);
    const cd = got.capacity.data as Obj;
    assert.equal(cd.rate_star_rps_bound, "lower");
    assert.equal(cd.rate_star_rps_nominal, 10, "the SLO held at r10; r20 was not judged");
    assert.equal(cd.n_star_lower_bound, true);
    assert.match(String(cd.reason), /level 20 was not judged \(interrupted\): N\* is at least 10/);
    const at = levels(got.measured).find((l) => l.level === 10) as Obj;
    assert.equal(cd.rate_star_rps, 10 * (at.planned as number) / (at.planned_all as number), "N* is stated as the lower bound: nominal x the share of its load sent");
    const metric = (got.capacity.metrics as Obj[]).find((x) => x.name === "rate_star_rps") as Obj;
    assert.equal(metric.value, cd.rate_star_rps);
    assert.match(String(got.capacity.summary), /^PARTIAL \(2\/4 killed, 3\/4 interrupted\): vllm mock-model: max rate >= [0-9.]+ req\/s \(a lower bound: nominal 10, [0-9.]+ % of its load sent\) at /);
    assert.match((got.capacity.limitations as string[])[0], /^PARTIAL .*cost at N\* .* upper bound/);
  });
});

if (skip) test("sharded load through dist/ik (skipped)", { skip }, () => {});
