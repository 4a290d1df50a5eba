/**
 * bench serve single mode, in process against a loopback mock (the command's whole path except
 * argv parsing): the record, its artifacts (checked with plain sha256sum), the numbers against the
 * mock's truth, secrets off disk, --extend and its refusals, and an interrupted run. ~10 s.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runBenchServe } from "../../lib/commands/bench_serve.ts";
import type { BenchServeFlags } from "../../lib/commands/bench_serve_flags.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { IkError } from "../../lib/cli/errors.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { parseFault } from "../../lib/mock/faults.ts";
import { type InProcessMock, serveMock } from "../mock/_helpers.ts";

let mock: InProcessMock;
let dir: string;
const env: Record<string, string> = {};

function ctxFor(signal = new AbortController().signal, json = true) {
  const out: string[] = [], err: string[] = [];
  const rt = { ...runtime, env: (k: string) => env[k] ?? runtime.env(k), cwd: () => dir };
  const ctx: CommandContext = { runtime: rt, out: (t) => out.push(t), err: (t) => err.push(t), json, signal };
  return { ctx, out, err };
}

function flags(over: Partial<BenchServeFlags> = {}): BenchServeFlags {
  return {
    cmd: "bench-serve", baseUrl: mock.base, model: "mock-model", mode: "single", api: "chat", engineKind: "auto", rounds: 3, warmup: 1,
    seed: 0, buckets: ["very_short,short"], limitPerBucket: 2, tokenIds: "auto", exactLength: true, cacheSalt: true, timeoutS: 30,
    idleTimeoutS: 10, resamples: 300, allowIncomplete: false, gpuCount: 1, json: true, maxTokens: 12,
    concurrency: [], rates: [], durationS: 30, maxRequestsPerLevel: 0, refRequests: 5, burstiness: 1, sloMaxFail: 0,
    sweepAll: false, closedLoop: false, failOnSlo: false, ...over,
  } as BenchServeFlags;
}

async function files(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(join((e as unknown as { parentPath?: string; path?: string }).parentPath ?? (e as unknown as { path: string }).path, e.name));
  }
  return out;
}

before(async () => {
  mock = await serveMock({ engine: "vllm", ttftMs: 25, tpotMs: 4 });
  dir = await mkdtemp(join(tmpdir(), "ik-bench-single-"));
  env.IK_RUNS_DIR = join(dir, "runs");
  env.IK_KEY_FILE = join(dir, "endpoint.key");
  env.IK_TEST_KEY = "sk-test-secret-value";
});
after(async () => {
  await mock.close();
  await rm(dir, { recursive: true, force: true });
});

describe("bench serve --mode single", () => {
  let first: Record<string, any>;
  test("writes a complete record whose numbers match the mock and whose artifacts verify with sha256sum", async () => {
    const { ctx, out } = ctxFor();
    const code = await runBenchServe(ctx, flags({ apiKeyEnv: "IK_TEST_KEY", runDir: join(dir, "rundir"), extraBody: '{"top_p":1,"api_key":"zzz-hidden"}' }));
    assert.equal(code, 0);
    first = JSON.parse(out.join(""));
    assert.equal(first.kind, "serve_benchmark");
    assert.equal(first.complete, true);
    // The version the server states (the mock's vLLM /version), as no --engine-version was given.
    assert.deepEqual(first.identity.engine, { name: "vllm", version: "0.11.0", version_source: "/version", kind_source: "owned_by", kind_detail: "owned_by=vllm" });
    assert.equal(first.identity.workload.prompt_set.name, "builtin:default");
    const all = first.data.buckets.all;
    assert.equal(all.n_requests, 12);
    assert.ok(Math.abs(all.tpot_ms.median - 4) < 0.4, `tpot ${all.tpot_ms.median}`);
    assert.ok(all.ttft_ms.median >= 25 && all.ttft_ms.median < 40, `ttft ${all.ttft_ms.median}`);
    assert.equal(first.data.rounds.length, 3);
    assert.deepEqual(first.data.token_count_methods, { ids: 12 });
    assert.ok(first.metrics.some((m: any) => m.name === "ttft_ms" && m.stat === "median" && m.subject === "short" && m.ci95));
    const rec = join(env.IK_RUNS_DIR, first.evidence_id);
    for (const a of first.artifacts) {
      const line = execFileSync("sha256sum", [a.path], { cwd: rec, encoding: "utf8" });
      assert.equal(line.split(/\s+/)[0], a.sha256, a.path);
    }
    const rows = (await readFile(join(rec, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(rows.length, 12);
    assert.deepEqual([...new Set(rows.map((r) => r.round))], [0, 1, 2]);
    assert.deepEqual([...new Set(rows.map((r) => r.salt))], [null, "ik-r1", "ik-r2"]);
    const input = JSON.parse(await readFile(join(rec, "inputs", "vllm", "short", "s-1.json"), "utf8"));
    assert.equal(input.max_tokens, 12, "workload fields are kept");
    assert.equal(input.api_key, "***", "secret-looking keys are redacted");
    assert.equal(input.messages[0].content.startsWith("["), false, "round 0 is untagged");
    assert.ok((await readFile(join(dir, "rundir", "metrics", "vllm.json"), "utf8")).includes("per_input_median"));
    const base = mock.base.replace("http://", "");
    for (const f of [...await files(rec), ...await files(join(dir, "rundir"))]) {
      const text = await readFile(f, "utf8");
      assert.ok(!text.includes(env.IK_TEST_KEY), `API key in ${f}`);
      assert.ok(!text.includes("zzz-hidden"), `secret body value in ${f}`);
      assert.ok(!text.includes(base), `base URL in ${f}`);
    }
    assert.match(first.request.args.base_url, /^hmac-sha256:[0-9a-f]{64}$/);
  });

  test("--extend appends rounds to the same configuration", async () => {
    const { ctx, out } = ctxFor();
    const code = await runBenchServe(ctx, flags({ apiKeyEnv: "IK_TEST_KEY", runDir: join(dir, "rundir"), extraBody: '{"top_p":1,"api_key":"zzz-hidden"}', rounds: 2, extend: first.evidence_id }));
    assert.equal(code, 0);
    const rec = JSON.parse(out.join(""));
    assert.equal(rec.data.extends, first.evidence_id);
    assert.equal(rec.data.rounds.length, 5);
    assert.equal(rec.data.buckets.all.n_requests, 20);
    assert.equal(rec.data.outputs_from, first.evidence_id);
  });

  test("--extend refuses another configuration, another prompt set, changed rows, an incomplete record", async () => {
    const refuse = async (over: Partial<BenchServeFlags>, re: RegExp, code: number) => {
      const { ctx } = ctxFor();
      await assert.rejects(runBenchServe(ctx, flags({ apiKeyEnv: "IK_TEST_KEY", runDir: join(dir, "rundir"), extraBody: '{"top_p":1,"api_key":"zzz-hidden"}', extend: first.evidence_id, ...over })),
        (e: unknown) => e instanceof IkError && e.code === code && re.test(e.message));
    };
    await refuse({ maxTokens: 13 }, /these differ: max_tokens/, 64);
    await refuse({ extraBody: '{"api_key":"zzz-hidden","top_p":1}' , cacheSalt: false }, /these differ: cache_salt$/, 64);
    await refuse({ limitPerBucket: 1 }, /limit_per_bucket/, 64);
    const set = join(dir, "set.jsonl");
    await writeFile(set, JSON.stringify({ id: "a", bucket: "short", messages: [{ role: "user", content: "x" }] }) + "\n");
    await refuse({ prompts: set, buckets: [] }, /prompts, prompt_set|prompt_set/, 64);
    await refuse({ extend: "serve_benchmark-20200101T000000Z-00000000" }, /no such record/, 65);
    const rows = join(env.IK_RUNS_DIR, first.evidence_id, "requests.jsonl");
    const text = await readFile(rows, "utf8");
    await writeFile(rows, text.replace('"ok":true', '"ok":false'));
    await refuse({}, /requests\.jsonl' \(requests\) changed/, 65);
    await writeFile(rows, text);
  });

  test("an interrupt keeps the journaled rows and writes an incomplete record (exit 130)", async () => {
    const ac = new AbortController();
    const { ctx, out } = ctxFor(ac.signal);
    setTimeout(() => ac.abort(), 700);
    const code = await runBenchServe(ctx, flags({ rounds: 50, warmup: 0 }));
    assert.equal(code, 130);
    const rec = JSON.parse(out.join(""));
    assert.equal(rec.complete, false);
    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n");
    assert.ok(rows.length >= 2 && rows.length < 200, `${rows.length} rows`);
    assert.ok(rec.limitations.some((l: string) => new RegExp(`interrupted after ${rows.length} of 200 requests`).test(l)), rec.limitations.join("\n"));
    const { ctx: c2 } = ctxFor();
    await assert.rejects(runBenchServe(c2, flags({ rounds: 1, warmup: 0, extend: rec.evidence_id })), /incomplete/);
    // With --allow-incomplete the new record builds on it, and inherits the incompleteness.
    const { ctx: c3, out: o3 } = ctxFor();
    assert.equal(await runBenchServe(c3, flags({ rounds: 1, warmup: 0, extend: rec.evidence_id, allowIncomplete: true })), 0);
    const ext = JSON.parse(o3.join(""));
    assert.equal(ext.data.extends, rec.evidence_id);
    assert.equal(ext.complete, false, "a record built on an interrupted one is not complete");
    assert.match(ext.limitations[0], new RegExp(`extends ${rec.evidence_id}, which is incomplete`));
  });

  test("every request failed: the record's summary says none succeeded (it read 'tokens by ;')", async () => {
    const failing = await serveMock({ engine: "vllm", ttftMs: 1, tpotMs: 1, faults: [parseFault("http500")] });
    try {
      const { ctx, out } = ctxFor();
      assert.equal(await runBenchServe(ctx, flags({ baseUrl: failing.base, rounds: 2, warmup: 0 })), 0);
      const rec = JSON.parse(out.join(""));
      assert.match(rec.summary, /; no request succeeded; 8 failed$/);
      assert.doesNotMatch(rec.summary, /tokens by/);
    } finally {
      await failing.close();
    }
  });

  test("an unreachable server is exit 69; a URL with credentials is refused without echoing them", async () => {
    const { ctx } = ctxFor();
    await assert.rejects(runBenchServe(ctx, flags({ baseUrl: "http://127.0.0.1:9" })), (e: unknown) => e instanceof IkError && e.code === 69);
    await assert.rejects(runBenchServe(ctx, flags({ baseUrl: "http://user:pw@127.0.0.1:9" })),
      (e: unknown) => e instanceof IkError && e.code === 64 && !/pw/.test(e.oneLine()));
  });
});
