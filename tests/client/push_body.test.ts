/**
 * The streaming loop takes a body from ik's HTTP/1.1 client chunk by chunk (the client's body
 * sink: no stream, no queue, no promise per chunk) and reads any other fetch's body through its
 * stream. Both paths give the same result for the same bytes, and the sink path keeps what the
 * stream path guarantees: the line cap stops the body (also when the line came with the head),
 * [DONE] on a body kept open stops reading soon, a gzip body and an error status still go through
 * the stream. Loopback only; every loop bounded.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type BodySink, h1Fetch, type H1Fetch, netConnect } from "../../lib/h1/mod.ts";
import { type Endpoint, parseEndpoint, type RequestResult, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { chatChunk, DONE, type RawServer, rawServer, usageChunk } from "./_raw_server.ts";
import { SinkFeed } from "../../lib/client/_body_feed.ts";

type Fetch = (u: string, i: RequestInit) => Promise<Response>;

/** ik's client as the binary measures with it (Bun: over Bun's sockets), else over node:net. */
const h1: H1Fetch = typeof (runtime.fetch as Partial<H1Fetch>).closeIdle === "function"
  ? runtime.fetch as H1Fetch
  : h1Fetch(netConnect, (u, i) => fetch(u, i));

/** The same client, with a record of what its body sinks said at each head. */
function spied(): { fetch: Fetch; took: boolean[] } {
  const took: boolean[] = [];
  const f: Fetch = (u, i) => {
    const sink = (i as { bodySink?: BodySink }).bodySink;
    if (!sink) return h1(u, i);
    const wrapped: BodySink = {
      accepts: (s, h, cancel) => {
        const yes = sink.accepts(s, h, cancel);
        took.push(yes);
        return yes;
      },
      data: (b) => sink.data(b),
      end: (e) => sink.end(e),
    };
    return h1(u, { ...i, bodySink: wrapped } as RequestInit);
  };
  return { fetch: f, took };
}

/** The same client with the sink taken away: the body comes through the Response's stream. */
const streamOnly: Fetch = (u, i) => {
  const { bodySink: _drop, ...rest } = i as RequestInit & { bodySink?: unknown };
  return h1(u, rest);
};

const sameResult = (a: RequestResult, b: RequestResult) => {
  const keys = ["ok", "errorKind", "error", "text", "nTokens", "nTokenEvents", "finishReason", "endedWithDone", "status"] as const;
  for (const k of keys) assert.deepEqual(a[k], b[k], k);
  assert.deepEqual(requestRow(a).token_count_method, requestRow(b).token_count_method);
};

const words = Array.from({ length: 40 }, (_, i) => `w${i} `);

describe("the body sink path against the stream path, on one socket client", () => {
  let srv: RawServer;
  let ep: (p: string) => Endpoint;
  before(async () => {
    srv = await rawServer((req) => {
      const p = req.path.split("/v1/")[0];
      // Head and the first events in one write, as a fast server's first read brings them.
      if (p === "/stream") return [{ head: 200 }, { chunk: words.map((w) => chatChunk({ content: w })).join("") + usageChunk(40) + DONE }, { end: true }];
      if (p === "/paced") return [{ head: 200 }, ...words.flatMap((w) => [{ chunk: chatChunk({ content: w }) }, { wait: 2 }]), { chunk: chatChunk({}, { choices: [{ index: 0, delta: {}, finish_reason: "length" }] }) + DONE }, { end: true }];
      if (p === "/hugeline") return [{ head: 200 }, { chunk: chatChunk({ content: "a" }) + 'data: {"choices":[{"delta":{"content":"' + "x".repeat(300_000) }, { wait: 3000 }, { chunk: '"}}]}\n\n' + DONE }, { end: true }];
      if (p === "/donehold") return [{ head: 200 }, { chunk: chatChunk({ content: "a" }) + chatChunk({ content: "b" }) + DONE }, { wait: 4000 }, { end: true }];
      if (p === "/nodone") return [{ head: 200 }, { chunk: chatChunk({ content: "a" }) }, { end: true }];
      if (p === "/notsse") return [{ head: 200, headers: { "content-type": "application/json" } }, { chunk: '{"choices":[{"message":{"content":"whole"}}]}' }, { end: true }];
      if (p === "/err") return [{ head: 429, headers: { "content-type": "application/json", "retry-after": "2" } }, { chunk: '{"error":{"message":"slow down"}}' }, { end: true }];
      return [{ head: 404 }, { end: true }];
    });
    ep = (p) => parseEndpoint(`http://127.0.0.1:${srv.port}${p}`);
  });
  after(async () => {
    h1.closeIdle();
    await srv.close();
  });
  const opts = { idleTimeoutMs: 5000, timeoutMs: 10_000 };

  for (const path of ["/stream", "/paced", "/nodone", "/notsse"]) {
    test(`${path}: the sink takes the 2xx body and the result is the stream path's, field for field`, async () => {
      const s = spied();
      const pushed = await streamCompletion(ep(path), "chat", { model: "m", stream: true }, { ...opts, fetch: s.fetch });
      const streamed = await streamCompletion(ep(path), "chat", { model: "m", stream: true }, { ...opts, fetch: streamOnly });
      assert.deepEqual(s.took, [true], "the loop's sink took the body");
      sameResult(pushed, streamed);
      if (path === "/stream" || path === "/paced") {
        assert.equal(pushed.ok, true, pushed.error ?? "");
        assert.equal(pushed.text, words.join(""));
        assert.equal(pushed.nTokenEvents, 40);
        assert.ok((pushed.tHeadersMs ?? Infinity) <= (pushed.tFirstMs ?? -Infinity), "the head is stamped before the first token");
      } else assert.equal(pushed.ok, false);
    });
  }

  test("an error status is not taken by the sink: its body is read whole through the stream", async () => {
    const s = spied();
    const r = await streamCompletion(ep("/err"), "chat", { model: "m", stream: true }, { ...opts, fetch: s.fetch });
    assert.deepEqual(s.took, [false]);
    assert.equal(r.errorKind, "http");
    assert.match(r.error ?? "", /slow down/);
    assert.match(r.error ?? "", /retry/i);
  });

  test("a line over the cap, arriving with the head: protocol, and the body is dropped at once, not read on", async () => {
    const s = spied();
    const t0 = performance.now();
    const r = await streamCompletion(ep("/hugeline"), "chat", { model: "m", stream: true }, { ...opts, fetch: s.fetch, maxSseLineBytes: 4096 });
    assert.deepEqual(s.took, [true]);
    assert.equal(r.errorKind, "protocol");
    assert.equal(r.error, "SSE line over 4096 bytes");
    assert.ok(performance.now() - t0 < 2500, "it did not wait for the rest of the body");
    for (let i = 0; i < 100 && h1.connections().busy > 0; i++) await new Promise((ok) => setTimeout(ok, 10));
    assert.equal(h1.connections().busy, 0, "the connection was dropped");
  });

  test("[DONE] on a body kept open: the sink path stops reading soon, ok", async () => {
    const t0 = performance.now();
    const r = await streamCompletion(ep("/donehold"), "chat", { model: "m", stream: true }, { ...opts, fetch: spied().fetch });
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.nTokens, 2);
    assert.ok(performance.now() - t0 < 2500, `took ${performance.now() - t0} ms`);
  });
});

/** A sink owner that records nothing and reads on. */
const feedOwner = () => ({ headArrived() {}, chunk: () => true, bodyEnded() {} });

test("the loop's sink takes only a 2xx body that needs no decoding, and only once its head is recorded", () => {
  const h = (ce?: string) => new Headers(ce ? { "content-encoding": ce } : {});
  const yes = new SinkFeed(feedOwner());
  assert.equal(yes.accepts(200, h(), { cancelBody: () => {} }), true);
  assert.equal(yes.taken, true);
  for (const [status, ce] of [[404, undefined], [301, undefined], [200, "gzip"], [200, " X-Gzip"], [200, "deflate"]] as const) {
    const s = new SinkFeed(feedOwner());
    assert.equal(s.accepts(status, h(ce), { cancelBody: () => {} }), false, `${status} ${ce ?? ""}`);
    assert.equal(s.taken, false);
  }
  assert.equal(new SinkFeed(feedOwner()).accepts(206, h(" Identity "), { cancelBody: () => {} }), true);
  // An encoding ik does not decode is passed through as it came on either path: the sink may take it.
  assert.equal(new SinkFeed(feedOwner()).accepts(200, h("br"), { cancelBody: () => {} }), true);
  const broken = new SinkFeed({
    headArrived() {
      throw new Error("no clock");
    },
    chunk: () => true,
    bodyEnded() {},
  });
  assert.throws(() => broken.accepts(200, h(), { cancelBody: () => {} }), /no clock/);
  assert.equal(broken.taken, false, "a head that could not be recorded leaves the body to the stream");
});

test("the sink tells its owner the body's end once, when it watches: at once for an end that came first, a stop asked for before it, or later", () => {
  const h = new Headers();
  const make = (chunkOk = true) => {
    const heard: unknown[] = [];
    let cancels = 0;
    const sink = new SinkFeed({ headArrived() {}, chunk: () => chunkOk, bodyEnded: (e) => void heard.push(e) });
    assert.equal(sink.accepts(200, h, { cancelBody: () => void cancels++ }), true);
    return { sink, heard, cancels: () => cancels };
  };
  // The whole body came with the head: the end waits for watch().
  const early = make();
  early.sink.data(new Uint8Array([1]));
  early.sink.end(null);
  assert.deepEqual(early.heard, [], "nobody watches yet");
  early.sink.watch();
  assert.deepEqual(early.heard, [null]);
  // A failure that came first is what the owner hears.
  const failed = make();
  const boom = new Error("reset");
  failed.sink.end(boom);
  failed.sink.watch();
  assert.deepEqual(failed.heard, [boom]);
  // A chunk that asked to stop before watch(): stopped (the response abandoned) when it watches.
  const stopped = make(false);
  stopped.sink.data(new Uint8Array([1]));
  assert.equal(stopped.cancels(), 0);
  stopped.sink.watch();
  assert.equal(stopped.cancels(), 1);
  assert.deepEqual(stopped.heard, [null]);
  // The usual case: watched first, then the end; told once whatever comes after.
  const later = make();
  later.sink.watch();
  assert.deepEqual(later.heard, []);
  later.sink.end(null);
  later.sink.end(new Error("after the end"));
  later.sink.stop();
  assert.deepEqual(later.heard, [null], "once");
});
