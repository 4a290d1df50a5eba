/**
 * bench serve single mode against the real llama-server (../shared/engines/llama.cpp) through the
 * binary, without --engine-kind: detected as llamacpp, every request at exact length counted by
 * usage, and the median TPOT within 25% of the server's own timings, predicted_ms / (predicted_n − 1)
 * (llama-server's generation clock starts at the first decoded token: server_clock.ts).
 * Bun only (a real engine); --rounds 2 --warmup 0. Budget: ~5 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";

const skip = llamaSkip();

describe("bench serve single against a real llama-server", { skip }, () => {
  let server: LlamaServer;
  let dir = "";
  before(async () => {
    server = await startLlama();
    dir = await mkdtemp(join(tmpdir(), "ik-llama-single-"));
  });
  after(async () => {
    server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("detected llamacpp, exact length by usage, TPOT matches the server's own clock", async () => {
    const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    const r = await runIk(["bench", "serve", "--base-url", server.url, "--model", "tiny-llama", "--rounds", "2", "--warmup", "0", "--json"], { env, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    assert.equal(rec.identity.engine.name, "llamacpp");
    assert.equal(rec.identity.engine.kind_source, "owned_by");
    assert.equal(rec.complete, true);
    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(rows.length, 24);
    for (const row of rows) {
      assert.equal(row.ok, true, row.error);
      assert.equal(row.token_count_method, "usage", row.id);
      assert.equal(row.n_tokens, row.max_tokens, `${row.id}: exact length`);
      assert.equal(row.k_first_assumed, true);
      assert.ok(row.server_timings && row.server_timings.predicted_n === row.n_tokens, `${row.id}: server timings`);
    }
    const clock = rec.data.server_clock.all;
    const client = rec.data.buckets.all.tpot_ms.median;
    assert.ok(Math.abs(client - clock.server_tpot_ms_median) <= 0.25 * clock.server_tpot_ms_median,
      `client TPOT ${client} vs server ${clock.server_tpot_ms_median}`);
    assert.ok(clock.client_minus_server_e2e_ms_median > 0, "client time includes the server's");
  });
});

if (skip) test("real llama-server single mode (skipped)", { skip }, () => {});
