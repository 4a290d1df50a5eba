/**
 * `ik export --format csv` of a `bench serve --mode conversations` record: one row per turn index
 * (its record's own figures, the run's throughput on each), not an empty file. In process against
 * a loopback mock, < 2 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runBenchServe } from "../../lib/commands/bench_serve.ts";
import type { BenchServeFlags } from "../../lib/commands/bench_serve_flags.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { csvExportFiles, loadExportSource } from "../../lib/export/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { serveMock } from "../mock/_helpers.ts";

test("a conversations record exports one CSV row per turn index", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-conv-csv-"));
  const mock = await serveMock({ engine: "vllm", ttftMs: 5, tpotMs: 1 });
  try {
    const env: Record<string, string> = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    const out: string[] = [];
    const ctx: CommandContext = { runtime: { ...runtime, env: (k: string) => env[k] ?? runtime.env(k), cwd: () => dir }, out: (t) => out.push(t), err: () => {}, json: true, signal: new AbortController().signal };
    const f = {
      cmd: "bench-serve", baseUrl: mock.base, model: "mock-model", mode: "conversations", conversations: "synth:2:3:20:6", api: "chat", engineKind: "auto", rounds: 5, warmup: 2,
      seed: 0, buckets: [], limitPerBucket: 0, tokenIds: "auto", exactLength: true, cacheSalt: true, timeoutS: 30, idleTimeoutS: 10, resamples: 2000, allowIncomplete: false,
      json: true, concurrency: [], rates: [], maxRequestsPerLevel: 0, refRequests: 5, burstiness: 1, sloMaxFail: 0, sweepAll: false, closedLoop: false, failOnSlo: false,
    } as unknown as BenchServeFlags;
    assert.equal(await runBenchServe(ctx, f), 0);
    const rec = JSON.parse(out.join(""));
    const [file] = csvExportFiles(await loadExportSource(rec.evidence_id, env.IK_RUNS_DIR, dir));
    const [head, ...rows] = file.text.trimEnd().split("\r\n");
    const cols = head.split(",");
    assert.equal(rows.length, 3, file.text);
    for (const c of ["evidence_id", "turn", "n_ok", "n_failed", "ttft_ms_p50", "ttft_ms_p95", "e2e_ms_p50", "prompt_tokens_mean", "cached_share", "ttft_p50_vs_turn1", "complete", "run_requests_per_s", "run_output_tok_s", "run_duration_s"]) {
      assert.ok(cols.includes(c), `${c} in ${head}`);
    }
    for (const [i, r] of rows.entries()) {
      const cell = (c: string) => r.split(",")[cols.indexOf(c)];
      assert.equal(cell("turn"), String(i + 1));
      assert.equal(Number(cell("ttft_ms_p50")), rec.data.turns[i].ttft_ms.p50);
      assert.equal(Number(cell("run_requests_per_s")), rec.data.throughput.requests_per_s);
      assert.equal(cell("complete"), "true");
    }
  } finally {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  }
});
