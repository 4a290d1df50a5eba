/**
 * Load mode's offered rate (issue 18 §4.3), through dist/ik against `ik mock` (loopback only;
 * ~20 s, both runtimes):
 * - a level whose seeded schedule strays more than 10 % from its rate (r4 for 2 s, seed 0: 6
 *   arrivals where 8 are expected) prints one warning line on stderr and records it as a
 *   limitation; a level inside 10 % (r5.5: 11 of 11) does not;
 * - `--requests N` sends exactly N arrivals per level, the first N of the same seeded process
 *   (`arrivalOffsetsMs` without a window), recorded as `workload.requests_per_level`; its
 *   conflicts are usage errors (64);
 * - sharded, `--requests N` slices that one N-arrival schedule: two shards send seq mod 2 each,
 *   the merge has every seq 0..N-1 once per level, and the timetable puts level 2 after level
 *   1's span plus the gap.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";
import { type IkProcess, ikBin, runIk, startArgv, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";

type Obj = Record<string, any>;
let dir: string, base: string, env: Record<string, string>;
let mock: IkProcess;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-requests-"));
  const key = join(dir, "endpoint.key");
  await writeFile(key, "ef".repeat(32) + "\n", { mode: 0o600 });
  env = { IK_KEY_FILE: key };
  mock = startArgv([ikBin()], ["mock", "--port", "0"]);
  base = (await mock.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
});

after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

const ik = (args: string[], runs: string) => runIk(args, { env: { ...env, IK_RUNS_DIR: runs }, timeoutMs: 90_000 });
const load = (...extra: string[]) => ["bench", "serve", "--mode", "load", "--base-url", base, "--model", "mock-model", "--warmup", "0", "--max-tokens", "4", ...extra];
const readRec = async (p: string): Promise<Obj> => JSON.parse(await readFile(join(p, "evidence.json"), "utf8"));
const rowsOf = async (p: string): Promise<Obj[]> => (await readFile(join(p, "requests.jsonl"), "utf8")).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

describe("load mode: the schedule's rate is warned about, and --requests N is exact (dist/ik)", { skip: BINARY_ONLY_SUITE }, () => {
  test("a level 25 % under its rate warns once on stderr and in the record; a level on its rate does not", async () => {
    const runs = join(dir, "warn");
    const r = await ik(load("--rates", "4,5.5", "--duration-s", "2", "--sweep-all", "--json"), runs);
    assert.equal(r.code, 0, r.stderr);
    const warnings = r.stderr.split("\n").filter((l) => /warning/.test(l));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0], /^bench serve: warning: level r4: its seeded schedule offers 3 req\/s \(6 arrivals in 2 s\), 25 % below the target 4 req\/s \(more than 10 %; Poisson noise: 8 ± 2\.8 arrivals expected\).*use --requests N/);
    const cap = JSON.parse(r.stdout);
    const meas = await readRec(join(runs, cap.data.measurement));
    const [r4, r55] = meas.data.levels;
    assert.equal(r4.scheduled_rate_rps, 3);
    assert.equal(r4.schedule_note, warnings[0].replace("bench serve: warning: ", ""));
    assert.equal(r55.scheduled_rate_rps, 5.5);
    assert.equal(r55.schedule_note, null);
    assert.ok(meas.limitations.includes(r4.schedule_note), "recorded as a limitation");
    assert.equal(meas.limitations.filter((l: string) => /seeded schedule offers/.test(l)).length, 1);
    assert.equal(meas.identity.workload.requests_per_level, null);
    assert.equal(meas.identity.workload.duration_s, 2);
  });

  test("--requests 6: exactly 6 arrivals per level, the seeded process's first 6, recorded in the workload", async () => {
    const runs = join(dir, "exact");
    const r = await ik(load("--rates", "8,16", "--requests", "6", "--sweep-all", "--json"), runs);
    assert.equal(r.code, 0, r.stderr);
    const cap = JSON.parse(r.stdout);
    const meas = await readRec(join(runs, cap.data.measurement));
    assert.equal(meas.identity.workload.requests_per_level, 6);
    assert.equal(meas.identity.workload.duration_s, null);
    assert.equal(meas.request.args.requests_per_level, 6);
    const rows = await rowsOf(join(runs, meas.evidence_id));
    for (const [i, lv] of meas.data.levels.entries()) {
      assert.equal(lv.planned, 6, lv.name);
      assert.equal(lv.sent, 6, lv.name);
      assert.deepEqual(rows.filter((x) => x.level === lv.name).map((x) => x.seq).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5]);
      const want = arrivalOffsetsMs({ ratePerS: lv.level, durationS: Infinity, maxRequests: 6, seed: levelSeed(0, i) });
      assert.equal(lv.scheduled_rate_rps, 6 / (want[5] / 1000), "the span of the seeded process's first 6 arrivals");
      // The same process as a window: its arrivals are the first ones of the --requests schedule.
      const windowed = arrivalOffsetsMs({ ratePerS: lv.level, durationS: 0.4, seed: levelSeed(0, i) });
      assert.deepEqual([...windowed], [...want.slice(0, windowed.length)]);
    }
  });

  test("--requests conflicts are usage errors (64), one line", async () => {
    const runs = join(dir, "usage");
    for (const [extra, re] of [
      [["--rates", "4", "--requests", "5", "--duration-s", "3"], /^ik: .*--requests.*cannot be used with --duration-s/],
      [["--rates", "4", "--requests", "5", "--max-requests-per-level", "3"], /^ik: .*--requests.*cannot be used with --max-requests-per-level/],
      [["--concurrency", "2", "--closed-loop", "--requests", "5"], /^ik: .*--requests.*is for open-loop levels/],
      [["--rates", "4", "--requests", "0"], /--requests/],
    ] as [string[], RegExp][]) {
      const r = await ik(load(...extra), runs);
      assert.equal(r.code, 64, `${extra.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, re);
    }
    const single = await ik(["bench", "serve", "--base-url", base, "--model", "mock-model", "--requests", "5"], runs);
    assert.equal(single.code, 64, single.stderr);
    assert.match(single.stderr, /--requests.*is for --mode load/);
  });

  test("sharded --requests 6: two shards slice one 6-arrival schedule; the merge has every seq once; level 2 starts after level 1's span + gap", async () => {
    const slices = join(dir, "slices");
    const start = Date.now() + 2000; // the system clock now, as a fresh ik process reads it (see tests/shard/_sharded.ts startAt)
    const args = load("--rates", "8,16", "--requests", "6", "--start-at", String(start), "--level-gap-s", "1", "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1");
    const shards = await Promise.all([0, 1].map((k) => ik([...args, "--shard", `${k}/2`], slices)));
    for (const s of shards) assert.equal(s.code, 0, s.stderr);
    const recs = await Promise.all((await readdir(slices)).filter((n) => n.startsWith("serve_benchmark-")).map((n) => readRec(join(slices, n))));
    assert.equal(recs.length, 2);
    assert.equal(recs[0].data.schedule_hash, recs[1].data.schedule_hash);
    const span0 = arrivalOffsetsMs({ ratePerS: 8, durationS: Infinity, maxRequests: 6, seed: levelSeed(0, 0) })[5];
    for (const rec of recs) {
      const starts = rec.data.level_starts_ms as number[];
      assert.ok(Math.abs(starts[1] - starts[0] - (span0 + 1000)) < 0.01, `${starts} (span ${span0} ms + 1 s gap)`);
      assert.deepEqual(rec.data.levels.map((l: Obj) => l.sent), [3, 3], "seq mod 2");
    }
    const m = await ik(["merge", slices, "--json"], join(dir, "merged"));
    assert.equal(m.code, 0, m.stderr);
    const cap = JSON.parse(m.stdout);
    const meas = await readRec(join(dir, "merged", cap.data.measurement));
    assert.equal(meas.identity.workload.requests_per_level, 6);
    // 6 arrivals over 0.87 s is 6.9 req/s, 14 % under r8: the shards' note is carried into the merged record.
    assert.match(meas.data.levels[0].schedule_note, /^level r8: its seeded schedule offers 6\.89 req\/s \(exactly 6 arrivals over 0\.87 s\), 14 % below/);
    assert.ok(meas.limitations.includes(meas.data.levels[0].schedule_note));
    const rows = await rowsOf(join(dir, "merged", meas.evidence_id));
    for (const lv of meas.data.levels) {
      assert.equal(lv.sent, 6, lv.name);
      const mine = rows.filter((x) => x.level === lv.name);
      assert.deepEqual(mine.map((x) => x.seq).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5], lv.name);
      for (const x of mine) assert.equal(x.shard, `${x.seq % 2}/2`);
    }
  });
});
