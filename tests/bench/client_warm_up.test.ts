/** The client's warm-up runs ik's real request path on a canned answer, in memory: every request parses whole, nothing reaches the network, bounded by count, time and abort. */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { cannedStream, warmUpClient } from "../../lib/bench/client_warm_up.ts";
import { Runner } from "../../lib/bench/runner.ts";
import { parseEndpoint } from "../../lib/client/mod.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";

/** A loopback listener that counts the connections made to it. */
async function countingServer(): Promise<{ base: string; connections(): number; close(): Promise<void> }> {
  let n = 0;
  const srv = createServer((s) => {
    n++;
    s.destroy();
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  return { base: `http://127.0.0.1:${port}`, connections: () => n, close: () => new Promise((r) => srv.close(() => r())) };
}

function runner(base: string, api: "chat" | "completions"): Runner {
  return new Runner({
    ep: parseEndpoint(base), api, engineKind: "vllm", model: "m", maxTokens: 8, tokenIds: "auto", exactLength: true,
    extraBody: {}, chatTemplateKwargs: {}, timeoutMs: 10_000, idleTimeoutMs: 5_000,
  });
}

test("every warm-up request runs the whole path and parses whole (chat and completions); the server is never contacted", async () => {
  const srv = await countingServer();
  try {
    const prompts = loadBuiltinPromptSet().prompts;
    for (const api of ["chat", "completions"] as const) {
      const w = await warmUpClient(runner(srv.base, api), prompts, { requests: 60, budgetMs: 30_000, settleMs: 0 });
      // The warm-up stops at the first request its canned answer fails: 60 means each one was ok.
      assert.equal(w.requests, 60, api);
      assert.ok(w.ms > 0);
    }
    assert.equal(srv.connections(), 0, "nothing was sent");
  } finally {
    await srv.close();
  }
});

test("bounded by its time budget and by an abort", async () => {
  const prompts = loadBuiltinPromptSet().prompts;
  const r = runner("http://127.0.0.1:9", "chat");
  assert.equal((await warmUpClient(r, prompts, { requests: 1_000_000, budgetMs: 0, settleMs: 0 })).requests, 0);
  const few = await warmUpClient(r, prompts, { requests: 1_000_000, budgetMs: 30, settleMs: 0 });
  assert.ok(few.requests >= 1 && few.requests < 1_000_000 && few.ms < 5_000, JSON.stringify(few));
  const ac = new AbortController();
  ac.abort();
  assert.equal((await warmUpClient(r, prompts, { signal: ac.signal, settleMs: 0 })).requests, 0);
  assert.equal((await warmUpClient(r, [], { settleMs: 0 })).requests, 0, "no prompts, no requests");
});

test("the canned answer is chunked HTTP/1.1 in three reads, its events in order, a usage chunk and [DONE] last", () => {
  const text = cannedStream("chat", 3).map((b) => new TextDecoder().decode(b));
  assert.equal(text.length, 3);
  assert.ok(text[0].startsWith("HTTP/1.1 200 OK\r\n") && /transfer-encoding: chunked/.test(text[0]));
  assert.ok(text[2].endsWith("data: [DONE]\n\n\r\n0\r\n\r\n"));
  const all = text.join("");
  assert.deepEqual([...all.matchAll(/"content":" (w\d)"/g)].map((m) => m[1]), ["w0", "w1", "w2"]);
  assert.match(all, /"usage":\{"prompt_tokens":16,"total_tokens":19,"completion_tokens":3\}/);
  // Each chunk's size line states its bytes.
  for (const m of all.matchAll(/\r\n([0-9a-f]+)\r\n(data: [^\r]*\n\n)\r\n/g)) assert.equal(parseInt(m[1], 16), m[2].length);
});
