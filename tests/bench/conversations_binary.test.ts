/**
 * `bench serve --mode conversations` through dist/ik against `ik mock` (issue 20 §1), whose timing
 * model is TTFT = 10 ms + 0.2 ms × uncached prompt tokens (MOCK.md):
 * - the history is the server's own answers: turn k's usage prompt_tokens is exactly turn 1's plus
 *   (k − 1) × (answer + new turn + per-message overheads), as the mock counts (turn 1 holds the
 *   run's cache tag, one pseudo-token);
 * - with `--prefix-cache-tokens` the later turns are cache hits (the record's cached tokens equal
 *   the mock's `cached=`), and TTFT stays near turn 1's; without it TTFT grows with the history;
 * - think time separates an answer's end from the next turn; a failed turn ends its conversation;
 * - a conversation JSONL (turns, or messages whose user turns are kept), a ShareGPT_V3 file's
 *   multi-turn entries (a seeded sample of --max-conversations), malformed files (65) and
 *   the mode's usage errors (64). Bun only (end to end): ~15 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { makeDatasetFixtures, SHAREGPT_CASES } from "../../scripts/make_dataset_fixtures.ts";

const IN = 200, OUT = 16;
/** The run's cache tag `[ik-c…]` at the start of the first message: one word, one pseudo-token. */
const TAG = 1;
/** Chat prompt tokens of turn k (1-based) as the mock counts: Σ (words + 4) + 3 over the history, plus the tag. */
const promptTokens = (k: number) => TAG + IN + 4 + 3 + (k - 1) * (OUT + 4 + IN + 4);

describe("conversations mode (binary)", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let dir = "";
  let env: Record<string, string> = {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-conv-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const converse = async (base: string, extra: string[]) => {
    const r = await runIk(["bench", "serve", "--mode", "conversations", "--base-url", base, "--model", "mock-model", "--json", ...extra], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const rec = JSON.parse(r.stdout);
    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    return { rec, rows };
  };
  const mockArgs = ["--engine", "vllm", "--ttft-ms", "10", "--tpot-ms", "2", "--prefill-ms-per-token", "0.2", "--request-log"];

  test("with a prefix cache: the history is the server's answers, later turns are cache hits, TTFT stays near turn 1", async () => {
    const mock: MockProc = await startMock([...mockArgs, "--prefix-cache-tokens", "100000"]);
    try {
      const { rec, rows } = await converse(mock.base, ["--conversations", `synth:4:4:${IN}:${OUT}`, "--sessions", "2"]);
      const turns = rec.data.turns as { turn: number; n_ok: number; prompt_tokens_mean: number; cached_tokens_mean: number; ttft_p50_vs_turn1: number }[];
      assert.deepEqual(turns.map((t) => [t.turn, t.n_ok]), [[1, 4], [2, 4], [3, 4], [4, 4]]);
      for (const t of turns) assert.equal(t.prompt_tokens_mean, promptTokens(t.turn), `turn ${t.turn}: the history holds the server's own ${OUT}-token answers`);
      // The mock's own log: each turn after the first finds the previous request's whole 16-token blocks.
      const logged = mock.proc.stdout().split("\n").filter((l) => l.startsWith("ik-request ")).map((l) => ({ prompt: Number(/prompt=(\d+)/.exec(l)![1]), cached: Number(/cached=(\d+)/.exec(l)![1]) }));
      assert.equal(logged.length, 16);
      for (const l of logged) {
        const k = turns.find((t) => t.prompt_tokens_mean === l.prompt)!.turn;
        assert.equal(l.cached, k === 1 ? 0 : Math.floor(promptTokens(k - 1) / 16) * 16, `turn ${k}: cached ${l.cached}`);
      }
      for (const r of rows) assert.equal(r.cached_tokens, logged.find((l) => l.prompt === r.prompt_tokens)!.cached, "the record's cached tokens are the server's");
      assert.ok(turns[3].ttft_p50_vs_turn1 < 1.4, `turn 4 / turn 1 TTFT ${turns[3].ttft_p50_vs_turn1}`);
      assert.match(rec.summary, /% of turn 4's prompt cached/);
      assert.equal(rec.identity.workload.mode, "conversations");
      assert.ok(!rec.limitations.some((l: string) => /cached prompt tokens on first turns/.test(l)), "a cold turn 1");
      // The same seeded conversations again, on the same server: another run, another tag, so turn 1 is cold again.
      const again = await converse(mock.base, ["--conversations", `synth:4:4:${IN}:${OUT}`, "--sessions", "2"]);
      assert.ok(again.rows.filter((r) => r.turn === 1).every((r) => r.cached_tokens === 0), "a rerun's turn 1 is not served from the first run's cache");
      assert.ok(again.rows.filter((r) => r.turn > 1).every((r) => r.cached_tokens > 0), "its later turns still reuse their own history");
      assert.ok(!again.rec.limitations.some((l: string) => /cached prompt tokens on first turns/.test(l)), again.rec.limitations.join(" | "));
      // Without the tag (--no-cache-salt) a rerun's turn 1 is served from the cache, and the record says so.
      await converse(mock.base, ["--conversations", `synth:4:4:${IN}:${OUT}`, "--sessions", "2", "--no-cache-salt"]);
      const warm = await converse(mock.base, ["--conversations", `synth:4:4:${IN}:${OUT}`, "--sessions", "2", "--no-cache-salt"]);
      assert.ok(warm.rec.limitations.some((l: string) => /^the server reported cached prompt tokens on first turns \(mean [\d.]+, \d+% of their prompt\): turn 1 is not a cold prefill/.test(l)), warm.rec.limitations.join(" | "));
    } finally {
      await mock.stop();
    }
  });

  test("without a cache TTFT grows with the history; think time separates the turns; a failed turn ends its conversation", async () => {
    const mock: MockProc = await startMock([...mockArgs, "--fault", "http500@7"]);
    try {
      const { rec, rows } = await converse(mock.base, ["--conversations", `synth:3:4:${IN}:${OUT}`, "--think-time-ms", "120:0"]);
      const turns = rec.data.turns as { turn: number; n_failed: number; ttft_p50_vs_turn1: number; cached_tokens_mean: number | null }[];
      // 10 + 0.2 × 879 against 10 + 0.2 × 207 (the model's truth: about 3.6).
      assert.ok(turns[3].ttft_p50_vs_turn1 > 2.5, `turn 4 / turn 1 TTFT ${turns[3].ttft_p50_vs_turn1}`);
      assert.equal(turns.reduce((a, t) => a + t.n_failed, 0), 1, "the 7th request failed");
      assert.equal(rows.length, 12 - 1, "the failed turn (conversation 2, turn 3) is a row and ended it: its turn 4 was not sent");
      assert.equal(rec.data.not_sent_turns, 1);
      assert.ok(rec.limitations.some((l: string) => /1 turn\(s\) failed; each ended its conversation \(1 later turn\(s\) not sent\)/.test(l)), rec.limitations.join(" | "));
      // Think time: the next turn of a conversation is sent at least 120 ms after the answer ended.
      for (const conv of new Set(rows.map((r) => r.conversation))) {
        const mine = rows.filter((r) => r.conversation === conv).sort((a, b) => a.turn - b.turn);
        for (let i = 1; i < mine.length; i++) {
          const gap = (mine[i].t_send_ns - mine[i - 1].t_end_ns) / 1e6;
          assert.ok(gap >= 119, `${conv} turn ${mine[i].turn}: sent ${gap.toFixed(1)} ms after the answer`);
        }
      }
    } finally {
      await mock.stop();
    }
  });

  test("a conversation JSONL: turns, or messages whose user turns are kept (a system message opens every turn); malformed files 65; usage errors 64", async () => {
    const mock: MockProc = await startMock(mockArgs);
    try {
      const file = join(dir, "convs.jsonl");
      await writeFile(file, [
        JSON.stringify({ id: "a", turns: ["hello there", "tell me more"], max_tokens: 4 }),
        JSON.stringify({ id: "b", messages: [{ role: "system", content: "be brief" }, { role: "user", content: "one two three" }, { role: "assistant", content: "recorded, dropped" }, { role: "user", content: "four five" }], max_tokens: 4 }),
      ].join("\n") + "\n");
      const { rec, rows } = await converse(mock.base, ["--conversations", file]);
      assert.equal(rows.length, 4);
      // b opens every turn with its system message (2+4), then its own user turns and the server's 4-token
      // answer, not the recorded one: turn 1 (2+4) + (3+4) + 3; turn 2 (2+4) + (3+4) + (4+4) + (2+4) + 3;
      // each plus the run's cache tag (TAG) at the start of the first message.
      assert.equal(rows.find((r) => r.conversation === "b" && r.turn === 1).prompt_tokens, TAG + 6 + 7 + 3);
      assert.equal(rows.find((r) => r.conversation === "b" && r.turn === 2).prompt_tokens, TAG + 6 + 7 + 8 + 6 + 3);
      assert.equal(rows.find((r) => r.conversation === "a" && r.turn === 1).prompt_tokens, TAG + (2 + 4) + 3, "no system message: none sent");
      assert.equal(rec.identity.workload.conversations.n, 2);
      // ShareGPT_V3: each entry's human turns (six of the fixture's entries have two: ok-1..5 and human-human), a seeded sample of --max-conversations.
      const fx = makeDatasetFixtures(join(dir, "fx"));
      const sg = await converse(mock.base, ["--conversations", fx["sharegpt.json"], "--max-conversations", "3"]);
      assert.equal(sg.rows.length, 6);
      assert.deepEqual([sg.rec.data.source.kind, sg.rec.data.source.kept, sg.rec.data.source.dropped_fewer_than_two_human_turns], ["sharegpt", 3, SHAREGPT_CASES.length - 6]);
      for (const r of sg.rows) assert.match(String(r.conversation), /^sharegpt-(ok-[1-5]|human-human)$/);
      for (const [text, re] of [["{\"id\": \"x\", \"turns\": []}\n", /convs-bad\.jsonl:1: a conversation needs at least one user turn/], ["{\"turns\": [\"a\"]}\n{oops\n", /convs-bad\.jsonl:2: not valid JSON/]] as [string, RegExp][]) {
        await writeFile(join(dir, "convs-bad.jsonl"), text);
        const r = await runIk(["bench", "serve", "--mode", "conversations", "--base-url", mock.base, "--model", "mock-model", "--conversations", join(dir, "convs-bad.jsonl")], { env });
        assert.equal(r.code, 65, r.stderr);
        assert.match(r.stderr, re);
      }
      for (const [args, re] of [
        [["--mode", "conversations"], /--mode conversations: needs --conversations/],
        [["--mode", "conversations", "--conversations", "synth:2:2"], /--conversations: 'synth:2:2' is not synth:N:T:IN:OUT/],
        [["--mode", "conversations", "--conversations", "synth:2:2:8:4", "--rates", "1"], /--rates: is not for --mode conversations/],
        [["--mode", "conversations", "--conversations", "synth:2:2:8:4", "--think-time-ms", "fast"], /--think-time-ms: 'fast' is not MEAN\[:SD\]/],
        [["--sessions", "2"], /--sessions: is for --mode conversations/],
      ] as [string[], RegExp][]) {
        const r = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", ...args], { env });
        assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, re);
      }
    } finally {
      await mock.stop();
    }
  });
});
