/**
 * `bench serve --mode conversations` in process against a loopback mock (the command's whole path
 * except argv parsing):
 * - an interrupt cuts the turns in flight: they are not sent (no row, no failure), exit 130;
 * - every request starts with the run's cache tag, so a rerun's turn 1 is cold while each
 *   conversation's later turns still hit the mock's prefix cache; --no-cache-salt turns it off and
 *   a rerun's turn 1 is served from the cache (the record says so); the args say what was done;
 * - --max-conversations changes the workload identity and is recorded;
 * - the headline counts what ran at once; the record has duration, requests/s and output tok/s.
 * ~6 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runBenchServe } from "../../lib/commands/bench_serve.ts";
import type { BenchServeFlags } from "../../lib/commands/bench_serve_flags.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { type InProcessMock, serveMock } from "../mock/_helpers.ts";

let dir: string;
const env: Record<string, string> = {};

function ctxFor(signal = new AbortController().signal) {
  const out: string[] = [], err: string[] = [];
  const rt = { ...runtime, env: (k: string) => env[k] ?? runtime.env(k), cwd: () => dir };
  const ctx: CommandContext = { runtime: rt, out: (t) => out.push(t), err: (t) => err.push(t), json: true, signal };
  return { ctx, out, err };
}

function flags(base: string, over: Partial<BenchServeFlags> = {}): BenchServeFlags {
  return {
    cmd: "bench-serve", baseUrl: base, model: "mock-model", mode: "conversations", api: "chat", engineKind: "auto", rounds: 5, warmup: 2,
    seed: 0, buckets: [], limitPerBucket: 0, tokenIds: "auto", exactLength: true, cacheSalt: true, timeoutS: 30, idleTimeoutS: 10, resamples: 2000,
    allowIncomplete: false, json: true, concurrency: [], rates: [], maxRequestsPerLevel: 0, refRequests: 5, burstiness: 1, sloMaxFail: 0,
    sweepAll: false, closedLoop: false, failOnSlo: false, ...over,
  } as BenchServeFlags;
}

async function converse(base: string, over: Partial<BenchServeFlags>, signal?: AbortSignal) {
  const { ctx, out, err } = ctxFor(signal);
  const code = await runBenchServe(ctx, flags(base, over));
  const rec = JSON.parse(out.join(""));
  const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return { code, rec, rows, err: err.join("") };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-conv-inproc-"));
  env.IK_RUNS_DIR = join(dir, "runs");
  env.IK_KEY_FILE = join(dir, "endpoint.key");
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("conversations mode in process", () => {
  test("an interrupt: the turns in flight are not sent (no row, not failed), the record is incomplete, exit 130", async () => {
    const mock: InProcessMock = await serveMock({ engine: "vllm", ttftMs: 400, tpotMs: 2 });
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 1000);
      const { code, rec, rows } = await converse(mock.base, { conversations: "synth:4:3:8:4", sessions: 2 }, ac.signal);
      assert.equal(code, 130);
      assert.equal(rec.complete, false);
      assert.ok(rows.length >= 2 && rows.length < 12, `${rows.length} rows`);
      assert.deepEqual(rows.filter((r) => !r.ok).map((r) => r.error_kind), [], "no aborted (or other failed) rows");
      assert.equal(rec.data.turns.reduce((a: number, t: { n_failed: number }) => a + t.n_failed, 0), 0);
      assert.ok(!rec.limitations.some((l: string) => /turn\(s\) failed/.test(l)), rec.limitations.join(" | "));
      assert.equal(rec.data.not_sent_turns + rows.length, 12, "every planned turn is a row or not sent");
      assert.ok(rec.limitations.some((l: string) => new RegExp(`^interrupted: \\d+ of 4 conversation\\(s\\) finished, ${12 - rows.length} turn\\(s\\) not sent$`).test(l)), rec.limitations.join(" | "));
    } finally {
      await mock.close();
    }
  });

  test("the run's cache tag: a rerun's turn 1 is cold, later turns still hit; --no-cache-salt reruns hit on turn 1", async () => {
    const mock: InProcessMock = await serveMock({ engine: "vllm", ttftMs: 10, tpotMs: 1, prefixCacheTokens: 100_000 });
    try {
      const spec = { conversations: "synth:3:3:40:8", sessions: 8 };
      const a = await converse(mock.base, spec);
      const b = await converse(mock.base, spec);
      for (const r of [...a.rows, ...b.rows]) {
        assert.equal(r.ok, true);
        if (r.turn === 1) assert.equal(r.cached_tokens, 0, `${r.conversation} turn 1 of a salted run is cold`);
        else assert.ok(r.cached_tokens > 0, `${r.conversation} turn ${r.turn} reuses its own history`);
      }
      assert.notEqual(a.rows[0].salt, b.rows[0].salt, "one tag per run");
      assert.equal(new Set(a.rows.map((r) => r.salt)).size, 1, "the same tag in every turn of the run");
      assert.match(a.rows[0].salt, /^ik-c[0-9a-f]{8}$/);
      const args = b.rec.request.args;
      assert.equal(args.cache_salt, true);
      for (const k of ["warmup", "rounds", "resamples", "buckets", "limit_per_bucket"]) assert.equal(k in args, false, `args.${k}: conversations have none`);
      assert.equal(b.rec.data.cache_salt.tag, `[${b.rows[0].salt}] `);
      assert.ok(!b.rec.limitations.some((l: string) => /cached prompt tokens on first turns/.test(l)));
      // Unsalted twice: the second run's turn 1 is served from the first's cache, and the record says so.
      const c = await converse(mock.base, { ...spec, cacheSalt: false });
      const d = await converse(mock.base, { ...spec, cacheSalt: false });
      assert.equal(c.code, 0);
      assert.ok(d.rows.filter((r) => r.turn === 1).every((r) => r.cached_tokens > 0 && r.salt === null));
      assert.equal(d.rec.request.args.cache_salt, false);
      assert.equal(d.rec.data.cache_salt, null);
      assert.ok(d.rec.limitations.some((l: string) => /^--no-cache-salt: requests carry no cache tag/.test(l)));
      assert.ok(d.rec.limitations.some((l: string) => /cached prompt tokens on first turns/.test(l)));
      // What ran at once: 3 conversations, not --sessions 8.
      assert.match(a.rec.summary, /: 3 conversation\(s\), 9 turn\(s\) planned \(up to 3 each\), 3 at once; /);
      assert.ok(a.rec.limitations.some((l: string) => /^3 conversations ran at once/.test(l)));
      assert.equal(a.rec.data.sessions_at_once, 3);
      // Throughput: ok turns over the run's duration.
      const tp = a.rec.data.throughput;
      assert.equal(tp.n_turns_ok, 9);
      const first = Math.min(...a.rows.map((r) => r.t_send_ns)), last = Math.max(...a.rows.map((r) => r.t_end_ns));
      assert.ok(Math.abs(tp.duration_s - (last - first) / 1e9) < 1e-3, `${tp.duration_s}`);
      assert.ok(Math.abs(tp.requests_per_s - 9 / tp.duration_s) < 1e-9);
      assert.equal(tp.output_tokens, a.rows.reduce((s, r) => s + r.n_tokens, 0));
      assert.ok(Math.abs(tp.output_tok_s - tp.output_tokens / tp.duration_s) < 1e-9);
      assert.match(a.rec.summary, /; 9 ok turn\(s\) in [\d.]+ s: [\d.]+ req\/s, [\d.]+ output tok\/s$/);
    } finally {
      await mock.close();
    }
  });

  test("--max-conversations on a JSONL: another workload identity, recorded", async () => {
    const mock: InProcessMock = await serveMock({ engine: "vllm", ttftMs: 5, tpotMs: 1 });
    try {
      const file = join(dir, "c.jsonl");
      await writeFile(file, [1, 2, 3].map((i) => JSON.stringify({ id: i, turns: [`question ${i}`] })).join("\n") + "\n");
      const all = await converse(mock.base, { conversations: file });
      const two = await converse(mock.base, { conversations: file, maxConversations: 2 });
      assert.deepEqual(two.rows.map((r) => r.conversation).sort(), ["1", "2"], "numeric ids kept");
      assert.notEqual(two.rec.identity.workload.conversations.sha256, all.rec.identity.workload.conversations.sha256);
      assert.equal(two.rec.identity.workload.conversations.n, 2);
      assert.equal(two.rec.request.args.max_conversations, 2);
      assert.equal(all.rec.request.args.max_conversations, null);
      assert.equal(two.rec.data.source.max_conversations, 2);
    } finally {
      await mock.close();
    }
  });
});
