/**
 * Redaction (CONTRACTS.md "Redaction"): the API key's value never comes back in anything the result
 * carries, however a server echoes it (401 body, error event, malformed chunk, a 2xx non-stream
 * body, the generated text split over events, reasoning, tool arguments, usage), and a URL inside a
 * runtime's error message is shown redacted. Injected fetch only: no sockets.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEndpoint, type RequestResult, streamCompletion } from "../../lib/client/mod.ts";
import { fakeFetch } from "./_replay.ts";
import { runScripted } from "./_manual.ts";
import { chatChunk, DONE } from "./_raw_server.ts";

const KEY = "sk-live-0123456789abcdef";
const ep = parseEndpoint("http://127.0.0.1:9");

/** Every string the result carries, as one text to search. */
function everything(r: RequestResult): string {
  return JSON.stringify({ ...r, eventTimesMs: [], eventIds: [] });
}

test("an HTTP error body that echoes the key: the message has *** instead, even past the 300-character cut", async () => {
  for (
    const body of [
      JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error" } }),
      JSON.stringify({ error: `bad key ${KEY}` }),
      `${"x".repeat(280)} ${KEY} plain text`,
      `<html><title>401 for ${KEY}</title></html>`,
    ]
  ) {
    const f = fakeFetch(() => new Response(body, { status: 401 }));
    const r = await streamCompletion(ep, "chat", {}, { fetch: f.fetch, apiKey: KEY });
    assert.equal(r.errorKind, "http");
    assert.ok(!everything(r).includes(KEY.slice(0, 12)), r.error ?? "");
    if (body.length < 200) assert.match(r.error ?? "", /\*\*\*/);
  }
});

test("mid-stream: error events, malformed chunks and non-stream 2xx bodies are scrubbed", async () => {
  const streams = [
    chatChunk({ content: "a" }) + `data: {"error":{"message":"key ${KEY} revoked","code":401}}\n\n` + DONE,
    chatChunk({ content: "a" }) + `event: error\ndata: key ${KEY} revoked\n\n` + DONE,
    chatChunk({ content: "a" }) + `data: {"object":"error","message":"key ${KEY}"}\n\n` + DONE,
    `data: {"echo":"${KEY}", broken\n\n` + DONE,
  ];
  for (const text of streams) {
    const r = await runScripted([{ at: 1, text }], { stream: { apiKey: KEY } });
    assert.equal(r.errorKind, "protocol", r.error ?? "");
    assert.ok(!everything(r).includes(KEY.slice(0, 12)), r.error ?? "");
    assert.match(r.error ?? "", /\*\*\*/);
  }
  const json = await runScripted([{ at: 1, text: JSON.stringify({ error: { message: `no access for ${KEY}` } }) }], {
    contentType: "application/json",
    stream: { apiKey: KEY },
  });
  assert.equal(json.errorKind, "protocol");
  assert.match(json.error ?? "", /no access for \*\*\*/);
});

test("a key that straddles where a message is cut short is scrubbed before the cut (no half key left)", async () => {
  const pad = (n: number) => "y".repeat(n);
  const streams: [string, string][] = [
    // malformed chunk: the snippet keeps 79 characters
    [`data: {"x":"${pad(60)}${KEY}

` + DONE, "text/event-stream"],
    // plain-text error event: the snippet keeps 79 characters
    [chatChunk({ content: "a" }) + `event: error
data: ${pad(70)}${KEY}

` + DONE, "text/event-stream"],
    // a 2xx body that is no stream: 119 characters of it are shown
    [`${pad(110)}${KEY} and more`, "text/plain"],
  ];
  for (const [text, contentType] of streams) {
    const r = await runScripted([{ at: 1, text }], { contentType, stream: { apiKey: KEY } });
    assert.equal(r.errorKind, "protocol", r.error ?? "");
    assert.ok(!(r.error ?? "").includes(KEY.slice(0, 5)), r.error ?? "");
  }
});

test("a key in a runtime's own error message is scrubbed too", async () => {
  const r = await streamCompletion(ep, "chat", {}, {
    apiKey: KEY,
    fetch: () => Promise.reject(new Error(`proxy refused header 'authorization: Bearer ${KEY}'`)),
  });
  assert.equal(r.errorKind, "network");
  assert.match(r.error ?? "", /Bearer \*\*\*'/);
});

test("text, reasoning, tool arguments and usage: the key is scrubbed even when split across events", async () => {
  const half = KEY.length >> 1;
  const r = await runScripted([
    { at: 1, text: chatChunk({ reasoning_content: `user gave ${KEY}` }) },
    { at: 2, text: chatChunk({ content: `echo ${KEY.slice(0, half)}` }) },
    { at: 3, text: chatChunk({ content: `${KEY.slice(half)} done` }) },
    {
      at: 4,
      text: chatChunk({ tool_calls: [{ index: 0, function: { arguments: `{"k":"${KEY}"}` } }] }, {
        finish_reason: "stop",
      }),
    },
    { at: 5, text: `data: {"choices":[],"usage":{"completion_tokens":4,"note":"${KEY}"}}\n\n` + DONE },
  ], { stream: { apiKey: KEY } });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.text, "echo *** done");
  assert.equal(r.reasoning, "user gave ***");
  assert.equal(r.toolArguments, '{"k":"***"}');
  assert.equal(r.usage?.completion_tokens, 4);
  assert.ok(!everything(r).includes(KEY.slice(0, 12)));
  // Without a key nothing is touched.
  const plain = await runScripted([{ at: 1, text: chatChunk({ content: KEY }, { finish_reason: "stop" }) + DONE }]);
  assert.equal(plain.text, KEY);
});

test("a runtime error message that embeds a URL shows it redacted", async () => {
  const fetch = () =>
    Promise.reject(
      new TypeError("fetch failed", {
        cause: new Error("error sending request for url (http://bob:hunter2@h:1/v1?api_key=sk-q1&x=1): reset"),
      }),
    );
  const r = await streamCompletion(ep, "chat", {}, { fetch });
  assert.equal(r.errorKind, "network");
  assert.ok(!/hunter2|bob|sk-q1/.test(r.error ?? ""), r.error ?? "");
  assert.match(r.error ?? "", /http:\/\/\*\*\*@h:1\/v1\?api_key=\*\*\*&x=1/);
  const moved = await streamCompletion(ep, "chat", {}, {
    fetch: fakeFetch(() =>
      new Response("", { status: 302, headers: { location: "http://bob:hunter2@h:2/v1?token=sk-q2" } })
    ).fetch,
  });
  assert.equal(moved.errorKind, "http");
  assert.match(moved.error ?? "", /redirected to http:\/\/\*\*\*@h:2\/v1\?token=\*\*\*;/);
});

test("a malformed chunk's snippet is scrubbed of registered secrets and named values before its 80-character cut", async () => {
  const { clearSecrets, registerSecret } = await import("../../lib/evidence/scrub.ts");
  const other = "PWVAL1LONGSECRET-xyz";
  registerSecret(other);
  try {
    for (const pad of [60, 66, 70, 75]) {
      for (const secret of [other, "api_key='NOTREGISTERED-987654321'"]) {
        const r = await runScripted([{ at: 1, text: `data: {"x":"${"y".repeat(pad)} ${secret}", broken\n\n` + DONE }], { stream: {} });
        assert.equal(r.errorKind, "protocol", r.error ?? "");
        assert.match(r.error ?? "", /^malformed chunk '/);
        assert.ok(!/PWVAL1|NOTREG/.test(everything(r)), `pad ${pad}: ${r.error}`);
      }
    }
  } finally {
    clearSecrets();
  }
});
