/**
 * Streams and bodies as real engines and routers put them on the wire (shapes read from the
 * vLLM, SGLang, llama.cpp, TensorRT-LLM sources and the OpenAI SDK; see
 * ../../../shared/spec/wire-formats.md), each one built so that a client that mis-measures or
 * mis-classifies it gets a different answer. Manual clock for the timing rules, a loopback
 * socket for what only a socket can show (reset after [DONE], gzip, a body kept open).
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { fakeFetch } from "./_replay.ts";
import { runScripted } from "./_manual.ts";
import { chatChunk, DONE, type RawServer, rawServer, type Step } from "./_raw_server.ts";
import { CLIENTS } from "./_clients.ts";


const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
/** A chunk as vLLM/OpenAI shape it: id, object, created, model, then choices (and more). */
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  data({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices, ...extra });
const usageOf = (completion: number) => ({
  prompt_tokens: 7,
  total_tokens: 7 + completion,
  completion_tokens: completion,
});

describe("vLLM", () => {
  test("continuous_usage_stats: usage on every chunk, the final usage block wins", async () => {
    const r = await runScripted([
      {
        at: 1,
        text: chunk([{ index: 0, delta: { role: "assistant", content: "" } }], { usage: usageOf(0) }),
      },
      { at: 2, text: chunk([{ index: 0, delta: { content: "a" } }], { usage: usageOf(1) }) },
      { at: 3, text: chunk([{ index: 0, delta: { content: "bc" } }], { usage: usageOf(3) }) },
      {
        at: 4,
        text: chunk([{ index: 0, delta: { content: "" }, finish_reason: "stop", stop_reason: null }], {
          usage: usageOf(4),
        }),
      },
      { at: 5, text: chunk([], { usage: usageOf(4) }) },
      // a later block without completion_tokens must not erase the good one
      { at: 6, text: chunk([], { usage: { prompt_tokens: 7 } }) + DONE },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokens, 4);
    assert.equal(r.tokenCountMethod, "usage");
    assert.equal(r.nTokenEvents, 2);
    assert.equal(r.finishReason, "stop");
  });

  test('reasoning-only events are tokens ("reasoning" text with "reasoning_content":null), counted once', async () => {
    const r = await runScripted([
      { at: 1, text: chatChunk({ role: "assistant", content: "", reasoning_content: null }) },
      { at: 10, text: chatChunk({ reasoning: "Let", reasoning_content: null }) },
      { at: 20, text: chatChunk({ reasoning: " me", reasoning_content: " me" }) }, // validator copy
      { at: 30, text: chatChunk({ content: "Hi", reasoning_content: null }, { finish_reason: "stop" }) },
      { at: 31, text: DONE },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.tFirstMs, 10, "the first reasoning token starts TTFT");
    assert.equal(r.nTokenEvents, 3);
    assert.equal(r.reasoning, "Let me");
    assert.equal(r.text, "Hi");
  });

  test("return_token_ids: prompt_token_ids never count, the EOS chunk (content '') is a token event", async () => {
    const r = await runScripted([
      {
        at: 1,
        text: chunk([{
          index: 0,
          delta: { role: "assistant", content: "" },
          logprobs: null,
          finish_reason: null,
        }], {
          usage: null,
          prompt_token_ids: [1, 2, 3, 4, 5, 6, 7],
        }),
      },
      { at: 10, text: chunk([{ index: 0, delta: { content: "Hello wor" }, token_ids: [11, 12, 13] }]) },
      { at: 20, text: chunk([{ index: 0, delta: { content: "ld" }, token_ids: [14] }]) },
      {
        at: 30,
        text: chunk([{
          index: 0,
          delta: { content: "" },
          finish_reason: "stop",
          stop_reason: null,
          token_ids: [2],
        }]),
      },
      { at: 31, text: chunk([], { usage: usageOf(5) }) + DONE },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.tokenCountMethod, "ids");
    assert.equal(r.nTokens, 5);
    assert.deepEqual(Array.from(r.tokenIds), [11, 12, 13, 14, 2]);
    assert.equal(r.countMismatch, null);
    assert.equal(r.nTokenEvents, 3);
    assert.equal(r.tLastMs, 30, "the EOS chunk is the last token event");
    const row = requestRow(r);
    assert.equal(row.k_first, 3);
    assert.equal(row.tpot_ms, 10, "(30 - 10) ms over 5 - 3 tokens");
  });

  test("return_tokens_as_token_ids: 'token_id:N' logprobs are ids (chat and completions)", async () => {
    const lp = (ids: number[]) => ({
      content: ids.map((id) => ({ token: `token_id:${id}`, logprob: -0.1, bytes: [1], top_logprobs: [] })),
    });
    const chat = await runScripted([
      { at: 1, text: chatChunk({ role: "assistant", content: "" }) },
      { at: 5, text: chatChunk({ content: "ab" }, { logprobs: lp([100, 101]) }) },
      { at: 9, text: chatChunk({ content: "c" }, { logprobs: lp([102]), finish_reason: "length" }) + DONE },
    ]);
    assert.equal(chat.tokenCountMethod, "ids");
    assert.equal(chat.nTokens, 3);
    assert.equal(requestRow(chat).k_first, 2);
    const comp = await runScripted([
      {
        at: 5,
        text: data({
          id: "cmpl-1",
          object: "text_completion",
          choices: [{
            index: 0,
            text: " Paris",
            logprobs: {
              text_offset: [0],
              token_logprobs: [-0.1],
              tokens: ["token_id:3681"],
              top_logprobs: [null],
            },
            finish_reason: null,
            stop_reason: null,
            prompt_token_ids: [1, 2, 3],
            token_ids: null,
          }],
          usage: null,
        }),
      },
      {
        at: 9,
        text: data({
          id: "cmpl-1",
          object: "text_completion",
          choices: [{
            index: 0,
            text: ".",
            logprobs: {
              text_offset: [6],
              token_logprobs: [-0.2],
              tokens: ["token_id:13"],
              top_logprobs: [null],
            },
            finish_reason: "length",
          }],
          usage: null,
        }) + DONE,
      },
    ], { api: "completions" });
    assert.equal(comp.ok, true, comp.error ?? "");
    assert.deepEqual(Array.from(comp.tokenIds), [3681, 13]);
    assert.equal(comp.tokenCountMethod, "ids");
  });

  test("merged multi-token single event: n_tokens == k_first gives null tpot/decode, never Infinity or NaN", async () => {
    const r = await runScripted([
      {
        at: 10,
        text: chunk([{ index: 0, delta: { content: "abc" }, token_ids: [1, 2, 3], finish_reason: "length" }]),
      },
      { at: 11, text: DONE },
    ]);
    const row = requestRow(r);
    assert.equal(row.ok, true);
    assert.equal(row.n_tokens, 3);
    assert.equal(row.k_first, 3);
    assert.equal(row.tpot_ms, null);
    assert.equal(row.decode_tok_s, null);
    assert.equal(row.tokens_per_event_max, 3);
    assert.equal(row.e2e_ms, 11);
  });
});

describe("llama.cpp", () => {
  test("held-back first token: logprobs on the role chunk make it a token event; timings and prompt_progress are not tokens", async () => {
    const lp = (id: number, token: string) => ({
      content: [{
        id,
        token,
        bytes: [],
        logprob: -0.5,
        top_logprobs: [{ id, token, bytes: [], logprob: -0.5 }],
      }],
    });
    const c = (delta: unknown, extra: Record<string, unknown> = {}, top: Record<string, unknown> = {}) =>
      data({
        choices: [{ finish_reason: null, index: 0, delta, ...extra }],
        created: 1,
        id: "chatcmpl-x",
        model: "m",
        system_fingerprint: "b1-abc",
        object: "chat.completion.chunk",
        ...top,
      });
    const r = await runScripted([
      {
        at: 5,
        text: c({ role: "assistant", content: null }, {}, {
          prompt_progress: { total: 10, cache: 0, processed: 10, time_ms: 4 },
        }),
      },
      { at: 20, text: c({ role: "assistant", content: null }, { logprobs: lp(300, "<") }) }, // text held back
      { at: 30, text: c({ content: "<b" }, { logprobs: lp(301, "b") }) },
      { at: 40, text: c({ content: "!" }, { logprobs: lp(302, "!") }, { timings: { predicted_n: 3 } }) },
      {
        at: 50,
        text: data({
          choices: [{ finish_reason: "length", index: 0, delta: {} }],
          created: 1,
          id: "chatcmpl-x",
          model: "m",
          object: "chat.completion.chunk",
        }),
      },
      {
        at: 51,
        text: data({ choices: [], usage: usageOf(3), timings: { prompt_n: 10, predicted_n: 3 } }) + DONE,
      },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.tFirstMs, 20, "the held-back token's event carries its id");
    assert.equal(r.nTokenEvents, 3);
    assert.equal(r.tokenCountMethod, "ids");
    assert.equal(r.nTokens, 3);
    assert.deepEqual(Array.from(r.tokenIds), [300, 301, 302], "top_logprobs ids are not output ids");
    assert.equal(r.countMismatch, null);
  });

  test("a mid-stream error with no [DONE] is a protocol failure", async () => {
    const r = await runScripted([
      { at: 1, text: chatChunk({ content: "a" }) },
      { at: 2, text: data({ error: { code: 500, message: "slot unavailable", type: "server_error" } }) },
    ]);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /error event mid-stream: slot unavailable/);
  });

  test("older builds' `error: {json}` line (server_sent_event(sink, \"error\", …)), then [DONE], fails the request with the server's message", async () => {
    // ggml-org/llama.cpp examples/server/server.cpp handle_completions_impl: the error handler
    // writes `error: ` + the JSON, and OpenAI-compatible streams then get `data: [DONE]`.
    const after = await runScripted([
      { at: 1, text: chatChunk({ content: "Hello" }) },
      { at: 2, text: chatChunk({ content: " world" }) },
      { at: 3, text: 'error: {"code":500,"message":"Input prompt is too big compared to KV size. Please try increasing KV size.","type":"server_error"}\n\n' + DONE },
    ]);
    assert.equal(after.ok, false);
    assert.equal(after.errorKind, "protocol");
    assert.match(after.error ?? "", /error event mid-stream: Input prompt is too big compared to KV size/);
    assert.equal(after.nTokenEvents, 2);
    const before = await runScripted([
      { at: 1, text: 'error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}\n\n' + DONE },
    ]);
    assert.equal(before.errorKind, "protocol");
    assert.match(before.error ?? "", /exceeds the available context size/);
  });
});

test("tool-call argument deltas are tokens; a name-only header chunk is not", async () => {
  const r = await runScripted([
    { at: 1, text: chatChunk({ role: "assistant", content: null }) },
    {
      at: 5,
      text: chatChunk({
        tool_calls: [{
          index: 0,
          id: "call_1",
          type: "function",
          function: { name: "get_weather", arguments: "" },
        }],
      }),
    },
    { at: 10, text: chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) },
    { at: 20, text: chatChunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] }) },
    { at: 30, text: chatChunk({}, { finish_reason: "tool_calls" }) + DONE },
  ]);
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.tFirstMs, 10);
  assert.equal(r.nTokenEvents, 2);
  assert.equal(r.toolArguments, '{"city": "Paris"}');
  assert.equal(r.finishReason, "tool_calls");
});

describe("SGLang", () => {
  test("msgspec shape: separate finish chunk with matched_stop and a null-only delta is not a token", async () => {
    const c = (delta: unknown, fr: string | null = null, ms: unknown = null) =>
      data({
        id: "0f3c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta, logprobs: null, finish_reason: fr, matched_stop: ms }],
      });
    const r = await runScripted([
      { at: 1, text: c({ reasoning_content: null, role: "assistant", content: "" }) },
      { at: 10, text: c({ reasoning_content: null, content: "one two three" }) }, // --stream-interval 3
      { at: 20, text: c({ reasoning_content: null, content: " four" }) },
      { at: 30, text: c({ reasoning_content: null }, "stop", 151645) },
      {
        at: 31,
        text: data({
          id: "0f3c",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [],
          usage: { ...usageOf(4), prompt_tokens_details: null, reasoning_tokens: 0 },
        }) + DONE,
      },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokenEvents, 2);
    assert.equal(r.tLastMs, 20, "the finish chunk is not the last token");
    assert.equal(r.finishReason, "stop");
    assert.equal(r.nTokens, 4);
    const row = requestRow(r);
    assert.equal(row.k_first, 1);
    assert.equal(row.tpot_ms, 10 / 3);
  });
});

describe("TensorRT-LLM", () => {
  const t = (choices: unknown[], usage?: unknown) =>
    `data: ${
      JSON.stringify({
        id: `chatcmpl-${Math.random().toString(16).slice(2)}`,
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices,
        ...(usage ? { usage } : {}),
      })
    } \n\n`;
  test("trailing space, per-chunk ids, usage on every chunk, multi-token text_diff, reasoning_content ''", async () => {
    const r = await runScripted([
      { at: 1, text: t([{ index: 0, delta: { role: "assistant" } }], usageOf(0)) },
      {
        at: 10,
        text: t([{
          index: 0,
          delta: { content: "a b", reasoning_content: "" },
          avg_decoded_tokens_per_iter: 2,
        }], usageOf(2)),
      },
      {
        at: 20,
        text: t([{
          index: 0,
          delta: { content: " c", reasoning_content: "" },
          finish_reason: "length",
          stop_reason: null,
          avg_decoded_tokens_per_iter: 1.5,
        }], usageOf(3)),
      },
      { at: 21, text: t([], usageOf(3)) + "data: [DONE] \n\n" },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokens, 3);
    assert.equal(r.tokenCountMethod, "usage");
    assert.equal(r.nTokenEvents, 2);
    assert.equal(r.endedWithDone, true);
  });
  test("a stream cut by an exception (no [DONE], no finish_reason) is protocol 'truncated'", async () => {
    const r = await runScripted([
      { at: 1, text: t([{ index: 0, delta: { role: "assistant" } }], usageOf(0)) },
      { at: 10, text: t([{ index: 0, delta: { content: "a", reasoning_content: "" } }], usageOf(1)) },
    ]);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /^truncated/);
    assert.equal(r.nTokens, 1, "what arrived is still counted");
    assert.equal(requestRow(r).e2e_ms, null);
  });
});

describe("OpenAI and SSE framing", () => {
  test("obfuscation and usage:null on every chunk; `event: error` after tokens fails the request", async () => {
    const ok = await runScripted([
      {
        at: 1,
        text: chunk([{
          index: 0,
          delta: { role: "assistant", content: "", refusal: null },
          finish_reason: null,
        }], {
          usage: null,
          obfuscation: "aZ",
          service_tier: "default",
        }),
      },
      { at: 5, text: chunk([{ index: 0, delta: { content: "Hi" } }], { usage: null, obfuscation: "q" }) },
      {
        at: 6,
        text: chunk([{ index: 0, delta: {}, finish_reason: "stop" }], { usage: null, obfuscation: "Xy" }),
      },
      { at: 7, text: chunk([], { usage: usageOf(1), obfuscation: "" }) + DONE },
    ]);
    assert.equal(ok.ok, true, ok.error ?? "");
    assert.equal(ok.nTokens, 1);
    const bad = await runScripted([
      { at: 1, text: chatChunk({ content: "a" }) },
      {
        at: 2,
        text: 'event: error\ndata: {"error":{"message":"The server had an error","type":"server_error"}}\n\n',
      },
    ]);
    assert.equal(bad.errorKind, "protocol");
    assert.match(bad.error ?? "", /The server had an error/);
  });

  test("`data:` without a space, CRLF line ends and `: ping` keep-alive comments", async () => {
    const r = await runScripted([
      { at: 1, text: ": ping - 2025-01-01 00:00:00\r\n\r\n" },
      { at: 5, text: 'data:{"choices":[{"index":0,"delta":{"content":"a"}}]}\r\n\r\n' },
      { at: 6, text: ": ping\r\n\r\n" },
      { at: 9, text: 'data:{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}\r' },
      { at: 10, text: "\n\r\ndata:[DONE]\r\n\r\n" },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokenEvents, 2);
    assert.deepEqual(Array.from(r.eventTimesMs), [5, 10]);
    assert.equal(r.tDoneMs, 10);
  });

  test("nothing after [DONE] counts: more tokens or garbage neither add tokens nor fail the request", async () => {
    const r = await runScripted([
      { at: 5, text: chatChunk({ content: "a" }, { finish_reason: "stop" }) },
      { at: 6, text: DONE },
      { at: 50, text: chatChunk({ content: "zzz" }) + "data: {not json\n\n" + DONE },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokenEvents, 1);
    assert.equal(r.tLastMs, 5);
    assert.equal(r.text, "a");
    assert.equal(r.tDoneMs, 6);
  });

  test("n > 1 (choices[].index 1): every choice is measured together, ids summed, as usage sums them", async () => {
    const c = (index: number, content: string, ids: number[], fr: string | null = null) =>
      chunk([{ index, delta: { content }, token_ids: ids, finish_reason: fr }]);
    const r = await runScripted([
      { at: 10, text: c(0, "a", [1]) },
      { at: 11, text: c(1, "x", [9]) },
      { at: 20, text: c(0, "b", [2], "length") },
      { at: 21, text: c(1, "y", [8], "length") },
      { at: 22, text: chunk([], { usage: usageOf(4) }) + DONE },
    ]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokens, 4);
    assert.equal(r.countMismatch, null);
    assert.equal(r.nTokenEvents, 4);
    assert.equal(r.tFirstMs, 10);
  });
});

/** One canned answer (status, body, content type, headers) through the client. */
function answer(status: number, body: string, ct: string, headers: Record<string, string> = {}) {
  return streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, {
    fetch: fakeFetch(() => new Response(body, { status, headers: { "content-type": ct, ...headers } })).fetch,
  });
}

describe("2xx bodies that are not a stream", () => {
  test("HTTP 200 + application/json error body (routers): protocol, with the body's message", async () => {
    const r = await answer(
      200,
      '{"error": "Model llama not found or vLLM engine is sleeping."}',
      "application/json",
    );
    assert.equal(r.ok, false);
    assert.equal(r.errorKind, "protocol");
    assert.equal(r.status, 200);
    assert.match(r.error ?? "", /not an event stream.*: the body is an error: Model llama not found/);
    const flat = await answer(
      200,
      '{"object":"error","message":"Internal server error","type":"InternalServerError","param":null,"code":500}',
      "application/json",
    );
    assert.match(flat.error ?? "", /the body is an error: Internal server error \(InternalServerError\)/);
  });
  test("HTTP 200 with a whole chat.completion: the server ignored stream:true", async () => {
    const r = await answer(
      200,
      JSON.stringify({
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
        usage: usageOf(1),
      }),
      "application/json",
    );
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /whole chat\.completion object, not a stream/);
  });
  test("an error body sent as text/event-stream without `data:` still shows its message", async () => {
    const r = await answer(
      200,
      '{"error":{"message":"queue full","type":"overloaded"}}',
      "text/event-stream",
    );
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /^stream ended with no token: the body is an error: queue full/);
  });
});

describe("HTTP error bodies", () => {
  test("an nginx HTML 502 page is reduced to its title", async () => {
    const html =
      "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>" +
      "</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";
    const r = await answer(502, html, "text/html");
    assert.equal(r.errorKind, "http");
    assert.equal(r.error, "HTTP 502: 502 Bad Gateway");
  });
  test("429 with Retry-After says when to retry", async () => {
    const r = await answer(
      429,
      '{"error":{"message":"Rate limit reached","type":"requests","code":null}}',
      "application/json",
      {
        "retry-after": "7",
      },
    );
    assert.equal(r.errorKind, "http");
    assert.equal(r.status, 429);
    assert.equal(r.error, "HTTP 429: Rate limit reached (requests) (retry after 7 s)");
  });
  test("SGLang flat with an int code, llama.cpp wrapped, FastAPI detail object", async () => {
    const sg = await answer(
      400,
      '{"object":"error","message":"The input (9000 tokens) is longer than the model\'s context length (8192 tokens).","type":"BadRequestError","param":null,"code":400}',
      "application/json",
    );
    assert.match(sg.error ?? "", /^HTTP 400: The input \(9000 tokens\).*\(BadRequestError\)$/);
    const lc = await answer(
      503,
      '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}',
      "application/json",
    );
    assert.equal(lc.error, "HTTP 503: Loading model (unavailable_error)");
    const fa = await answer(
      404,
      '{"detail":{"message":"no such route","type":"not_found"}}',
      "application/json",
    );
    assert.match(fa.error ?? "", /^HTTP 404: no such route \(not_found\) \(POST http:\/\/.*\/v1\/chat\/completions; check --base-url/);
  });
});

for (const [client, fetch] of CLIENTS) {
describe(`over a loopback socket (${client})`, () => {
  let srv: RawServer;
  const okStream = chatChunk({ content: "a" }) + chatChunk({ content: "b" }, { finish_reason: "stop" }) +
    DONE;
  const scripts: Record<string, Step[]> = {
    "/donereset/v1/chat/completions": [{ head: 200 }, { chunk: okStream }, { wait: 20 }, { reset: true }],
    "/doneclose/v1/chat/completions": [{ head: 200 }, { chunk: okStream }, { wait: 20 }, { close: true }],
    "/donehold/v1/chat/completions": [{ head: 200 }, { chunk: okStream }, { wait: 20 }, {
      chunk: ": ping\n\n",
    }, {
      wait: 6000,
    }, { end: true }],
    "/gzip/v1/chat/completions": [
      { head: 200, headers: { "content-type": "text/event-stream", "content-encoding": "gzip" } },
      { bytes: new Uint8Array(gzipSync(new TextEncoder().encode(okStream))) },
      { end: true },
    ],
  };
  before(async () => {
    srv = await rawServer((req) => scripts[req.path] ?? [{ head: 404 }, { chunk: "no" }, { end: true }]);
  });
  after(async () => {
    await srv.close();
  });
  const at = (p: string) => parseEndpoint(`http://127.0.0.1:${srv.port}/${p}`);
  for (const how of ["reset", "close"]) {
    test(`[DONE] and then the connection ${how} by the peer: the response was complete, ok`, async () => {
      const r = await streamCompletion(at(`done${how}`), "chat", {}, {
        idleTimeoutMs: 3000,
        timeoutMs: 5000,
        fetch,
      });
      assert.equal(r.ok, true, r.error ?? "");
      assert.equal(r.nTokens, 2);
      assert.equal(r.endedWithDone, true);
    });
  }
  test("[DONE] and a server that keeps the body open: the client stops reading soon, not at the idle limit", async () => {
    const t0 = performance.now();
    const r = await streamCompletion(at("donehold"), "chat", {}, { idleTimeoutMs: 5000, timeoutMs: 8000, fetch });
    const took = performance.now() - t0;
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokens, 2);
    assert.ok(took < 2500, `took ${took} ms`);
    assert.ok(r.tEndMs - (r.tDoneMs ?? 0) < 2000);
  });
  test("no compression is asked for; a gzip body from a server that compresses anyway is still read", async () => {
    const r = await streamCompletion(at("gzip"), "chat", {}, { idleTimeoutMs: 3000, timeoutMs: 5000, fetch });
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.text, "ab");
    assert.equal(r.nTokenEvents, 2);
    const seen = srv.requests.find((q) => q.path === "/gzip/v1/chat/completions");
    assert.equal(seen?.headers["accept-encoding"], "identity");
  });
});
}

for (const [client, fetch] of CLIENTS) {
test(`a redirect is not followed (it would turn the POST into a GET): an http row names the target (${client})`, async () => {
  const srv = await runtime.serve(() => new Response("", { status: 301, headers: { location: "http://127.0.0.1:9/v1/chat/completions" } }), { port: 0 });
  try {
    const r = await streamCompletion(parseEndpoint(`http://127.0.0.1:${srv.port}`), "chat", { model: "m", stream: true }, { fetch });
    assert.equal(r.ok, false);
    assert.equal(r.errorKind, "http");
    assert.equal(r.status, 301);
    assert.match(r.error ?? "", /redirected to http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions/);
  } finally {
    await srv.close();
  }
});
}
