/**
 * `bench serve --mode conversations` against the REAL llama-server (../shared/engines/llama.cpp,
 * one slot, its prompt cache on by default): each later turn's history is the previous request's
 * prompt plus the server's own answer, so llama-server reuses that prefix from the slot, and its
 * own count of it (usage `prompt_tokens_details.cached_tokens`, else `timings.cache_n`: the second
 * truth, beside the mock's `cached=`) says so: the
 * record's cached tokens are positive from turn 2 on and never more than the previous turn's
 * prompt and answer. Bun only (a real engine). Budget: ~6 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";

describe("conversations against a real llama-server", { skip: llamaSkip() }, () => {
  let server: LlamaServer;
  let dir = "";
  let env: Record<string, string> = {};
  before(async () => {
    server = await startLlama();
    dir = await mkdtemp(join(tmpdir(), "ik-llama-conv-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("turns 2 and 3 reuse the slot's prefix: timings.cache_n > 0, at most the previous prompt plus its answer", async () => {
    const r = await runIk(["bench", "serve", "--mode", "conversations", "--base-url", server.url, "--model", "tiny-llama", "--conversations", "synth:1:3:40:8", "--json"], { env, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l)).sort((a, b) => a.turn - b.turn);
    assert.deepEqual(rows.map((x) => [x.turn, x.ok]), [[1, true], [2, true], [3, true]]);
    for (let i = 1; i < rows.length; i++) {
      assert.ok(rows[i].prompt_tokens > rows[i - 1].prompt_tokens, "the history grows");
      assert.ok(rows[i].cached_tokens > 0, `turn ${rows[i].turn}: cache_n ${rows[i].cached_tokens}`);
      assert.ok(rows[i].cached_tokens <= rows[i - 1].prompt_tokens + rows[i - 1].n_tokens, `turn ${rows[i].turn}: cache_n ${rows[i].cached_tokens} <= ${rows[i - 1].prompt_tokens} + ${rows[i - 1].n_tokens}`);
    }
    assert.ok(rec.data.turns[2].cached_tokens_mean > 0);
  });
});
