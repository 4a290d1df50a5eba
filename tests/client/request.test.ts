/**
 * What goes on the wire and the connection it goes on: URL per API, JSON body, headers, the
 * Bearer key only when given, keep-alive reuse across sequential requests, and `/v1/models`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CLIENTS } from "./_clients.ts";
import { listModels, parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { ENGINES_DIR, fakeFetch, streamingResponse } from "./_replay.ts";
import { chatChunk, closedPort, DONE, type RawServer, rawServer, usageChunk } from "./_raw_server.ts";
import { runScripted } from "./_manual.ts";
import { Attempt, RequestPayload } from "../../lib/client/_attempt.ts";

const enc = new TextEncoder();
const okStream = () =>
  streamingResponse([enc.encode(chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE)]);

test("URL, method, headers and body; the key only when given", async () => {
  const f = fakeFetch(okStream);
  const ep = parseEndpoint("http://127.0.0.1:9/base/v1/");
  const body = { model: "m", prompt: "p", stream: true };
  await streamCompletion(ep, "completions", body, { fetch: f.fetch, apiKey: "sk-test" });
  await streamCompletion(ep, "chat", JSON.stringify(body), { fetch: f.fetch, headers: { "x-trace": "1" } });
  assert.equal(f.calls[0].url, "http://127.0.0.1:9/base/v1/completions");
  assert.equal(f.calls[1].url, "http://127.0.0.1:9/base/v1/chat/completions");
  const h0 = f.calls[0].init.headers as Record<string, string>;
  const h1 = f.calls[1].init.headers as Record<string, string>;
  assert.equal(f.calls[0].init.method, "POST");
  assert.equal(h0.authorization, "Bearer sk-test");
  assert.equal(h0["content-type"], "application/json");
  assert.equal(h0.accept, "text/event-stream");
  assert.equal(h1.authorization, undefined);
  assert.equal(h1["x-trace"], "1");
  assert.deepEqual(JSON.parse(f.calls[0].init.body as string), body);
  assert.equal(f.calls[1].init.body, JSON.stringify(body));
});

describe("over a loopback socket", () => {
  let srv: RawServer;
  before(async () => {
    srv = await rawServer((req) =>
      req.path.endsWith("/models")
        ? [{ head: 200, headers: { "content-type": "application/json" } }, {
          chunk: readFileSync(join(ENGINES_DIR, "vllm/models.json"), "utf8"),
        }, { end: true }]
        : [
          { head: 200 },
          { chunk: chatChunk({ role: "assistant", content: "" }) },
          { chunk: chatChunk({ content: "hi" }, { finish_reason: "stop" }) },
          { chunk: usageChunk(1) },
          { chunk: DONE },
          { end: true },
        ]
    );
  });
  after(async () => {
    await srv.close();
  });

  for (const [client, fetch] of CLIENTS) {
  test(`sequential requests reuse the keep-alive connection (${client})`, async () => {
    const ep = parseEndpoint(`http://127.0.0.1:${srv.port}`);
    const n = 8;
    const c0 = srv.connections();
    for (let i = 0; i < n; i++) {
      const r = await streamCompletion(ep, "chat", { model: "m", i }, { apiKey: "k", idleTimeoutMs: 3000, fetch });
      assert.equal(r.ok, true, r.error ?? "");
    }
    const used = srv.connections() - c0;
    assert.ok(
      used <= n / 2,
      `${n} requests needed ${used} connections: the body must be read to the end so the connection is reused`,
    );
    const last = srv.requests[srv.requests.length - 1];
    assert.equal(last.headers.authorization, "Bearer k");
    assert.equal(JSON.parse(last.body).i, n - 1);
  });
  }

  test("/v1/models lists ids and max_model_len", async () => {
    const a = await listModels(parseEndpoint(`http://127.0.0.1:${srv.port}/v1`));
    assert.equal(a.ok, true, a.error ?? "");
    assert.equal(a.models.length, 1);
    assert.equal(a.models[0].id, "Qwen/Qwen2.5-0.5B-Instruct");
    assert.equal(a.models[0].maxModelLen, 32768);
  });
});

test("/v1/models failures are values: unreachable, http, not a list", async () => {
  const down = await listModels(parseEndpoint(`http://127.0.0.1:${await closedPort()}`), { timeoutMs: 3000 });
  assert.equal(down.ok, false);
  assert.equal(down.errorKind, "network");
  assert.equal(down.status, 0);
  const auth = await listModels(parseEndpoint("http://h"), {
    fetch: fakeFetch(() => new Response('{"error":"Unauthorized"}', { status: 401 })).fetch,
  });
  assert.equal(auth.errorKind, "http");
  assert.equal(auth.error, "HTTP 401: Unauthorized");
  const odd = await listModels(parseEndpoint("http://h"), {
    fetch: fakeFetch(() => new Response('{"models":[]}')).fetch,
  });
  assert.equal(odd.errorKind, "protocol");
  const llama = await listModels(parseEndpoint("http://h"), {
    fetch: fakeFetch(() => new Response(readFileSync(join(ENGINES_DIR, "llamacpp/models.json")))).fetch,
  });
  assert.equal(llama.ok, true);
  assert.equal(llama.models[0].maxModelLen, null, "llama.cpp reports no max_model_len");
});

test("onHeaders is called once, when the headers arrive, with that clock time; a throwing hook fails nothing", async () => {
  const seen: number[] = [];
  const r = await runScripted([
    { at: 50, text: chatChunk({ content: "a" }) },
    { at: 60, text: chatChunk({ content: "b" }, { finish_reason: "stop" }) + DONE },
  ], { headersAt: 40, stream: { onHeaders: (t) => seen.push(t) } });
  assert.equal(r.ok, true, r.error ?? "");
  assert.deepEqual(seen, [40]);
  assert.equal(r.tHeadersMs, 40);
  const http = await runScripted([{ at: 5, text: "{}" }], { headersAt: 3, status: 500, stream: { onHeaders: (t) => seen.push(t) } });
  assert.equal(http.errorKind, "http");
  assert.deepEqual(seen, [40, 3], "an error status has headers too");
  const thrown = await runScripted([{ at: 5, text: chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE }], {
    stream: {
      onHeaders: () => {
        throw new Error("display broke");
      },
    },
  });
  assert.equal(thrown.ok, true, thrown.error ?? "");
  const none: number[] = [];
  const refused = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, {
    fetch: () => Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" })),
    onHeaders: (t) => none.push(t),
  });
  assert.equal(refused.errorKind, "network");
  assert.deepEqual(none, [], "no headers, no call");
});

test("a fetch that reports when the request goes out (init.onSend) moves t_send there: its own set-up stays out of TTFT", async () => {
  let now = 100;
  const clock = () => now;
  const fetchFn = (_u: string, init: RequestInit & { onSend?: () => void }) => {
    now = 103; // the client spent 3 ms building the request
    init.onSend?.();
    now = 150; // the head
    const body = chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE;
    return Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
  };
  const r = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, { fetch: fetchFn, clock });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.tSendMs, 103);
  assert.equal(requestRow(r).ttft_ms, 47);
  const plain = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, {
    fetch: (u, i) => fetchFn(u, { ...i, onSend: undefined }),
    clock: () => (now = 100),
  });
  assert.equal(plain.tSendMs, 100, "a fetch that does not report keeps the stamp taken before the call");
});

test("t_send is taken after the body is serialized, just before the fetch call (a fetch that does not report the hand-over)", async () => {
  let now = 100;
  const clock = () => now;
  // Serializing a large prompt takes time: it is the client's, not the server's, and stays out of TTFT.
  const body = { model: "m", messages: [{ role: "user", content: "hi" }], toJSON() {
    now = 140;
    return { model: this.model, messages: this.messages, stream: true };
  } };
  let sent = "";
  const fetchFn = (_u: string, init: RequestInit) => {
    sent = String(init.body);
    now = 150; // the head
    return Promise.resolve(new Response(chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE, { headers: { "content-type": "text/event-stream" } }));
  };
  const r = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", body, { fetch: fetchFn, clock });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(JSON.parse(sent).stream, true, "the serialized body went out");
  assert.equal(r.tSendMs, 140);
  assert.equal(requestRow(r).ttft_ms, 10);
});

test("a body that cannot be serialized is the caller's error (it throws), not a failed request against the server", async () => {
  let called = false;
  const fetchFn = () => {
    called = true;
    return Promise.resolve(new Response(""));
  };
  await assert.rejects(streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", { max_tokens: 1n }, { fetch: fetchFn }), TypeError);
  assert.equal(called, false, "nothing was sent");
});

test("the serialized body is sent again on a stale connection and dropped once a head comes (an open stream holds no prompt)", async () => {
  const ep = parseEndpoint("http://127.0.0.1:9/v1");
  const body = { model: "m", messages: [{ role: "user", content: "x".repeat(2000) }], stream: true };
  const sent: unknown[] = [];
  // The first attempt meets a pooled connection (so the fetch says) the server had closed; the second is answered.
  const fetch = (_u: string, init: RequestInit) => {
    sent.push(init.body);
    (init as { onSend?: (reused: boolean) => void }).onSend?.(sent.length === 1);
    if (sent.length === 1) return Promise.reject(Object.assign(new Error("socket closed"), { code: "ECONNRESET" }));
    return Promise.resolve(okStream());
  };
  const r = await streamCompletion(ep, "chat", body, { fetch });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.connectionRetries, 1);
  assert.deepEqual(sent, [JSON.stringify(body), JSON.stringify(body)], "the retry sends the same bytes");

  // Held while no head has come (a retry may need it), dropped at the head.
  const req = new RequestPayload(body);
  let heldAtSend: string | null = null;
  const seen = (_u: string, init: RequestInit) => {
    heldAtSend = req.text;
    assert.equal(init.body, JSON.stringify(body));
    return Promise.resolve(okStream());
  };
  const ok = await new Attempt(req, { fetch: seen }).run(ep, "chat");
  assert.equal(ok.ok, true, ok.error ?? "");
  assert.equal(heldAtSend, JSON.stringify(body));
  assert.equal(req.text, null, "no longer held once the head came");
  assert.equal(req.asked, null, "the body asked for no max_tokens");
  assert.equal(new RequestPayload({ max_completion_tokens: 7 }).asked, 7);
});
