/**
 * bench serve --mode load through the binary against `ik mock` (batching simulator and timing
 * model): both records with verifiable artifacts for a rate and a concurrency grid, closed loop
 * without N*, --fail-on-slo, usage errors, faults failing a level's SLO, low-load TTFT of one step,
 * and the found max rate against the simulator's known capacity in two (B, A, L) cases.
 * Bun only (CONTRACTS.md CI time): about 70 s.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";
import { ikBin, ROOT, runIk } from "../_helpers/ik.ts";
import { existsSync } from "node:fs";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { predictedTtftP95 } from "../../lib/selftest/batch_model.ts";

const skip = runtime.name !== "bun" ? "heavy end-to-end load tests run under Bun only" : false;
let dir = "";
let env: Record<string, string> = {};

function load(mock: MockProc, args: string[]) {
  return runIk(["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--warmup", "0", "--json", ...args], { env, timeoutMs: 120_000 });
}

describe("bench serve --mode load", { skip }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-load-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("a rate grid and a concurrency grid each write both records, artifacts verified with sha256sum", async () => {
    const mock = await startMock(["--engine", "vllm", "--ttft-ms", "10", "--tpot-ms", "2"]);
    try {
      const runDir = join(dir, "rd");
      const r = await load(mock, ["--rates", "4,8", "--duration-s", "2", "--max-tokens", "8", "--slo-ttft-p95-ms", "200", "--run-dir", runDir]);
      assert.equal(r.code, 0, r.stderr);
      const cap = JSON.parse(r.stdout);
      assert.equal(cap.kind, "capacity");
      assert.equal(cap.claim_class, "derived");
      assert.equal(cap.data.rate_star_rps, 8);
      assert.equal(cap.data.curve.length, 2);
      const mid = cap.data.measurement;
      const measured = JSON.parse(await readFile(join(env.IK_RUNS_DIR, mid, "evidence.json"), "utf8"));
      assert.equal(measured.kind, "serve_benchmark");
      assert.equal(measured.identity.workload.mode, "load");
      for (const a of measured.artifacts) {
        const line = execFileSync("sha256sum", [a.path], { cwd: join(env.IK_RUNS_DIR, mid), encoding: "utf8" });
        assert.equal(line.split(/\s+/)[0], a.sha256, a.path);
      }
      // --run-dir gets the levels' outputs and inputs too (it had only metrics/<label>.load.json),
      // the same bytes as the record's, and an index of them.
      const levelFiles = measured.artifacts.filter((a: { path: string }) => /^(outputs|inputs)\/vllm\/load-r[48]\.jsonl$/.test(a.path));
      assert.equal(levelFiles.length, 4, JSON.stringify(measured.artifacts));
      for (const a of levelFiles) {
        const line = execFileSync("sha256sum", [a.path], { cwd: runDir, encoding: "utf8" });
        assert.equal(line.split(/\s+/)[0], a.sha256, `run dir ${a.path}`);
      }
      const index = JSON.parse(await readFile(join(runDir, "outputs", "vllm", "index.json"), "utf8"));
      assert.equal(index.files["load-r4.jsonl"], levelFiles.find((a: { path: string }) => a.path === "outputs/vllm/load-r4.jsonl").sha256);
      assert.equal(index.inputs["load-r8.jsonl"], levelFiles.find((a: { path: string }) => a.path === "inputs/vllm/load-r8.jsonl").sha256);
      assert.ok(existsSync(join(runDir, "metrics", "vllm.load.json")));
      const lv = measured.data.levels[0];
      // How the open loop paced its sends: the Bun build sleeps to 0.1 ms before each deadline with
      // its precise sleep (Atomics.waitAsync); the Node build on its timers, 0.5 ms before.
      const built = JSON.parse(execFileSync(ikBin(), ["--version", "--json"], { encoding: "utf8" })).runtime as string;
      for (const l of measured.data.levels) {
        assert.deepEqual(l.pacer, built.startsWith("bun ") ? { sleep: "precise", spin_margin_ms: 0.1 } : { sleep: "timer", spin_margin_ms: 0.5 }, built);
      }
      const outLines = (await readFile(join(env.IK_RUNS_DIR, mid, "outputs", "vllm", "load-r4.jsonl"), "utf8")).trim().split("\n");
      assert.equal(outLines.length, lv.sent);
      // The clock anchor puts monotonic stamps on the wall axis; the sync state is the kernel's.
      const clk = measured.data.clock;
      assert.ok(Math.abs(clk.anchor.wall_ms - Date.now()) < 120_000, JSON.stringify(clk.anchor));
      assert.ok(["adjtimex", "unavailable"].includes(clk.sync.source), JSON.stringify(clk.sync));
      const firstRow = JSON.parse((await readFile(join(env.IK_RUNS_DIR, mid, "requests.jsonl"), "utf8")).split("\n")[0]);
      const wallOfSend = firstRow.t_send_ns / 1e6 + (clk.anchor.wall_ms - clk.anchor.mono_ms);
      assert.ok(wallOfSend >= clk.anchor.wall_ms && wallOfSend - clk.anchor.wall_ms < 60_000, "a row's send maps to a wall time after the anchor");
      // Every request of a level carries its schedule index, 0..sent-1, in rows and outputs.
      const rows = (await readFile(join(env.IK_RUNS_DIR, mid, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.level === "r4");
      assert.deepEqual(rows.map((r) => r.seq).sort((a, b) => a - b), Array.from({ length: lv.sent }, (_, i) => i));
      assert.deepEqual(outLines.map((l) => JSON.parse(l).seq).sort((a, b) => a - b), Array.from({ length: lv.sent }, (_, i) => i));
      assert.ok(lv.summary.itl_ms.n > 0 && lv.summary.send_lag_ms.n === lv.sent);
      // Each open-loop row says how long the loop's thread waited for a CPU while it waited for its
      // deadline (Linux schedstat); the level's send lag less that wait is summarised beside the lag.
      for (const row of rows) assert.ok(typeof row.send_cpu_wait_ms === "number" && row.send_cpu_wait_ms >= 0, JSON.stringify(row));
      const lessWait = rows.map((r) => Math.max(0, r.send_lag_ms - r.send_cpu_wait_ms)).sort((a, b) => a - b);
      assert.equal(lv.summary.send_lag_without_cpu_wait_ms.n, lv.sent);
      assert.equal(lv.summary.send_lag_without_cpu_wait_ms.p50, lessWait[Math.ceil(lessWait.length / 2) - 1]);
      assert.ok(lv.summary.send_lag_without_cpu_wait_ms.p99 <= lv.summary.send_lag_ms.p99);
      // ik's own request path ran in memory before the first level, and the server saw none of it:
      // every request it served is a row of this run.
      assert.ok(measured.data.client_warm_up.requests >= 10 && measured.data.client_warm_up.ms > 0, JSON.stringify(measured.data.client_warm_up));
      const served = (await (await fetch(`${mock.base}/metrics`)).text()).split("\n")
        .filter((l) => l.startsWith("vllm:request_success_total{")).reduce((a, l) => a + Number(l.split(" ").pop()), 0);
      const allRows = (await readFile(join(env.IK_RUNS_DIR, mid, "requests.jsonl"), "utf8")).trim().split("\n").length;
      assert.equal(served, allRows, "the server served exactly the run's rows (--warmup 0): the client's warm-up sent nothing");
      assert.ok(Math.abs(lv.summary.tpot_ms.p50 - 2) < 0.5, `tpot ${lv.summary.tpot_ms.p50}`);
      assert.ok(typeof lv.event_loop_lag_ms.p99_ms === "number");
      const c = await load(mock, ["--concurrency", "1,2", "--duration-s", "2", "--max-tokens", "8", "--ref-requests", "3"]);
      assert.equal(c.code, 0, c.stderr);
      const cc = JSON.parse(c.stdout);
      assert.equal(cc.data.level_kind, "concurrency");
      assert.equal(cc.data.n_star, null, "no SLO: no N*");
      assert.ok(cc.missing.some((m: string) => /slo/.test(m)) && cc.missing.some((m: string) => /gpu price/.test(m)));
      const cm = JSON.parse(await readFile(join(env.IK_RUNS_DIR, cc.data.measurement, "evidence.json"), "utf8"));
      assert.equal(cm.data.e2e_ref_source, "reference_requests");
      assert.ok(Math.abs(cm.data.levels[1].target_rate_rps - 2 / (cm.data.e2e_ref_ms / 1000)) < 1e-9);
      assert.ok(cm.limitations.some((l: string) => /open-loop Poisson/.test(l) && /--closed-loop/.test(l)));
    } finally {
      await mock.stop();
    }
  });

  test("--closed-loop gives no N*; --fail-on-slo exits 2 when no level holds; usage errors are 64", async () => {
    const mock = await startMock(["--engine", "sglang", "--ttft-ms", "20", "--tpot-ms", "1"]);
    try {
      const cl = await load(mock, ["--concurrency", "2", "--closed-loop", "--duration-s", "1", "--max-tokens", "8", "--slo-ttft-p95-ms", "500"]);
      assert.equal(cl.code, 0, cl.stderr);
      const cap = JSON.parse(cl.stdout);
      assert.equal(cap.data.n_star, null);
      assert.match(cap.data.reason, /closed-loop stress test/);
      const m = JSON.parse(await readFile(join(env.IK_RUNS_DIR, cap.data.measurement, "evidence.json"), "utf8"));
      assert.match(m.limitations[0], /^CLOSED-LOOP STRESS TEST/);
      // Seed 0's first arrival at 2 req/s comes at 1.04 s: a 1-s level would send nothing, and is
      // refused before any request (it was once judged "FAIL" and exited 2 on nothing measured).
      const empty = await load(mock, ["--rates", "2", "--duration-s", "1", "--max-tokens", "4", "--slo-ttft-p95-ms", "1", "--fail-on-slo"]);
      assert.equal(empty.code, 64, empty.stderr);
      assert.match(empty.stderr, /--duration-s: level r2 would send no request in 1 s .*give --duration-s 2 or more/);
      const f = await load(mock, ["--rates", "2", "--duration-s", "2", "--max-tokens", "4", "--slo-ttft-p95-ms", "1", "--fail-on-slo"]);
      assert.equal(f.code, 2, f.stderr);
      assert.equal(JSON.parse(f.stdout).data.rate_star_rps, null);
      for (const [args, re] of [
        [["--rates", "2", "--fail-on-slo"], /--fail-on-slo: needs an SLO/],
        [["--concurrency", "2", "--closed-loop", "--fail-on-slo", "--slo-ttft-p95-ms", "9"], /cannot be used with --closed-loop/],
        [["--rates", "2", "--concurrency", "2"], /exactly one of --concurrency or --rates/],
        [["--rates", "2", "--extend", "serve_benchmark-20260101T000000Z-00000000"], /--extend: is for --mode single/],
        [["--rates", "0"], /--rates: '0' is not a positive number/],
        // A level left out of the list (1,,2) was read as 1,2.
        [["--rates", "1,,2"], /--rates: '1,,2' has an empty item/],
        [["--concurrency", "1,2,", "--closed-loop"], /--concurrency: '1,2,' has an empty item/],
        // A closed loop is N workers: --rates 0.5,2.7 ran 1 and 2 workers under levels named r0.5 and r2.7.
        [["--rates", "0.5,2.7", "--closed-loop"], /--rates: cannot be used with --closed-loop: a closed loop runs N workers back to back, not a rate; give --concurrency N/],
        [["--rates", "auto", "--closed-loop"], /--closed-loop/],
        // A price of 0 gave a null cost with nothing said.
        [["--rates", "2", "--gpu-price-usd-h", "0"], /--gpu-price-usd-h`?: Expected a number above 0, but got 0/],
      ] as [string[], RegExp][]) {
        const u = await load(mock, args);
        assert.equal(u.code, 64, `${args.join(" ")}: ${u.stderr}`);
        assert.match(u.stderr, re);
      }
    } finally {
      await mock.stop();
    }
  });

  test("400 streams really reach the server (Bun's fetch would cap them at 256 and count the wait as TTFT)", async () => {
    // The client is under test: the mock comes from the Bun build where there is one (the Node
    // build's mock, on the same 2 cores as the client, cannot itself serve 400 streams on time).
    const bunBuild = join(ROOT, "dist", "ik");
    const mock = await startMock(["--engine", "vllm", "--ttft-ms", "50", "--tpot-ms", "50"], 15_000, existsSync(bunBuild) ? bunBuild : undefined);
    try {
      // Requests of ~1 s (20 tokens at 50 ms): all 400 overlap even while a slow client (the Node
      // build on 2 busy cores saw 347 with 0.55 s requests) is still opening its connections.
      const r = await load(mock, ["--concurrency", "400", "--closed-loop", "--duration-s", "2", "--max-tokens", "20"]);
      assert.equal(r.code, 0, r.stderr);
      const m = JSON.parse(await readFile(join(env.IK_RUNS_DIR, JSON.parse(r.stdout).data.measurement, "evidence.json"), "utf8"));
      const lv = m.data.levels[0];
      assert.equal(lv.pacer, null, "a closed loop has no pacer");
      assert.ok(lv.server.max.running >= 350, `the mock saw at most ${lv.server.max.running} running`);
      assert.ok(lv.summary.ttft_ms.p50 < 200, `TTFT p50 ${lv.summary.ttft_ms.p50} ms: requests waited in the client`);
      // ik's own memory during the level, sampled (on Bun the heap and external figures count
      // reserved memory too, so they are not bounded by the resident set).
      const cm = lv.client_memory;
      assert.ok(cm.samples >= 2 && cm.rss_peak_mib > 10, JSON.stringify(cm));
      assert.ok(cm.heap_used_peak_mib > 0 && cm.array_buffers_peak_mib <= cm.external_peak_mib, JSON.stringify(cm));
      // The Bun build hands its start-up pages back before the first request (Linux, bun:ffi madvise):
      // a compiled ik has tens of MiB of its file resident by then. The Node build has no madvise: null.
      const built = JSON.parse(execFileSync(ikBin(), ["--version", "--json"], { encoding: "utf8" })).runtime as string;
      if (process.platform === "linux" && built.startsWith("bun ")) assert.ok(cm.exe_pages_released_mib >= 5, JSON.stringify(cm));
      else assert.equal(cm.exe_pages_released_mib, null, JSON.stringify(cm));
    } finally {
      await mock.stop();
    }
  });

  test("an N* the SLO failed above is exact: its cost is stated as measured, no bound", async () => {
    // One slot, 20 ms steps, 4 tokens: about 12 req/s of capacity; 2 req/s holds a 150 ms p95 TTFT, 40 does not.
    const mock = await startMock(["--engine", "vllm", "--max-batch", "1", "--step-ms", "20"]);
    try {
      const r = await load(mock, ["--rates", "2,40", "--duration-s", "2", "--max-tokens", "4", "--slo-ttft-p95-ms", "150", "--gpu-price-usd-h", "2"]);
      assert.equal(r.code, 0, r.stderr);
      const cap = JSON.parse(r.stdout);
      assert.equal(cap.data.rate_star_rps, 2, cap.summary);
      assert.equal(cap.data.n_star_lower_bound, false);
      assert.ok(cap.data.usd_per_1m_output_tokens > 0);
      assert.equal(cap.data.usd_per_1m_output_tokens_bound, null);
      assert.match(cap.summary, /; \$\d+\.\d{3} per 1M output tokens at \$2\/GPU-h$/);
      // A client on time offers what its schedule holds: offered and scheduled on one basis, one number.
      const m = JSON.parse(await readFile(join(env.IK_RUNS_DIR, cap.data.measurement, "evidence.json"), "utf8"));
      for (const l of m.data.levels) assert.ok(Math.abs(l.offered_rate_rps / l.scheduled_rate_rps - 1) < 0.02, `${l.name}: offered ${l.offered_rate_rps} vs scheduled ${l.scheduled_rate_rps}`);
    } finally {
      await mock.stop();
    }
  });

  test("faults are counted by kind and fail the level's SLO", async () => {
    const mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1", "--fault", "http500@3"]);
    try {
      const r = await load(mock, ["--rates", "6", "--duration-s", "2", "--max-tokens", "4", "--slo-ttft-p95-ms", "1000"]);
      assert.equal(r.code, 0, r.stderr);
      const cap = JSON.parse(r.stdout);
      assert.equal(cap.data.rate_star_rps, null);
      assert.match(cap.data.reason, /SLO first fails at level 6 \(failed\)/);
      const m = JSON.parse(await readFile(join(env.IK_RUNS_DIR, cap.data.measurement, "evidence.json"), "utf8"));
      const s = m.data.levels[0].summary;
      assert.ok(s.failures_by_kind.http >= 1, JSON.stringify(s.failures_by_kind));
      assert.equal(s.n_failed, s.failures_by_kind.http);
      assert.equal(s.slo_checks.failed.ok, false);
    } finally {
      await mock.stop();
    }
  });

  test("low load on the simulator: median TTFT is one step plus part of a running one", async () => {
    const mock = await startMock(["--engine", "vllm", "--max-batch", "4", "--step-ms", "5"]);
    try {
      // busy fraction = 1.2 req/s × 8 tokens × 5 ms / 1000 = 0.048
      const r = await load(mock, ["--rates", "1.2", "--duration-s", "10", "--max-tokens", "8"]);
      assert.equal(r.code, 0, r.stderr);
      const m = JSON.parse(await readFile(join(env.IK_RUNS_DIR, JSON.parse(r.stdout).data.measurement, "evidence.json"), "utf8"));
      const p50 = m.data.levels[0].summary.ttft_ms.p50;
      assert.ok(p50 >= 5 && p50 <= 1.5 * 5 + 5, `median TTFT ${p50} ms, expected in [5, 12.5]`);
    } finally {
      await mock.stop();
    }
  });

  for (const [b, a, l] of [[4, 10, 16], [8, 20, 10]] as const) {
    test(`the max rate found is within one grid step below the simulator's capacity (B=${b}, A=${a} ms, L=${l})`, async () => {
      const capacity = (1000 * b) / (l * a);
      const grid = [0.6, 0.8, 1.0, 1.2].map((f) => f * capacity);
      const durationS = 4;
      // The SLO the queueing predicts: between the p95 TTFT at 0.8 and at 1.2 × capacity, far from both.
      const pred = grid.map((r, i) => predictedTtftP95(arrivalOffsetsMs({ ratePerS: r, durationS, seed: levelSeed(0, i) }), b, a, l));
      const slo = Math.sqrt(pred[1] * pred[3]);
      assert.ok(pred[3] > 2 * slo * 0.9 || pred[3] / pred[1] > 4, `predictions too close: ${pred}`);
      const mock = await startMock(["--engine", "vllm", "--max-batch", String(b), "--step-ms", String(a)]);
      try {
        const r = await load(mock, ["--rates", grid.join(","), "--duration-s", String(durationS), "--max-tokens", String(l), "--slo-ttft-p95-ms", slo.toFixed(1)]);
        assert.equal(r.code, 0, r.stderr);
        const cap = JSON.parse(r.stdout);
        const found = cap.data.rate_star_rps;
        const step = 0.2 * capacity;
        assert.ok(found !== null && found <= capacity + 1e-9 && found >= capacity - step - 1e-9,
          `found ${found} req/s; capacity ${capacity}; predicted p95 ${pred.map((p) => p.toFixed(0))}; SLO ${slo.toFixed(0)}; curve ${JSON.stringify(cap.data.curve.map((c: { name: string; ttft_p95_ms: number }) => [c.name, c.ttft_p95_ms]))}`);
      } finally {
        await mock.stop();
      }
    });
  }
});

if (skip) test("bench serve load mode (skipped)", { skip }, () => {});
