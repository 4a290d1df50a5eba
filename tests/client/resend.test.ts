/**
 * When a request is sent a second time, and how a response that could not be read is classified
 * (CONTRACTS.md "Failure kinds"), with injected fetches and a manual clock: a request is resent only
 * after a REUSED pooled connection closed with no response byte (RFC 9112 §9.3.1), on a new
 * connection, and the row is timed from the first send; a fresh connection's reset, a close after
 * part of a head, or a fetch that cannot say whether its connection was reused, are failures as they
 * came. A response that could not be parsed is `protocol` (the server is up), in every client's words.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isUnreachable, parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { H1ProtocolError } from "../../lib/h1/mod.ts";
import { CountTally, tallyLimitations } from "../../lib/bench/count_limitations.ts";
import { streamingResponse } from "./_replay.ts";
import { chatChunk, DONE } from "./_raw_server.ts";

const enc = new TextEncoder();
const ep = parseEndpoint("http://127.0.0.1:9");
const okStream = () => streamingResponse([enc.encode(chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE)]);
const closed = () => Object.assign(new Error("socket closed before the response (ECONNRESET)"), { code: "ECONNRESET" });
type Init = RequestInit & { onSend?: (reused?: boolean) => void; newConnection?: boolean };

/**
 * A fetch whose first call goes out (`onSend(reused)`, or no report) at clock 100 and fails with
 * `first` at 150; later calls go out on a new connection at 200 and answer at 300.
 */
function scripted(reused: boolean | undefined, first: () => Error) {
  const clock = { now: 0 };
  const calls: Init[] = [];
  const fetch = (_u: string, init: Init) => {
    calls.push(init);
    if (calls.length === 1) {
      clock.now = 100;
      if (reused !== undefined) init.onSend?.(reused);
      clock.now = 150;
      return Promise.reject(first());
    }
    clock.now = 200;
    init.onSend?.(false);
    clock.now = 300;
    return Promise.resolve(okStream());
  };
  return { clock, calls, fetch, opts: { fetch, clock: () => clock.now, tScheduledMs: 90 } };
}

test("a reused pooled connection closed with no response byte: sent once more, on a new connection, timed from the first send", async () => {
  const s = scripted(true, closed);
  const r = await streamCompletion(ep, "chat", { model: "m" }, s.opts);
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(s.calls.length, 2);
  assert.equal(s.calls[0].newConnection, false);
  assert.equal(s.calls[1].newConnection, true, "the resend asks for a connection of its own");
  assert.equal(s.calls[1].body, s.calls[0].body, "the same bytes");
  const row = requestRow(r);
  assert.equal(row.connection_retries, 1);
  assert.equal(r.tSendMs, 100, "t_send is the first send");
  assert.equal(row.send_lag_ms, 10, "send lag is the client's own, not the failed attempt's");
  assert.equal(row.ttft_ms, 200, "TTFT counts from the first send: the failed attempt is in it");
});

test("not sent again: a new connection reset, a fetch that cannot say, a close after part of a head", async () => {
  const cases: [string, boolean | undefined, () => Error, RegExp][] = [
    ["a new connection", false, closed, /^closed without a response/],
    ["a fetch that does not report its connection (Bun's)", undefined, closed, /^closed without a response/],
    [
      "part of a status line came",
      true,
      () => new H1ProtocolError("socket closed mid-head (ECONNRESET): Connection reset by peer", "ECONNRESET"),
      /^closed mid-head: the server sent the start of a response head/,
    ],
  ];
  for (const [name, reused, err, re] of cases) {
    const s = scripted(reused, err);
    const r = await streamCompletion(ep, "chat", { model: "m" }, s.opts);
    assert.equal(s.calls.length, 1, `${name}: sent once`);
    assert.equal(r.ok, false, name);
    assert.equal(r.errorKind, "network", name);
    assert.match(r.error ?? "", re, name);
    assert.equal(r.connectionRetries, 0, name);
    assert.equal(isUnreachable(r), false, `${name}: the server is there, not exit 69`);
  }
});

test("a reused connection closed a second after the send is not taken for a stale one", async () => {
  const clock = { now: 0 };
  let calls = 0;
  const fetch = (_u: string, init: Init) => {
    calls++;
    init.onSend?.(true);
    clock.now = 1500;
    return Promise.reject(closed());
  };
  const r = await streamCompletion(ep, "chat", {}, { fetch, clock: () => clock.now });
  assert.equal(calls, 1);
  assert.equal(r.errorKind, "network");
});

/** A 200 event stream that delivers one token event, then fails with `e`. */
function failingBody(e: Error): Response {
  let n = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (n++ === 0) c.enqueue(enc.encode(chatChunk({ content: "a" })));
      else c.error(e);
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

test("a response that could not be parsed is `protocol` in every client's words, before the head and mid-body; never resent", async () => {
  const coded = (code: string, message: string) => Object.assign(new TypeError(message), { code });
  const cases: [string, Error, RegExp][] = [
    ["ik's h1: a malformed chunk", new H1ProtocolError("malformed chunked body: chunk size 'zz' is not hexadecimal"), /^malformed chunked body: chunk size 'zz'/],
    ["ik's h1: not HTTP/1.x", new H1ProtocolError("malformed status line 'SSH-2.0-OpenSSH' (not an HTTP/1.x response)"), /^malformed status line 'SSH-2\.0/],
    ["ik's h1: a head over the limit", new H1ProtocolError("response head over 64 KiB"), /^malformed HTTP response: response head over 64 KiB/],
    ["Bun: a malformed body", coded("InvalidHTTPResponse", 'InvalidHTTPResponse fetching "http://127.0.0.1:9/v1/chat/completions".'), /^malformed HTTP response: InvalidHTTPResponse/],
    ["Bun: a malformed head", coded("Malformed_HTTP_Response", 'Malformed_HTTP_Response fetching "http://127.0.0.1:9/v1/chat/completions".'), /^malformed HTTP response: Malformed_HTTP_Response/],
    ["Node: llhttp", coded("HPE_INVALID_CHUNK_SIZE", "Parse Error: Invalid character in chunk size"), /^malformed HTTP response: Parse Error/],
    [
      "Deno: hyper",
      new TypeError("fetch failed", { cause: new Error("client error (SendRequest): invalid HTTP version parsed") }),
      /^malformed HTTP response: .*invalid HTTP version parsed/,
    ],
  ];
  for (const [name, e, re] of cases) {
    for (const where of ["before the head", "mid-body"]) {
      let calls = 0;
      const fetch = (_u: string, init: Init) => {
        calls++;
        init.onSend?.(true);
        return where === "mid-body" ? Promise.resolve(failingBody(e)) : Promise.reject(e);
      };
      const r = await streamCompletion(ep, "chat", {}, { fetch });
      const what = `${name}, ${where}`;
      assert.equal(r.errorKind, "protocol", `${what}: ${r.error}`);
      assert.match(r.error ?? "", re, what);
      assert.equal(r.status, where === "mid-body" ? 200 : 0, what);
      assert.equal(isUnreachable(r), false, `${what}: the server answered, not exit 69`);
      assert.equal(calls, 1, `${what}: not sent again`);
    }
  }
});

test("a connection lost mid-body is still `network`, whatever client said it (llhttp's premature EOF, h1's cut-short body)", async () => {
  const cases: Error[] = [
    Object.assign(new Error("Parse Error: Invalid EOF state"), { code: "HPE_INVALID_EOF_STATE" }),
    new H1ProtocolError("connection closed mid-body, before the last chunk (ECONNRESET)", "ECONNRESET"),
  ];
  for (const e of cases) {
    const r = await streamCompletion(ep, "chat", {}, { fetch: () => Promise.resolve(failingBody(e)) });
    assert.equal(r.errorKind, "network", r.error ?? "");
    assert.match(r.error ?? "", /^connection lost mid-body/);
  }
});

test("the record's limitation says how a resent request is timed: from the first send", () => {
  const t = new CountTally();
  const row = { id: "a", ok: true, n_tokens: 1, token_count_method: "ids", count_mismatch: null, tokens_per_event_max: 1 };
  t.add({ ...row, connection_retries: 1 }, null);
  t.add({ ...row, connection_retries: 0 }, null);
  const lim = tallyLimitations(t, ["max_tokens"], "none", "vllm").filter((l) => /sent a second time/.test(l));
  assert.equal(lim.length, 1);
  assert.match(lim[0], /^1 request\(s\) were sent a second time, on a new connection/);
  assert.match(lim[0], /reused keep-alive connection/);
  assert.match(lim[0], /timed from the first send \(send lag is the client's; TTFT and e2e include the failed attempt\)/);
});
