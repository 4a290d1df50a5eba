/**
 * The counting-method order (ids > usage > tokenizer > sse_events) and the mismatch report. Each
 * stream is built so that a client using the wrong source, or the right sources in the wrong
 * order, gets a different count.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { requestRow, resolveTokenCount } from "../../lib/client/mod.ts";
import { chatChunk, DONE, usageChunk } from "./_raw_server.ts";
import { runScripted, type Timed } from "./_manual.ts";

/** 3 token events carrying 2 + 1 + 3 ids, then usage `usage` (or none). */
function idsStream(usage: number | null): Timed[] {
  const out: Timed[] = [
    { at: 10, text: chatChunk({ role: "assistant", content: "" }) },
    { at: 100, text: chatChunk({ content: "ab" }, { token_ids: [1, 2] }) },
    { at: 110, text: chatChunk({ content: "c" }, { token_ids: [3] }) },
    { at: 130, text: chatChunk({ content: "def" }, { token_ids: [4, 5, 6], finish_reason: "length" }) },
  ];
  if (usage !== null) out.push({ at: 131, text: usageChunk(usage) });
  out.push({ at: 132, text: DONE });
  return out;
}

/** 3 token events without ids, then usage `usage` (or none). */
function plainStream(usage: number | null): Timed[] {
  const out: Timed[] = [
    { at: 100, text: chatChunk({ content: "one two" }) },
    { at: 110, text: chatChunk({ content: " three" }) },
    { at: 120, text: chatChunk({ content: " four five" }, { finish_reason: "length" }) },
  ];
  if (usage !== null) out.push({ at: 121, text: usageChunk(usage) });
  out.push({ at: 122, text: DONE });
  return out;
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

test("ids win over usage; agreeing counts are no mismatch", async () => {
  const r = await runScripted(idsStream(6));
  assert.equal(r.tokenCountMethod, "ids");
  assert.equal(r.nTokens, 6);
  assert.equal(r.nIds, 6);
  assert.equal(r.nUsage, 6);
  assert.equal(r.countMismatch, null);
  assert.deepEqual(Array.from(r.tokenIds), [1, 2, 3, 4, 5, 6]);
  const row = requestRow(r);
  assert.equal(row.k_first, 2, "k_first = ids in the first token event");
  assert.equal(row.tokens_per_event_max, 3);
  assert.equal(row.tpot_ms, 30 / 4); // (130 - 100) / (6 - 2)
  assert.equal(row.decode_tok_s, 4 / 0.03);
});

test("ids and usage disagree: ids are used, the mismatch is reported with both counts", async () => {
  const r = await runScripted(idsStream(7));
  assert.equal(r.tokenCountMethod, "ids");
  assert.equal(r.nTokens, 6);
  const row = requestRow(r);
  assert.equal(row.n_ids, 6);
  assert.equal(row.n_usage, 7);
  assert.equal(row.count_mismatch, "ids 6 != usage 7");
});

test("usage wins over SSE events (and over a tokenizer) when no ids were streamed", async () => {
  let calls = 0;
  const r = await runScripted(plainStream(9), { stream: { countTokens: (t) => (calls++, words(t)) } });
  assert.equal(r.nTokenEvents, 3);
  assert.equal(r.tokenCountMethod, "usage");
  assert.equal(r.nTokens, 9, "usage.completion_tokens, not the 3 events nor the 5 words");
  assert.equal(r.nIds, null);
  assert.equal(r.countMismatch, null);
  assert.equal(calls, 0, "the tokenizer is not consulted when usage exists");
  const row = requestRow(r);
  assert.equal(row.k_first, 1);
  assert.equal(row.tokens_per_event_max, null);
  assert.equal(row.tpot_ms, 20 / 8);
});

test("tokenizer re-count when there are neither ids nor usage", async () => {
  const r = await runScripted(plainStream(null), { stream: { countTokens: words } });
  assert.equal(r.tokenCountMethod, "tokenizer");
  assert.equal(r.nTokens, 5);
});

test("a tokenizer re-count below the token events is raised to them and said (6 for 12 events made TPOT 2x)", () => {
  const ev = { nIds: 0, usage: null, nTokenEvents: 12, text: "The unbelievable", reasoning: "", toolArguments: "" };
  const c = resolveTokenCount(ev, () => 6);
  assert.deepEqual([c.nTokens, c.method], [12, "tokenizer"]);
  assert.equal(c.countMismatch, "tokenizer 6 < 12 token events: counted as 12");
  const fine = resolveTokenCount({ ...ev, nTokenEvents: 4 }, () => 6);
  assert.deepEqual([fine.nTokens, fine.countMismatch], [6, null]);
});

test("SSE events last: no ids, no usage, no tokenizer", async () => {
  const r = await runScripted(plainStream(null));
  assert.equal(r.tokenCountMethod, "sse_events");
  assert.equal(r.nTokens, 3);
  assert.equal(requestRow(r).tpot_ms, 10);
});

test("trtllm repeats usage on every chunk: the last one counts", async () => {
  const chunk = (content: string, n: number, fr: string | null = null) =>
    `data: ${
      JSON.stringify({
        choices: [{ index: 0, delta: { content }, ...(fr ? { finish_reason: fr } : {}) }],
        usage: { prompt_tokens: 3, completion_tokens: n, total_tokens: 3 + n },
      })
    }\n\n`;
  const r = await runScripted([
    {
      at: 1,
      text: `data: ${
        JSON.stringify({
          choices: [{ index: 0, delta: { role: "assistant" } }],
          usage: { completion_tokens: 0 },
        })
      } \n\n`,
    },
    { at: 10, text: chunk("a", 1) },
    { at: 20, text: chunk("bc", 3, "stop") },
    { at: 21, text: DONE },
  ]);
  assert.equal(r.tokenCountMethod, "usage");
  assert.equal(r.nTokens, 3);
  assert.equal(r.nTokenEvents, 2);
});

test("ids from logprobs: llama.cpp content[].id and vLLM token_id:N strings", async () => {
  const lp = (ids: number[]) => ({
    content: ids.map((id) => ({ id, token: "t", logprob: -0.1, top_logprobs: [] })),
  });
  const r1 = await runScripted([
    { at: 10, text: chatChunk({ content: "a" }, { logprobs: lp([5]) }) },
    { at: 20, text: chatChunk({ content: "bc" }, { logprobs: lp([6, 7]) }) },
    { at: 30, text: chatChunk({}, { finish_reason: "stop" }) + usageChunk(4) + DONE },
  ]);
  assert.equal(r1.tokenCountMethod, "ids");
  assert.equal(r1.nTokens, 3);
  assert.equal(r1.countMismatch, "ids 3 != usage 4");
  const completions = (text: string, tokens: string[], fr: string | null) =>
    `data: ${
      JSON.stringify({
        choices: [{
          index: 0,
          text,
          logprobs: { tokens, token_logprobs: tokens.map(() => -1) },
          finish_reason: fr,
        }],
      })
    }\n\n`;
  const r2 = await runScripted([
    { at: 10, text: completions(" Paris", ["token_id:12366"], null) },
    { at: 20, text: completions(".", ["token_id:13"], "length") + DONE },
  ], { api: "completions" });
  assert.equal(r2.tokenCountMethod, "ids");
  assert.deepEqual(Array.from(r2.tokenIds), [12366, 13]);
  // OpenAI-style logprobs carry token strings, not ids: they are not counted as ids.
  const r3 = await runScripted([
    { at: 10, text: completions(" Paris", [" Paris"], null) },
    { at: 20, text: completions(".", ["."], "length") + DONE },
  ], { api: "completions" });
  assert.equal(r3.tokenCountMethod, "sse_events");
});

test("completions token_ids (vLLM, trtllm detokenize:false) are ids; an ids-only event is a token event", async () => {
  const c = (text: string, ids: number[], fr: string | null) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, text, token_ids: ids, finish_reason: fr }] })}\n\n`;
  const r = await runScripted([
    { at: 10, text: c("", [1, 2], null) },
    { at: 20, text: c("", [3], "length") },
    { at: 21, text: DONE },
  ], { api: "completions" });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.nTokenEvents, 2);
  assert.equal(r.nTokens, 3);
  assert.equal(r.tokenCountMethod, "ids");
});

test("resolveTokenCount directly: the order, and usage that is not an integer is ignored", () => {
  const base = { nIds: 0, usage: null, nTokenEvents: 4, text: "a b", reasoning: "", toolArguments: "" };
  assert.equal(resolveTokenCount({ ...base, nIds: 2, usage: { completion_tokens: 5 } }).method, "ids");
  assert.equal(resolveTokenCount({ ...base, usage: { completion_tokens: 5 } }).method, "usage");
  assert.equal(resolveTokenCount({ ...base, usage: { completion_tokens: "3" } }).method, "sse_events");
  assert.equal(resolveTokenCount({ ...base, nTokenEvents: 2 }, words).nTokens, 2);
  assert.equal(resolveTokenCount({ ...base, text: "" }, words).method, "sse_events");
});

test("absurd usage is not trusted: flagged in count_mismatch, the count falls back (tokenizer, else events)", async () => {
  const cases: [unknown, RegExp][] = [
    [1e300, /^usage 1e\+300 is not a non-negative safe integer: not trusted$/],
    [2 ** 53, /is not a non-negative safe integer: not trusted$/],
    [-3, /^usage -3 is not a non-negative safe integer: not trusted$/],
    [2.5, /^usage 2\.5 is not/],
    ["9", /^usage "9" is not/],
    [0, /^usage 0 < 3 token events: not trusted$/],
    [2, /^usage 2 < 3 token events: not trusted$/],
  ];
  for (const [v, want] of cases) {
    const stream = plainStream(null);
    stream.splice(stream.length - 1, 0, {
      at: 121,
      text: `data: ${JSON.stringify({ choices: [], usage: { completion_tokens: v } })}\n\n`,
    });
    const r = await runScripted(stream);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.tokenCountMethod, "sse_events", String(v));
    assert.equal(r.nTokens, 3, String(v));
    assert.match(r.countMismatch ?? "", want);
    assert.equal(requestRow(r).count_mismatch, r.countMismatch);
    const t = await runScripted(stream, { stream: { countTokens: words } });
    assert.equal(t.tokenCountMethod, "tokenizer", String(v));
    assert.equal(t.nTokens, 5);
    assert.match(t.countMismatch ?? "", want);
  }
});

test("usage equal to the token events is trusted; absurd usage next to ids keeps the ids-vs-usage report", async () => {
  const eq = await runScripted(plainStream(3));
  assert.equal(eq.tokenCountMethod, "usage");
  assert.equal(eq.countMismatch, null);
  const r = await runScripted(idsStream(0));
  assert.equal(r.tokenCountMethod, "ids");
  assert.equal(r.nTokens, 6);
  assert.equal(r.nUsage, 0);
  assert.equal(r.countMismatch, "ids 6 != usage 0; usage 0 < 3 token events: not trusted");
  const big = resolveTokenCount({
    nIds: 4,
    usage: { completion_tokens: 1e300 },
    nTokenEvents: 2,
    text: "",
    reasoning: "",
    toolArguments: "",
  });
  assert.equal(big.nUsage, null, "a value that is not a safe integer is not reported as a count");
  assert.equal(big.countMismatch, "usage 1e+300 is not a non-negative safe integer: not trusted");
});
