/**
 * `bench serve --mode trace` through dist/ik against `ik mock --prefix-cache-tokens` (issue 20 §2):
 * a Mooncake trace (the generator's fixture: 5 requests over 1.4 s, blocks 10-11 shared by three
 * of them, block 20 by two) is replayed at its own times: each request is due at exactly the
 * trace's offset, the mock receives it when ik says it sent it, the client's send lag p99 is within
 * 5 ms, the shared 512-token blocks are cache hits in the mock's request log (`cached=`), usage
 * prompt_tokens equal the trace's input lengths (sized by the mock's /tokenize), and the per-second
 * windows hold the trace's counts. --time-scale and --max-duration-s shape the replay; an Azure
 * trace replays too; two shards on one timetable merge to the one-process rows and windows; a set
 * without arrival times and grid flags are refused. Bun only (end to end): ~20 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { makeDatasetFixtures, MOONCAKE_ROWS } from "../../scripts/make_dataset_fixtures.ts";
import { jsonl, merge, mergedRecords, type Obj, runLocalShards, shardEnv, startAt } from "../shard/_sharded.ts";

/** The mock's request-log lines, in the order it read the requests. */
function requestLog(stdout: string): { serial: number; prompt: number; cached: number; recv: number }[] {
  return stdout.split("\n").filter((l) => l.startsWith("ik-request ")).map((l) => {
    const f = Object.fromEntries(l.slice(11).split(" ").map((kv) => kv.split("=")));
    return { serial: Number(f.serial), prompt: Number(f.prompt), cached: Number(f.cached), recv: Number(f.recv_wall_ms) };
  }).sort((a, b) => a.recv - b.recv);
}

describe("trace replay (binary)", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let dir = "";
  let env: Record<string, string> = {};
  let files: Record<string, string> = {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-trace-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    files = makeDatasetFixtures(join(dir, "fixtures"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const replay = async (base: string, extra: string[]) => {
    // One warm-up request (tagged, so it shares no block with the trace): the client's first send
    // is not the trace's (the Node build's first request path is slow to start).
    const r = await runIk(["bench", "serve", "--mode", "trace", "--base-url", base, "--model", "mock-model", "--warmup", "1", "--json", ...extra], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    return JSON.parse(r.stdout);
  };

  test("Mooncake: the trace's own times, send lag p99 <= 5 ms, shared blocks cached in the mock, exact lengths, per-second windows", async () => {
    const mock: MockProc = await startMock(["--engine", "vllm", "--prefix-cache-tokens", "100000", "--prefill-ms-per-token", "0.02", "--request-log"]);
    try {
      const rec = await replay(mock.base, ["--dataset", "mooncake", "--dataset-path", files["mooncake.jsonl"], "--slo-ttft-p95-ms", "2000"]);
      assert.equal(rec.kind, "serve_benchmark");
      const kept = MOONCAKE_ROWS.filter((r) => r.output_length > 0);
      const t0 = kept[0].timestamp;
      assert.deepEqual(rec.data.trace.sent_rows, kept.length);
      assert.equal(rec.data.trace.span_s, (kept.at(-1)!.timestamp - t0) / 1000);
      const lv = rec.data.levels[0];
      assert.equal(lv.name, "trace");
      assert.equal(lv.sent, kept.length);
      // Sent on the trace's clock: the median request on time; a tail over 5 ms (a busy host) is
      // never silent, ik then marks the level client-limited naming its send lag.
      const lag = lv.summary.send_lag_ms;
      assert.ok(lag.p50 <= 5, `send lag p50 ${lag.p50} ms`);
      if (lag.p99 > 5) assert.match(String(lv.client_limited), /send lag p99 [\d.]+ ms > 5 ms/, `send lag p99 ${lag.p99} ms, unflagged`);
      // ik's own rows: each request due at exactly the trace's offset from the first (no timing in
      // this), and sent at its due time plus the send lag ik reports (judged above).
      const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l))
        .filter((r) => r.level === "trace").sort((a, b) => a.seq - b.seq);
      assert.deepEqual(rows.map((r) => r.id), kept.map((k) => `mooncake-${MOONCAKE_ROWS.indexOf(k)}`));
      const ms = (ns: number) => ns / 1e6;
      for (const [i, row] of kept.entries()) {
        const due = ms(rows[i].t_scheduled_ns - rows[0].t_scheduled_ns);
        assert.ok(Math.abs(due - (row.timestamp - t0)) < 1e-3, `request ${i}: due at ${due} ms, the trace says ${row.timestamp - t0} ms`);
        assert.ok(rows[i].send_lag_ms >= 0 && Math.abs(ms(rows[i].t_send_ns - rows[i].t_scheduled_ns) - rows[i].send_lag_ms) < 1e-3, `request ${i}: sent ${rows[i].send_lag_ms} ms after due, never before`);
      }
      // The mock's own clock: each request arrived when ik says it sent it, its gap after the first
      // request the same as ik's send gap (loopback and both processes' scheduling: 10 ms). ik's
      // lateness is its reported send lag, not hidden: the mock saw no earlier or later send.
      const all = requestLog(mock.proc.stdout());
      assert.equal(all.length, kept.length + 1, "the warm-up and the trace");
      assert.equal(all[0].cached, 0, "the tagged warm-up shares no block");
      const log = all.slice(1);
      for (const [i, row] of kept.entries()) {
        const got = log[i].recv - log[0].recv, sent = ms(rows[i].t_send_ns - rows[0].t_send_ns);
        assert.ok(Math.abs(got - sent) <= 10, `request ${i}: the mock saw it ${got.toFixed(1)} ms after the first, ik sent it ${sent.toFixed(1)} ms after (the trace: ${row.timestamp - t0} ms)`);
        assert.equal(log[i].prompt, row.input_length, `request ${i}: the server counted the trace's input length`);
      }
      // Shared leading blocks are prefix-cache hits: rows 3 and 5 share blocks 10-11 with row 0 (1,024 tokens), row 4 block 20 with row 1.
      const cachedOf = (ids: number[]) => log[kept.findIndex((r) => r.hash_ids.join() === ids.join())].cached;
      assert.equal(cachedOf([10, 11, 12]), 0);
      assert.equal(cachedOf([20, 21]), 0);
      for (const ids of [[10, 11, 13], [10, 11, 14]]) assert.ok(Math.abs(cachedOf(ids) - 1024) <= 16, `${ids}: cached ${cachedOf(ids)} of a 1,024-token shared prefix`);
      assert.ok(Math.abs(cachedOf([20, 22]) - 512) <= 16, `20,22: cached ${cachedOf([20, 22])}`);
      assert.deepEqual([rec.data.prompt_lengths.all.n, rec.data.prompt_lengths.all.max_abs_error], [kept.length, 0]);
      // Windows: the trace's counts per second, all sent in the second they were due.
      const w = lv.windows as { t_s: number; trace_rps: number; sent_rps: number; ok: number }[];
      const want = [0, 0];
      for (const r of kept) want[Math.floor((r.timestamp - t0) / 1000)]++;
      assert.deepEqual(w.map((x) => x.trace_rps), want);
      assert.equal(w.reduce((a, x) => a + x.ok, 0), kept.length);
      assert.ok(rec.limitations.some((l: string) => /^trace replay: 5 request\(s\) at the trace's own arrival times/.test(l)), rec.limitations.join(" | "));
    } finally {
      await mock.stop();
    }
  });

  test("--time-scale and --max-duration-s shape the replay; an Azure trace replays too", async () => {
    const mock: MockProc = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1"]);
    try {
      const half = await replay(mock.base, ["--dataset", "mooncake", "--dataset-path", files["mooncake.jsonl"], "--time-scale", "0.5", "--max-duration-s", "0.35"]);
      // Scaled arrivals 0, 0.125, 0.3, 0.45, 0.7 s: the first three are within 0.35 s.
      assert.deepEqual([half.data.trace.sent_rows, half.data.trace.dropped_after_max_duration, half.data.trace.span_s], [3, 2, 0.3]);
      assert.equal(half.data.levels[0].sent, 3);
      assert.ok(half.limitations.some((l: string) => /x 0\.5 \(--time-scale\).*2 later row\(s\) past --max-duration-s 0\.35 not sent/.test(l)), half.limitations.join(" | "));
      assert.ok(!half.limitations.some((l: string) => /replaced the trace's own output length/.test(l)), "the trace's lengths, untouched");
      // --max-tokens wins over the rows' output lengths, and the record says the lengths are not the trace's.
      const fixed = await replay(mock.base, ["--dataset", "mooncake", "--dataset-path", files["mooncake.jsonl"], "--time-scale", "0.5", "--max-duration-s", "0.35", "--max-tokens", "3"]);
      assert.ok(fixed.limitations.some((l: string) => /^--max-tokens 3 replaced the trace's own output length in \d+ of \d+ row\(s\)/.test(l)), fixed.limitations.join(" | "));
      const az = await replay(mock.base, ["--dataset", "azure", "--dataset-path", files["azure.csv"], "--time-scale", "0.05"]);
      // Four rows (one with 0 generated tokens dropped): 0, 4.31, 5.32, 8.82 s, scaled by 0.05.
      assert.equal(az.data.levels[0].sent, 4);
      assert.ok(Math.abs(az.data.trace.span_s - 8.819410 * 0.05) < 1e-3, String(az.data.trace.span_s));
    } finally {
      await mock.stop();
    }
  });

  test("sharded: two shards replay one trace on a shared timetable, ik merge gives the one-process rows, picks and windows", async () => {
    const mock: MockProc = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1", "--request-log"]);
    try {
      const senv = await shardEnv(join(dir, "shards"));
      const args = (start: number) => ["bench", "serve", "--mode", "trace", "--base-url", mock.base, "--model", "mock-model", "--warmup", "1", "--json",
        "--dataset", "mooncake", "--dataset-path", files["mooncake.jsonl"], "--start-at", String(start), "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1"];
      const one = await runLocalShards(1, args(startAt(2500)), { env: { ...senv, IK_RUNS_DIR: join(dir, "one") }, staggerMs: 0, jobIndex: false });
      assert.equal(one[0].code, 0, one[0].stderr);
      const two = await runLocalShards(2, args(startAt(3000)), { env: { ...senv, IK_RUNS_DIR: join(dir, "two") }, staggerMs: 300, jobIndex: false });
      for (const r of two) assert.equal(r.code, 0, r.stderr);
      const m1 = await merge([join(dir, "one")], senv, join(dir, "one-merged"));
      const m2 = await merge([join(dir, "two")], senv, join(dir, "two-merged"));
      assert.equal(m2.code, 0, m2.stderr);
      const a = await mergedRecords(m1, join(dir, "one-merged")), b = await mergedRecords(m2, join(dir, "two-merged"));
      const rowsOf = async (d: string) => jsonl(await readFile(join(d, "requests.jsonl"), "utf8")).map((r) => `${r.level}\t${r.seq}\t${r.id}\t${r.salt}`);
      assert.deepEqual(await rowsOf(b.dir), await rowsOf(a.dir), "the same (level, seq, prompt, salt) rows as one process");
      const lv = (b.measured.data as Obj).levels as Obj[];
      assert.deepEqual(lv.map((l) => [l.name, l.sent]), [["trace", 5]]);
      assert.deepEqual((lv[0].windows as Obj[]).map((w) => w.trace_rps), [4, 1]);
      assert.deepEqual((b.measured.data as Obj).trace, (a.measured.data as Obj).trace);
      // The replay's timing is the one-process test's check (send lag p99 <= 5 ms): here two shard
      // processes start at once on the test host, and each sends two or three requests.
      assert.equal(typeof ((lv[0].summary as Obj).send_lag_ms as Obj).p99, "number");
    } finally {
      await mock.stop();
    }
  });

  test("refused before anything is sent: grid and load flags in trace mode, trace flags elsewhere (64)", async () => {
    const base = "http://127.0.0.1:9";
    for (const [args, re] of [
      [["--mode", "trace", "--rates", "1,2"], /--rates: is not for --mode trace/],
      [["--mode", "trace", "--duration-s", "5"], /--duration-s: is not for --mode trace/],
      [["--mode", "load", "--rates", "1", "--time-scale", "2"], /--time-scale: is for --mode trace/],
      [["--max-duration-s", "2"], /--max-duration-s: is for --mode trace/],
    ] as [string[], RegExp][]) {
      const r = await runIk(["bench", "serve", "--base-url", base, "--model", "m", ...args], { env });
      assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
    }
  });

  test("a set without arrival times against a live server: 65 naming the prompt and how to make one", async () => {
    await writeFile(join(dir, "plain.jsonl"), JSON.stringify({ id: "p1", bucket: "b", messages: [{ role: "user", content: "hi" }] }) + "\n");
    const mock: MockProc = await startMock(["--engine", "vllm"]);
    try {
      const r = await runIk(["bench", "serve", "--mode", "trace", "--base-url", mock.base, "--model", "mock-model", "--prompts", join(dir, "plain.jsonl")], { env });
      assert.equal(r.code, 65, r.stderr);
      assert.match(r.stderr, /prompt 'p1' has no arrival_s .*ik prompts build --dataset mooncake\|azure\|burstgpt/);
    } finally {
      await mock.stop();
    }
  });
});
