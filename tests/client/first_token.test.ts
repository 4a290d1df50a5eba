/**
 * The first-token rule and per-event times, on a manual clock. Each stream is built so that a
 * client breaking the rule (timing the role chunk, a usage-only chunk or a finish-only chunk as a
 * token) gets a different answer than the correct one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { itlMs, requestRow } from "../../lib/client/mod.ts";
import { chatChunk, DONE, usageChunk } from "./_raw_server.ts";
import { runScripted } from "./_manual.ts";

const role = chatChunk({ role: "assistant", content: "" });

test("a role chunk 100 ms before the first token does not start TTFT", async () => {
  const r = await runScripted([
    { at: 20, text: role },
    { at: 120, text: chatChunk({ content: "Hello" }) },
    { at: 130, text: chatChunk({ content: " world" }, { finish_reason: "stop" }) },
    { at: 131, text: DONE },
  ]);
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.tFirstMs, 120, "t_first is the first token, not the role chunk at 20");
  assert.equal(requestRow(r).ttft_ms, 120);
  assert.deepEqual(Array.from(r.eventTimesMs), [120, 130]);
  assert.equal(r.nTokenEvents, 2);
  assert.equal(r.nSseEvents, 4);
});

test("llama.cpp's role chunk with content null, and an empty-string content, are not tokens", async () => {
  const r = await runScripted([
    { at: 5, text: chatChunk({ role: "assistant", content: null }) },
    { at: 10, text: chatChunk({ content: "" }) },
    { at: 50, text: chatChunk({ content: "x" }) },
    { at: 60, text: chatChunk({}, { finish_reason: "stop" }) },
    { at: 61, text: DONE },
  ]);
  assert.equal(r.tFirstMs, 50);
  assert.equal(r.nTokenEvents, 1);
});

test("a usage-only chunk is not a token (neither first nor last)", async () => {
  const r = await runScripted([
    { at: 10, text: role },
    { at: 30, text: usageChunk(0) },
    { at: 100, text: chatChunk({ content: "a" }) },
    { at: 110, text: chatChunk({ content: "b" }, { finish_reason: "length" }) },
    { at: 190, text: usageChunk(2) },
    { at: 200, text: DONE },
  ]);
  assert.equal(r.tFirstMs, 100);
  assert.equal(r.tLastMs, 110, "t_last is the last token, not the usage chunk at 190");
  assert.equal(r.tDoneMs, 200);
  assert.equal(r.nTokenEvents, 2);
  const row = requestRow(r);
  assert.equal(row.e2e_ms, 200);
  assert.equal(row.n_tokens, 2);
  assert.equal(row.tpot_ms, 10); // (110 - 100) / (2 - 1)
});

test("a separate finish chunk (SGLang, llama.cpp) does not move t_last", async () => {
  const r = await runScripted([
    { at: 10, text: chatChunk({ content: "a" }) },
    { at: 20, text: chatChunk({ content: "b" }) },
    { at: 70, text: chatChunk({ reasoning_content: null }, { finish_reason: "stop", matched_stop: 2 }) },
    { at: 71, text: DONE },
  ]);
  assert.equal(r.tLastMs, 20);
  assert.equal(r.finishReason, "stop");
});

test("reasoning, tool-call arguments and ids alone are tokens", async () => {
  const r = await runScripted([
    { at: 10, text: chatChunk({ role: "assistant", content: "" }) },
    { at: 40, text: chatChunk({ reasoning_content: "think" }) },
    { at: 50, text: chatChunk({ reasoning: "more" }) },
    {
      at: 55,
      text: chatChunk({
        tool_calls: [{ index: 0, id: "t", type: "function", function: { name: "f", arguments: "" } }],
      }),
    },
    { at: 60, text: chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }) },
    { at: 70, text: chatChunk({ content: "" }, { token_ids: [151645], finish_reason: "stop" }) },
    { at: 71, text: DONE },
  ]);
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.tFirstMs, 40, "reasoning_content is the first token");
  assert.deepEqual(
    Array.from(r.eventTimesMs),
    [40, 50, 60, 70],
    "a tool call with empty arguments (55) is not a token",
  );
  assert.equal(r.reasoning, "thinkmore");
  assert.equal(r.toolArguments, '{"a":1}');
  assert.deepEqual(Array.from(r.eventIds), [0, 0, 0, 1]);
});

test("vLLM's duplicated reasoning/reasoning_content is appended once", async () => {
  const r = await runScripted([
    { at: 10, text: chatChunk({ reasoning: "abc", reasoning_content: "abc" }) },
    { at: 20, text: chatChunk({ content: "x" }, { finish_reason: "stop" }) },
    { at: 21, text: DONE },
  ]);
  assert.equal(r.reasoning, "abc");
  assert.equal(r.text, "x");
});

test("several events in one read share that read's arrival time; ITL is per event", async () => {
  const r = await runScripted([
    { at: 10, text: role + chatChunk({ content: "a" }) },
    { at: 30, text: chatChunk({ content: "b" }) + chatChunk({ content: "c" }) },
    { at: 45, text: chatChunk({ content: "d" }, { finish_reason: "length" }) + usageChunk(4) + DONE },
  ]);
  assert.deepEqual(Array.from(r.eventTimesMs), [10, 30, 30, 45]);
  assert.deepEqual(itlMs(r), [20, 0, 15]);
  assert.equal(r.tDoneMs, 45);
});

test("t_headers and t_send bracket the first token", async () => {
  const r = await runScripted([{
    at: 80,
    text: chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE,
  }], { headersAt: 30 });
  assert.equal(r.tSendMs, 0);
  assert.equal(r.tHeadersMs, 30);
  assert.equal(r.tFirstMs, 80);
});
