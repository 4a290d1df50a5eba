/**
 * A load level records each request's exact body as it sends it, not when it ends: an open stream
 * then holds no prompt (issue 21: each KB a stream holds for its life is ~3 MB of peak RSS at 1,000
 * streams). The record must still carry every body, once, with its seq.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runLevel } from "../../lib/bench/load_level.ts";
import { PromptPool } from "../../lib/bench/prompt_pool.ts";
import { Runner } from "../../lib/bench/runner.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { fakeRunner, levelWriters, ONE_TOKEN_SSE } from "./_level_fixture.ts";

test("a level writes each request's input record while the request is still open, and every one once", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-level-inputs-"));
  try {
    // Every response waits until the test lets it go.
    const held: (() => void)[] = [];
    const fetch = () =>
      new Promise<Response>((resolve) => held.push(() => resolve(new Response(ONE_TOKEN_SSE, { status: 200, headers: { "content-type": "text/event-stream" } }))));
    const runner = fakeRunner(fetch);
    const { journal, outputs, inputs } = await levelWriters(dir);
    const level = runLevel(
      { index: 0, level: 3, name: "c3", ratePerS: null, workers: 3, durationS: 30, maxRequests: 3, burstiness: 1, seed: [1] },
      { runner, pool: new PromptPool(loadBuiltinPromptSet().prompts), slo: {}, gpuCount: 0, label: "t", journal, outputs, inputs },
    );
    // The three requests are out and unanswered: their bodies are on disk already.
    const until = performance.now() + 5000;
    let lines: { seq: number; body: { messages: unknown[]; max_tokens: number } }[] = [];
    while (performance.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      const text = await readFile(join(dir, "inputs.jsonl"), "utf8");
      lines = text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      if (held.length === 3 && lines.length === 3) break;
    }
    assert.equal(held.length, 3, "three requests in flight");
    assert.equal(lines.length, 3, "their three input records written before any response came");
    assert.deepEqual(lines.map((l) => l.seq).sort(), [0, 1, 2]);
    for (const l of lines) {
      assert.ok(Array.isArray(l.body.messages) && l.body.messages.length > 0, "the exact body, messages and all");
      assert.equal(l.body.max_tokens, 4);
    }
    for (const go of held) go();
    const res = await level;
    await Promise.all([journal.close(), outputs.close(), inputs.close()]);
    assert.equal(res.summary.n_ok, 3);
    const after = (await readFile(join(dir, "inputs.jsonl"), "utf8")).split("\n").filter(Boolean);
    assert.equal(after.length, 3, "each body recorded once");
    assert.equal((await readFile(join(dir, "requests.jsonl"), "utf8")).split("\n").filter(Boolean).length, 3);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a request that cannot be built is a rejected send, as from an async function: the closed loop goes on and the level ends", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-level-throw-"));
  try {
    let calls = 0;
    class Broken extends Runner {
      override body(): Record<string, unknown> {
        calls++;
        throw new Error("cannot build this body");
      }
    }
    const runner = fakeRunner(() => Promise.reject(new Error("nothing is sent")), Broken);
    const sent = runner.stream(loadBuiltinPromptSet().prompts[0], null, null);
    await assert.rejects(sent, /cannot build this body/, "Runner.stream rejects; it does not throw");
    const { journal, outputs, inputs } = await levelWriters(dir);
    const res = await runLevel(
      { index: 0, level: 2, name: "c2", ratePerS: null, workers: 2, durationS: 30, maxRequests: 4, burstiness: 1, seed: [1] },
      { runner, pool: new PromptPool(loadBuiltinPromptSet().prompts), slo: {}, gpuCount: 0, label: "t", journal, outputs, inputs },
    );
    await Promise.all([journal.close(), outputs.close(), inputs.close()]);
    assert.equal(calls, 5, "every one of the 4 sends was tried (and the direct call)");
    assert.equal(res.summary.n_ok, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
