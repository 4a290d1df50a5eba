/**
 * Every failure kind is a row, never an exception (CONTRACTS.md "Failure kinds"): http with the
 * message of every error-body shape, network (refused, reset mid-body), protocol (malformed chunk,
 * error event even with [DONE], no token, truncated), timeout (idle, before headers, total) and
 * aborted. Small real timeouts over a loopback socket; every loop bounded.
 */
import assert from "node:assert/strict";
import { runtime } from "../../lib/runtime/mod.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { isUnreachable, parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { ENGINES_DIR, fakeFetch } from "./_replay.ts";
import { runScripted } from "./_manual.ts";
import { chatChunk, closedPort, DONE, type RawServer, rawServer, type Step } from "./_raw_server.ts";
import { CLIENTS } from "./_clients.ts";
import { deadlines } from "../../lib/client/_deadlines.ts";
import { abortWatchers } from "../../lib/client/_abort_watch.ts";


const ep0 = parseEndpoint("http://127.0.0.1:9");
const fixture = (p: string) => readFileSync(join(ENGINES_DIR, p), "utf8");
const httpError = (status: number, body: string, ct = "application/json") =>
  streamCompletion(ep0, "chat", {}, {
    fetch: fakeFetch(() => new Response(body, { status, headers: { "content-type": ct } })).fetch,
  });

describe("http: status and the message from every body shape", () => {
  const cases: [string, number, string, string][] = [
    ["wrapped (vLLM)", 404, fixture("vllm/error-unknown-model.json"), "does not exist"],
    ["flat (SGLang)", 400, fixture("sglang/error-context-length.json"), "context length"],
    ["flat (TRT-LLM)", 400, fixture("trtllm/error-context-length.json"), "max_num_tokens"],
    ["flat legacy (vLLM)", 404, fixture("vllm/error-legacy-flat.json"), "does not exist. (NotFoundError)"],
    [
      "wrapped (llama.cpp)",
      400,
      fixture("llamacpp/error-context-length.json"),
      "exceeds the available context size",
    ],
    ["wrapped (OpenAI)", 401, fixture("openai/error-auth.json"), "API key"],
    ["string (vLLM key check)", 401, fixture("vllm/error-unauthorized.json"), "Unauthorized"],
    ["string (router)", 400, fixture("routers/production-stack-error-model-not-found.json"), "not found"],
    ["plain text", 502, "Bad Gateway from the proxy", "Bad Gateway from the proxy"],
    ["empty", 503, "", "HTTP 503 with an empty body"],
  ];
  for (const [name, status, body, want] of cases) {
    test(name, async () => {
      const r = await httpError(status, body);
      assert.equal(r.ok, false);
      assert.equal(r.errorKind, "http");
      assert.equal(r.status, status);
      assert.match(
        r.error ?? "",
        new RegExp(`^HTTP ${status}: .*${want.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
      );
      assert.equal(r.nTokens, null, "no stream was read");
      const row = requestRow(r);
      assert.equal(row.error_kind, "http");
      assert.equal(row.ttft_ms, null);
      assert.equal(row.e2e_ms, null);
    });
  }
});

describe("protocol", () => {
  test("malformed chunk", async () => {
    const r = await runScripted([{ at: 1, text: chatChunk({ content: "a" }) }, {
      at: 2,
      text: 'data: {"choices":[{"delta":{"content":"b"}\n\n',
    }, { at: 3, text: DONE }]);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /malformed chunk/);
    assert.equal(r.endedWithDone, true);
  });
  test("an error event mid-stream fails the request even though [DONE] follows", async () => {
    const r = await runScripted([
      { at: 1, text: chatChunk({ content: "a" }) },
      {
        at: 2,
        text:
          `data: {"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}\n\n`,
      },
      { at: 3, text: DONE },
    ]);
    assert.equal(r.ok, false);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /error event mid-stream: Internal server error/);
    assert.equal(r.endedWithDone, true);
  });
  test("an `event: error` event is an error event", async () => {
    const r = await runScripted([{ at: 1, text: chatChunk({ content: "a" }) }, {
      at: 2,
      text: 'event: error\ndata: {"message":"overloaded"}\n\n',
    }, { at: 3, text: DONE }]);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /overloaded/);
  });
  test("a stream with no token (role chunk, finish, [DONE]) fails", async () => {
    const r = await runScripted([{
      at: 1,
      text: chatChunk({ role: "assistant", content: "" }) + chatChunk({}, { finish_reason: "stop" }) + DONE,
    }]);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /no token/);
  });
  test("a 200 that is not an event stream says so", async () => {
    const r = await runScripted([{ at: 1, text: '{"id":"x","choices":[]}' }], {
      contentType: "application/json",
    });
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /not an event stream/);
  });
  test("ended without [DONE] and without a finish_reason: truncated", async () => {
    const r = await runScripted([{ at: 1, text: chatChunk({ content: "a" }) + chatChunk({ content: "b" }) }]);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", /^truncated/);
    assert.equal(r.nTokens, 2, "what arrived is still counted");
  });
  test("a finish_reason without [DONE] is a proper end (llama.cpp-style)", async () => {
    const r = await runScripted([{
      at: 1,
      text: chatChunk({ content: "a" }) + chatChunk({}, { finish_reason: "stop" }),
    }]);
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.endedWithDone, false);
    assert.equal(r.tDoneMs, null);
    assert.equal(requestRow(r).e2e_ms, 1, "e2e falls back to the end of the stream");
  });
});

for (const [client, fetch] of CLIENTS) {
describe(`over a loopback socket (${client})`, () => {
  let srv: RawServer;
  const scripts: Record<string, Step[]> = {
    "/reset/v1/chat/completions": [{ head: 200 }, { chunk: chatChunk({ content: "a" }) }, { wait: 20 }, {
      reset: true,
    }],
    "/close/v1/chat/completions": [{ head: 200 }, { chunk: chatChunk({ content: "a" }) }, { wait: 20 }, {
      close: true,
    }],
    "/stall/v1/chat/completions": [{ head: 200 }, { chunk: chatChunk({ content: "a" }) }, { wait: 5000 }, {
      end: true,
    }],
    "/slowheaders/v1/chat/completions": [{ wait: 5000 }, { head: 200 }, { end: true }],
    "/trickle/v1/chat/completions": [
      { head: 200 },
      ...Array.from({ length: 60 }, () => [{ chunk: chatChunk({ content: "a" }) }, { wait: 25 }]).flat(),
      { end: true },
    ],
    "/ok/v1/chat/completions": [{ head: 200 }, { chunk: chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE }, { end: true }],
    "/silent-close/v1/chat/completions": [{ close: true }],
    "/silent-reset/v1/chat/completions": [{ reset: true }],
    "/afterdone/v1/chat/completions": [
      { head: 200 },
      { chunk: chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE },
      { wait: 5000 },
      { end: true },
    ],
  };
  before(async () => {
    srv = await rawServer((req) =>
      scripts[req.path] ??
        [{ head: 404, headers: { "content-type": "application/json" } }, { chunk: '{"error":"no"}' }, {
          end: true,
        }]
    );
  });
  after(async () => {
    await srv.close();
  });
  const at = (p: string) => parseEndpoint(`http://127.0.0.1:${srv.port}/${p}`);
  const quick = { idleTimeoutMs: 2000, timeoutMs: 4000, fetch };

  test("network: connection refused, before any response (unreachable)", async () => {
    const r = await streamCompletion(
      parseEndpoint(`http://127.0.0.1:${await closedPort()}`),
      "chat",
      {},
      quick,
    );
    assert.equal(r.errorKind, "network");
    assert.equal(r.status, 0);
    assert.equal(r.tHeadersMs, null);
    assert.equal(isUnreachable(r), true);
    assert.match(r.error ?? "", /refused|ECONNREFUSED|connect/i);
  });
  for (const how of ["reset", "close"]) {
    test(`network: connection ${how} by the peer mid-body`, async () => {
      const r = await streamCompletion(at(how), "chat", {}, quick);
      assert.equal(r.errorKind, "network", r.error ?? "");
      assert.equal(r.status, 200);
      assert.equal(isUnreachable(r), false);
      assert.match(r.error ?? "", /mid-body/);
    });
  }
  test("timeout: no byte for the idle timeout after the first token", async () => {
    const t0 = performance.now();
    const r = await streamCompletion(at("stall"), "chat", {}, { idleTimeoutMs: 150, timeoutMs: 4000, fetch });
    const took = performance.now() - t0;
    assert.equal(r.errorKind, "timeout");
    assert.match(r.error ?? "", /no data for 0\.15 s/);
    assert.equal(r.nTokenEvents, 1);
    assert.ok(took >= 140 && took < 1500, `took ${took} ms`);
  });
  test("timeout: no response headers within the idle timeout", async () => {
    const r = await streamCompletion(at("slowheaders"), "chat", {}, { idleTimeoutMs: 150, timeoutMs: 4000, fetch });
    assert.equal(r.errorKind, "timeout");
    assert.match(r.error ?? "", /no response headers/);
    assert.equal(isUnreachable(r), false);
  });
  test("timeout: the whole request over the total limit, though bytes keep coming", async () => {
    const t0 = performance.now();
    const r = await streamCompletion(at("trickle"), "chat", {}, { idleTimeoutMs: 1000, timeoutMs: 300, fetch });
    const took = performance.now() - t0;
    assert.equal(r.errorKind, "timeout");
    assert.match(r.error ?? "", /longer than 0\.3 s/);
    assert.ok(r.nTokenEvents > 2 && r.nTokenEvents < 60, `${r.nTokenEvents} events`);
    assert.ok(took >= 290 && took < 1500, `took ${took} ms`);
  });
  test("one timer watches every request: a short limit fires on time beside a longer one armed first, and nothing stays watched", async () => {
    const long = streamCompletion(at("trickle"), "chat", {}, { idleTimeoutMs: 60_000, timeoutMs: 900, fetch });
    await new Promise((r) => setTimeout(r, 30));
    assert.ok(deadlines.size >= 1, "the first request is watched");
    const t0 = performance.now();
    const short = await streamCompletion(at("stall"), "chat", {}, { idleTimeoutMs: 150, timeoutMs: 60_000, fetch });
    const took = performance.now() - t0;
    assert.equal(short.errorKind, "timeout");
    assert.match(short.error ?? "", /no data for 0\.15 s/);
    assert.ok(took >= 140 && took < 700, `the short limit took ${took} ms (the long one's timer was due at 900)`);
    const l = await long;
    assert.equal(l.errorKind, "timeout");
    assert.match(l.error ?? "", /longer than 0\.9 s/);
    assert.equal(deadlines.size, 0, "no ended request stays watched");
  });
  test("aborted: the caller's signal fires mid-stream", async () => {
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), 100);
    const r = await streamCompletion(at("trickle"), "chat", {}, { ...quick, signal: ac.signal });
    clearTimeout(t);
    assert.equal(r.errorKind, "aborted");
    assert.ok(r.nTokenEvents >= 1);
  });
  test("many requests on one run signal: each ended one stops watching it; an abort ends the rest", async () => {
    const ac = new AbortController();
    const done = await Promise.all(Array.from({ length: 8 }, () => streamCompletion(at("ok"), "chat", {}, { ...quick, signal: ac.signal })));
    assert.ok(done.every((r) => r.ok), done.map((r) => r.error).join("; "));
    assert.equal(abortWatchers(ac.signal), 0, "ended requests no longer watch the run's signal");
    const open = Array.from({ length: 6 }, () => streamCompletion(at("trickle"), "chat", {}, { ...quick, signal: ac.signal }));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(abortWatchers(ac.signal), 6);
    ac.abort();
    const cut = await Promise.all(open);
    assert.deepEqual(cut.map((r) => r.errorKind), Array(6).fill("aborted"));
    assert.equal(abortWatchers(ac.signal), 0);
  });
  test("aborted: a signal that is already aborted sends nothing", async () => {
    const before = srv.requests.length;
    const r = await streamCompletion(at("trickle"), "chat", {}, { ...quick, signal: AbortSignal.abort() });
    assert.equal(r.errorKind, "aborted");
    assert.equal(srv.requests.length, before);
  });
  test("[DONE] then a server that keeps the stream open: still ok once the idle limit passes", async () => {
    const r = await streamCompletion(at("afterdone"), "chat", {}, { idleTimeoutMs: 150, timeoutMs: 4000, fetch });
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.endedWithDone, true);
  });
  test("http over the socket: status and message; a 404 names the URL asked for and how to fix --base-url", async () => {
    const r = await streamCompletion(at("nothing-here"), "chat", {}, quick);
    assert.equal(r.errorKind, "http");
    assert.equal(
      r.error,
      `HTTP 404: no (POST http://127.0.0.1:${srv.port}/nothing-here/v1/chat/completions; ` +
        "check --base-url: give the server root, e.g. http://host:8000, or …/v1)",
    );
  });
  /**
   * A server of its own (so no connection is pooled yet) that answers a connection's first request
   * and meets the next ones on it with `then`.
   */
  const secondOnConnection = (then: Step[]) =>
    rawServer((_req, _i, onConnection) => onConnection === 0 ? scripts["/ok/v1/chat/completions"] : then);
  /** The fetch under test, recording what it says at each hand-over (`onSend(reused)`). */
  const reporting = () => {
    const reused: unknown[] = [];
    const inner = fetch ?? ((u: string, i: RequestInit) => globalThis.fetch(u, i));
    const f = (u: string, i: RequestInit) => {
      const onSend = (i as { onSend?: (r?: boolean) => void }).onSend;
      return inner(u, { ...i, onSend: (r?: boolean) => (reused.push(r), onSend?.(r)) } as RequestInit);
    };
    return { reused, f };
  };
  test("a pooled keep-alive connection closed with no reply is sent again once, on a new connection, timed from the first send", async () => {
    // The server closes the connection, with no reply, 150 ms after reading the second request on it:
    // the wait must show in the TTFT of the request sent again.
    const stale = await secondOnConnection([{ wait: 150 }, { close: true }]);
    const { reused, f } = reporting();
    const ep = parseEndpoint(`http://127.0.0.1:${stale.port}`);
    const first = await streamCompletion(ep, "chat", {}, { ...quick, fetch: f });
    assert.equal(first.ok, true, first.error ?? "");
    const [r0, c0] = [stale.requests.length, stale.connections()];
    const r = await streamCompletion(ep, "chat", {}, { ...quick, fetch: f, tScheduledMs: performance.now() });
    await stale.close();
    const row = requestRow(r);
    if (client.startsWith("h1")) assert.deepEqual(reused, [false, true, false], "the h1 client says which connection was reused");
    // Deno's fetch resends such a request itself (and its node:http is built on it).
    const clientRetries = runtime.name === "deno" && !client.startsWith("h1");
    if (clientRetries && r.ok && r.connectionRetries === 0) {
      // The runtime's fetch sent it again itself, under ik's one attempt.
      assert.equal(r.errorKind, null);
    } else if (reused[1] === true) {
      assert.equal(r.ok, true, r.error ?? "");
      assert.equal(r.connectionRetries, 1);
      assert.equal(row.connection_retries, 1);
      assert.equal(stale.requests.length - r0, 2);
      assert.equal(stale.connections() - c0, 1, "the resend went on a new connection");
      assert.ok((row.ttft_ms ?? 0) >= 140, `TTFT ${row.ttft_ms} ms counts from the first send: it holds the failed attempt`);
      assert.ok((row.send_lag_ms ?? Infinity) < 100, `send lag ${row.send_lag_ms} ms is the first send's, not the resend's`);
    } else {
      // A client that cannot say the connection was reused: nothing is sent again, the failure is recorded.
      assert.equal(r.ok, false);
      assert.equal(r.errorKind, "network");
      assert.match(r.error ?? "", /^closed without a response/);
      assert.equal(r.connectionRetries, 0);
      assert.equal(stale.requests.length - r0, 1);
    }
  });
  test("a NEW connection reset with no reply is a network failure, not sent again (RFC 9112 §9.3.1)", async () => {
    const fresh = await rawServer(() => [{ reset: true }]);
    try {
      const { reused, f } = reporting();
      const r = await streamCompletion(parseEndpoint(`http://127.0.0.1:${fresh.port}`), "chat", {}, { ...quick, fetch: f });
      if (client.startsWith("h1")) assert.deepEqual(reused, [false]);
      assert.equal(r.ok, false);
      assert.equal(r.errorKind, "network", r.error ?? "");
      assert.match(r.error ?? "", /^closed without a response/);
      assert.equal(r.connectionRetries, 0);
      assert.equal(requestRow(r).error_kind, "network");
      assert.equal(isUnreachable(r), false);
      if (!(runtime.name === "deno" && !client.startsWith("h1"))) assert.equal(fresh.requests.length, 1, "sent once");
    } finally {
      await fresh.close();
    }
  });
  if (client.startsWith("h1")) {
    test("a pooled connection closed after part of a status line is not sent again: the server took the request", async () => {
      const cut = await secondOnConnection([{ raw: "HTTP/1.1 200 OK\r\ncontent-ty" }, { wait: 20 }, { reset: true }]);
      const ep = parseEndpoint(`http://127.0.0.1:${cut.port}`);
      const first = await streamCompletion(ep, "chat", {}, quick);
      assert.equal(first.ok, true, first.error ?? "");
      const r0 = cut.requests.length;
      const r = await streamCompletion(ep, "chat", {}, quick);
      await cut.close();
      assert.equal(r.errorKind, "network", r.error ?? "");
      assert.match(r.error ?? "", /^closed mid-head: the server sent the start of a response head/);
      assert.equal(r.connectionRetries, 0);
      assert.equal(cut.requests.length - r0, 1);
      assert.equal(isUnreachable(r), false, "the server is there: not exit 69");
    });
  }
  for (const how of ["close", "reset"] as const) {
    test(`network: a server that accepts and ${how}s with no reply is "closed without a response", not unreachable`, async () => {
      const r = await streamCompletion(at(`silent-${how}`), "chat", {}, quick);
      assert.equal(r.errorKind, "network", r.error ?? "");
      assert.equal(r.status, 0);
      assert.equal(r.tHeadersMs, null);
      assert.match(r.error ?? "", /^closed without a response/);
      assert.equal(isUnreachable(r), false, "the server is there: not exit 69");
      assert.equal(requestRow(r).error_kind, "network");
    });
  }
});
}

test("errors before any response, as each runtime words them: connect failures are unreachable, a dropped connection is not", async () => {
  const bunErr = (code: string, message: string) => Object.assign(new Error(message), { code });
  const denoErr = (inner: string) => new TypeError("fetch failed", { cause: new Error(inner) });
  const cases: [string, Error, boolean][] = [
    ["bun refused", bunErr("ECONNREFUSED", "Unable to connect. Is the computer able to access the url?"), true],
    ["bun dns", bunErr("ENOTFOUND", "getaddrinfo ENOTFOUND ik-test-host.invalid"), true],
    ["bun no route", bunErr("EHOSTUNREACH", "host unreachable"), true],
    ["bun closed", bunErr("ECONNRESET", "The socket connection was closed unexpectedly."), false],
    [
      "deno refused",
      denoErr("error sending request for url (http://h/v1): client error (Connect): tcp connect error: Connection refused"),
      true,
    ],
    ["deno dns", denoErr("client error (Connect): dns error: failed to lookup address information"), true],
    ["deno reset while connecting", denoErr("client error (Connect): tcp connect error: Connection reset by peer"), true],
    ["deno closed", denoErr("client error (SendRequest): connection closed before message completed"), false],
    ["deno reset", denoErr("Connection reset by peer (os error 104)"), false],
  ];
  for (const [name, err, unreachable] of cases) {
    const r = await streamCompletion(ep0, "chat", {}, { fetch: () => Promise.reject(err) });
    assert.equal(r.errorKind, "network", name);
    assert.equal(isUnreachable(r), unreachable, `${name}: ${r.error}`);
    if (!unreachable) assert.match(r.error ?? "", /^closed without a response/, name);
  }
});

test("a 404 that names a model keeps the URL but does not blame --base-url", async () => {
  const r = await httpError(404, fixture("vllm/error-unknown-model.json"));
  assert.match(r.error ?? "", /does not exist.*\(POST http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions\)$/);
});

test("a flat error object mid-stream (no 'error' wrapper) is an error event", async () => {
  const r = await runScripted([
    { at: 1, text: chatChunk({ content: "a" }) },
    {
      at: 2,
      text:
        `data: {"object": "error", "message": "Generation aborted.", "type": "SERVICE_UNAVAILABLE", "param": null, "code": 503}\n\n`,
    },
    { at: 3, text: DONE },
  ]);
  assert.equal(r.errorKind, "protocol");
  assert.match(r.error ?? "", /Generation aborted/);
});
