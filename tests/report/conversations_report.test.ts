/**
 * `ik report` of a `bench serve --mode conversations` record: its own page (per-turn table, run
 * figures, cache tag, TTFT CDF per turn), not the single-mode page's "no per-bucket figures".
 * In process against a loopback mock, < 2 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runBenchServe } from "../../lib/commands/bench_serve.ts";
import type { BenchServeFlags } from "../../lib/commands/bench_serve_flags.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { buildReport, loadReportInput } from "../../lib/report/document/mod.ts";
import { renderMarkdown } from "../../lib/report/markdown/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { serveMock } from "../mock/_helpers.ts";

test("a conversations record's report: per-turn table, run figures, TTFT CDF per turn", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-conv-report-"));
  const mock = await serveMock({ engine: "vllm", ttftMs: 5, tpotMs: 1, prefixCacheTokens: 100_000 });
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
    const md = renderMarkdown(buildReport(await loadReportInput(rec.evidence_id, env.IK_RUNS_DIR, dir)));
    assert.doesNotMatch(md, /no per-bucket figures|Single-mode benchmark/);
    assert.match(md, new RegExp(`Conversations benchmark ${rec.evidence_id}`));
    assert.match(md, /Per turn index: nearest-rank p50 \/ p95/);
    const tableRows = md.split("\n").filter((l) => /^\|\s*[123]\s*\|\s*2\s*\|\s*0\s*\|/.test(l));
    assert.equal(tableRows.length, 3, md);
    assert.match(md, /TTFT CDF per turn index/);
    assert.match(md, /turn 1/);
    assert.match(md, new RegExp(`\\*\\*cache tag:\\*\\* .*${rec.data.cache_salt.tag.trim().slice(1, -1)}`), "the tag (Markdown escapes its brackets)");
    assert.match(md, /duration.*req\/s \(ok turns\).*output tok\/s/);
    assert.match(md, /6 planned, 6 ended \(6 ok\), 0 not sent/);
  } finally {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  }
});
