/**
 * `bench serve --shard` refusals through dist/ik: usage errors (64) before anything is sent, a
 * --start-at already past (64), and a warm-up that does not end before --start-at (69), the
 * scheduler-variable refusals of `--shard auto`, each one line naming what was read. Bun only:
 * about 10 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { loadArgs, shardEnv, startAt } from "./_sharded.ts";

const skip = runtime.name !== "bun" ? "end-to-end tests run under Bun only" : false;
let dir = "";
let env: Record<string, string> = {};
let mock: MockProc;


function serve(args: string[], extraEnv: Record<string, string> = {}) {
  const e: Record<string, string> = { ...env, ...extraEnv };
  return runIk(args, { env: e, timeoutMs: 30_000 });
}

describe("bench serve --shard refusals", { skip }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-shard-usage-"));
    env = await shardEnv(dir);
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "1500", "--tpot-ms", "1"]);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // 2 req/s over 2 s: seed 0's first arrival at 2 req/s is at 1.04 s, so 1 s would be an empty level.
  const base = () => loadArgs(mock.base, startAt(60_000), ["--rates", "2", "--duration-s", "2"]);
  const drop = (args: string[], flag: string) => {
    const i = args.indexOf(flag);
    return i < 0 ? args : [...args.slice(0, i), ...args.slice(i + 2)];
  };

  const usage: [string, () => string[], RegExp, Record<string, string>?][] = [
    ["--shard without --start-at", () => [...drop(base(), "--start-at"), "--shard", "0/2"], /ik: --shard: needs --start-at EPOCH_MS/],
    ["--start-at without --shard", () => base(), /ik: --start-at: is for a sharded load run/],
    ["--fail-on-slo with --shard", () => [...base(), "--shard", "0/2", "--fail-on-slo", "--slo-ttft-p95-ms", "100"], /ik: --fail-on-slo: cannot be used with --shard/],
    ["no --gpu-name", () => [...drop(base(), "--gpu-name"), "--shard", "0/2"], /ik: --gpu-name: is required with --shard/],
    ["no --gpu-count", () => [...drop(base(), "--gpu-count"), "--shard", "0/2"], /ik: --gpu-count: is required with --shard/],
    ["a concurrency grid without --ref-e2e-ms", () => [...drop(base(), "--rates"), "--concurrency", "2", "--shard", "0/2"], /ik: --concurrency: with --shard needs --ref-e2e-ms/],
    ["--run-dir", () => [...base(), "--shard", "0/2", "--run-dir", join(dir, "rd")], /ik: --run-dir: cannot be used with --shard/],
    ["a malformed --shard", () => [...base(), "--shard", "2/2"], /ik: --shard: '2\/2' needs 0 <= K < S/],
    ["a --start-at in seconds", () => [...drop(base(), "--start-at"), "--start-at", "1796140544", "--shard", "0/2"], /ik: --start-at: '1796140544' is not milliseconds since the Unix epoch/],
    ["--shard in single mode", () => ["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--shard", "0/2"], /ik: --shard: is for --mode load/],
    ["no IK_KEY_FILE", () => [...base(), "--shard", "0/2"], /ik: --shard: needs IK_KEY_FILE/, { IK_KEY_FILE: "" }],
    ["a key file that is not 64 hex", () => [...base(), "--shard", "0/2"], /ik: IK_KEY_FILE: .* is not a key ik reads \(64 hex characters\)/, { IK_KEY_FILE: "BAD" }],
    ["--shard auto outside any scheduler", () => [...base(), "--shard", "auto"], /ik: --shard auto: found neither Slurm .* nor Kubernetes/],
    ["--shard auto in an sbatch script without srun", () => [...base(), "--shard", "auto"], /ik: --shard auto: no SLURM_STEP_ID \(SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=2 SLURM_JOB_ID=9\)/,
      { SLURM_PROCID: "0", SLURM_STEP_NUM_TASKS: "2", SLURM_JOB_ID: "9" }],
    ["--shard auto in a Slurm job array", () => [...base(), "--shard", "auto"], /ik: --shard auto: this is a Slurm job array/,
      { SLURM_PROCID: "0", SLURM_STEP_NUM_TASKS: "2", SLURM_STEP_ID: "0", SLURM_JOB_ID: "9", SLURM_ARRAY_JOB_ID: "9", SLURM_ARRAY_TASK_ID: "1" }],
    ["--shard auto with both Slurm and Kubernetes variables", () => [...base(), "--shard", "auto", "--shards", "2"], /ik: --shard auto: both Slurm .* and Kubernetes .* variables are set/,
      { SLURM_PROCID: "0", SLURM_STEP_NUM_TASKS: "2", SLURM_STEP_ID: "0", JOB_COMPLETION_INDEX: "1" }],
    ["a --level-gap-s below the reference e2e", () => [...drop(drop(base(), "--rates"), "--duration-s"), "--duration-s", "4", "--concurrency", "2", "--ref-e2e-ms", "3000", "--level-gap-s", "1", "--shard", "0/2"],
      /ik: --level-gap-s: 1 s is below the reference e2e 3000 ms/],
    ["a level whose seeded schedule is empty (it would send nothing on any shard)", () => [...drop(base(), "--rates"), "--rates", "0.01,2", "--shard", "0/2"],
      /ik: --duration-s: level r0\.01 would send no request in 2 s \(seed 0: its first arrival is at [\d.]+ s\); give --duration-s \d+ or more/],
    ["--shard auto on Kubernetes without --shards", () => [...base(), "--shard", "auto"], /ik: --shard auto: a Kubernetes Indexed Job \(JOB_COMPLETION_INDEX=1\) does not say how many shards/,
      { JOB_COMPLETION_INDEX: "1" }],
  ];
  for (const [what, argv, re, extra] of usage) {
    test(`refuses ${what} (64)`, async () => {
      const e = { ...extra };
      if (e.IK_KEY_FILE === "BAD") {
        e.IK_KEY_FILE = join(dir, "bad.key");
        await writeFile(e.IK_KEY_FILE, "not a key\n");
      }
      const r = await serve(argv(), e);
      assert.equal(r.code, 64, r.stderr);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    });
  }

  test("a --start-at already past is refused (64); a warm-up still running at --start-at is refused (69)", async () => {
    const past = await serve([...loadArgs(mock.base, startAt(-5000), ["--rates", "2", "--duration-s", "2"]), "--shard", "0/2"]);
    assert.equal(past.code, 64, past.stderr);
    assert.match(past.stderr, /ik: --start-at: \d+ is [0-9.]+ s in the past/);
    // The mock answers after 1.5 s: three warm-up requests take 4.5 s, the start is 2.5 s away
    // (room for a slow process start on a busy host, none for the warm-up).
    const args = loadArgs(mock.base, startAt(2500), ["--rates", "2", "--duration-s", "2"]);
    const i = args.indexOf("--warmup");
    args[i + 1] = "3";
    const late = await serve([...args, "--shard", "1/2"]);
    assert.equal(late.code, 69, late.stderr);
    assert.match(late.stderr, /ik: --start-at: the warm-up of shard 1\/2 ended \d+ ms after --start-at/);
  });
});

describe("sharded levels overlap, closed loop", { skip }, () => {
  let odir = "";
  let oenv: Record<string, string> = {};
  let slow: MockProc;
  before(async () => {
    odir = await mkdtemp(join(tmpdir(), "ik-shard-overlap-"));
    oenv = await shardEnv(odir);
    slow = await startMock(["--engine", "vllm", "--ttft-ms", "1200", "--tpot-ms", "1"]);
  });
  after(async () => {
    await slow?.stop();
    await rm(odir, { recursive: true, force: true });
  });

  test("the next level starts on the timetable while the last one's requests still run; merge counts them as overlapping", async () => {
    const start = startAt(2500);
    const r = await runIk([...loadArgs(slow.base, start, ["--rates", "6,8", "--duration-s", "1", "--level-gap-s", "0", "--max-tokens", "4"]), "--shard", "0/1"], { env: oenv, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const slice = JSON.parse(r.stdout);
    const starts = slice.data.level_starts_ms as number[];
    assert.deepEqual(starts, [start, start + 1000]);
    const store = join(odir, "merged");
    const m = await runIk(["merge", join(oenv.IK_RUNS_DIR, slice.evidence_id), "--json"], { env: { ...oenv, IK_RUNS_DIR: store }, timeoutMs: 30_000 });
    assert.equal(m.code, 0, m.stderr);
    const measured = JSON.parse(await readFile(join(store, JSON.parse(m.stdout).data.measurement, "evidence.json"), "utf8"));
    const [l0, l1] = measured.data.levels;
    assert.ok(l0.overlapping >= 1, `overlapping ${l0.overlapping}`);
    assert.equal(l1.overlapping, 0);
    assert.match(measured.limitations.join("\n"), new RegExp(`counted as overlapping: r6 ${l0.overlapping}`));
    // Level r8 was not held back by r6's requests (those run 1.2 s, so a held-back send would lag by
    // hundreds of ms): its sends kept the wall timetable to within a busy host's jitter.
    assert.ok(l1.summary.send_lag_ms.p99 < 100, JSON.stringify(l1.summary.send_lag_ms));
    const rows = (await readFile(join(store, measured.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((x) => JSON.parse(x));
    const off = measured.data.clock.anchor.wall_ms - measured.data.clock.anchor.mono_ms;
    const firstR8 = Math.min(...rows.filter((x) => x.level === "r8").map((x) => x.t_send_ns / 1e6 + off));
    const lastR6End = Math.max(...rows.filter((x) => x.level === "r6").map((x) => x.t_end_ns / 1e6 + off));
    assert.ok(firstR8 >= start + 1000 - 1 && firstR8 < lastR6End, `r8 first send ${firstR8 - start} ms, r6 last end ${lastR6End - start} ms after start`);
  });

  test("closed loop: each shard sends seq mod S = K with N workers of its own; the merge has no schedule hash and no N*", async () => {
    const start = startAt(2500);
    const args = loadArgs(slow.base, start, ["--concurrency", "2", "--closed-loop", "--duration-s", "2", "--max-tokens", "4"]);
    const runs = await Promise.all([0, 1].map((k) => runIk([...args, "--shard", `${k}/2`], { env: oenv, timeoutMs: 60_000 })));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const slices = runs.map((r) => JSON.parse(r.stdout));
    for (const [k, sl] of slices.entries()) {
      assert.equal(sl.data.schedule_hash, null);
      assert.match(sl.limitations.join("\n"), /closed loop sharded: every shard runs N workers of its own, so 2 x N are in flight/);
      const rows = (await readFile(join(oenv.IK_RUNS_DIR, sl.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((x) => JSON.parse(x));
      assert.ok(rows.length >= 2);
      for (const row of rows) assert.equal(row.seq % 2, k);
    }
    const store = join(odir, "closed");
    const m = await runIk(["merge", ...slices.map((sl) => join(oenv.IK_RUNS_DIR, sl.evidence_id)), "--json"], { env: { ...oenv, IK_RUNS_DIR: store }, timeoutMs: 30_000 });
    assert.equal(m.code, 0, m.stderr);
    const cap = JSON.parse(m.stdout);
    assert.equal(cap.data.n_star, null);
    assert.match(cap.data.reason, /closed-loop/);
    // The merged record keeps the fleet's worker count (it said c2 with 4 in flight), and the
    // vLLM-format export names it as max_concurrency (it wrote 2).
    const measured = JSON.parse(await readFile(join(store, cap.data.measurement, "evidence.json"), "utf8"));
    assert.equal(measured.data.levels[0].fleet_workers, 4);
    assert.ok(measured.limitations.some((l: string) => /closed loop sharded: each of the 2 shard\(s\) that ran had N workers of its own, so c2: 4 were in flight fleet-wide/.test(l)), measured.limitations.join(" | "));
    const out = join(odir, "closed-export");
    const x = await runIk(["export", cap.data.measurement, "--format", "vllm", "--out", out], { env: { ...oenv, IK_RUNS_DIR: store }, timeoutMs: 30_000 });
    assert.equal(x.code, 0, x.stderr);
    const file = JSON.parse(await readFile(join(out, (await readdir(out)).find((f) => f.endsWith(".json") && f.includes("c2"))!), "utf8"));
    assert.equal(file.max_concurrency, 4);
    assert.match(file.ik_arrivals, /closed loop: 4 workers back to back .*: 2 on each of 2 shards/);
  });
});

if (skip) test("bench serve --shard refusals (skipped)", { skip }, () => {});
