/**
 * The Node build's HTTP client for measured requests (lib/runtime/_node_fetch.ts), run on Bun and
 * Deno too (node:http is on both): what it keeps of fetch's contract for ik's callers, the send
 * hook, keep-alive under concurrency, backpressure, cancel and abort, and what it leaves to fetch.
 * Loopback only; every loop bounded.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { nodeFetch } from "../../lib/runtime/_node_fetch.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import type { Served } from "../../lib/runtime/mod.ts";
import { chatChunk, DONE, type RawServer, rawServer } from "../client/_raw_server.ts";

type Init = RequestInit & { onSend?: () => void };
const fallbackCalls: string[] = [];
const fallback = (u: string, i?: RequestInit) => {
  fallbackCalls.push(u);
  return fetch(u, i);
};
const client = nodeFetch(fallback);
const BIG = 5 * 1024 * 1024;

describe("node:http client", () => {
  let srv: Served;
  const seen: { method: string; headers: Headers; body: string }[] = [];
  before(async () => {
    srv = await runtime.serve(async (req) => {
      const u = new URL(req.url);
      seen.push({ method: req.method, headers: req.headers, body: await req.text() });
      if (u.pathname === "/empty") return new Response(null, { status: 204 });
      if (u.pathname === "/big") return new Response(new Uint8Array(BIG).fill(7));
      if (u.pathname === "/cookies") {
        const h = new Headers({ "content-type": "text/plain" });
        h.append("set-cookie", "a=1");
        h.append("set-cookie", "b=2");
        return new Response("ok", { status: 201, headers: h });
      }
      return new Response(`echo:${seen[seen.length - 1].body}`, { headers: { "x-seen": "yes" } });
    }, { port: 0 });
  });
  after(() => srv.close());
  const url = (p: string) => `http://127.0.0.1:${srv.port}${p}`;

  test("method, headers and a multi-byte body arrive as sent; status, headers and body come back", async () => {
    const body = JSON.stringify({ content: "héllo ✓ 日本" });
    let sent = 0;
    const r = await client(url("/echo"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer k", "x-trace": "7" },
      body,
      redirect: "manual",
      onSend: () => sent++,
    } as Init);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-seen"), "yes");
    assert.equal(await r.text(), `echo:${body}`);
    assert.equal(sent, 1, "onSend once per request");
    const s = seen[seen.length - 1];
    assert.equal(s.method, "POST");
    assert.equal(s.headers.get("authorization"), "Bearer k");
    assert.equal(s.headers.get("x-trace"), "7");
    assert.equal(s.headers.get("content-length"), String(new TextEncoder().encode(body).length));
    assert.equal(s.body, body);
  });

  test("a 204 has a null body; repeated response headers are all kept", async () => {
    const e = await client(url("/empty"), { method: "POST", body: "{}", redirect: "manual" });
    assert.equal(e.status, 204);
    assert.equal(e.body, null);
    const c = await client(url("/cookies"), { method: "POST", body: "{}", redirect: "manual" });
    assert.equal(c.status, 201);
    assert.deepEqual(c.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.equal(await c.text(), "ok");
  });

  test("a 5 MiB body read slowly arrives whole (backpressure pauses the socket, never drops)", async () => {
    const r = await client(url("/big"), { method: "POST", body: "{}", redirect: "manual" });
    const rd = r.body!.getReader();
    let n = 0;
    let bad = 0;
    for (let i = 0; i < 100_000; i++) {
      const { done, value } = await rd.read();
      if (done) break;
      n += value.byteLength;
      for (const b of value) if (b !== 7) bad++;
      if (i % 8 === 0) await new Promise((ok) => setTimeout(ok, 1));
    }
    assert.equal(n, BIG);
    assert.equal(bad, 0);
  });

  test("what it does not do goes to the fallback fetch: redirect follow, a stream body, credentials in the URL", async () => {
    fallbackCalls.length = 0;
    await (await client(url("/echo"), { method: "POST", body: "{}" })).text(); // redirect: follow (default)
    await (await client(url("/echo"), {
      method: "POST",
      body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("{}")), c.close()) }),
      redirect: "manual",
      // @ts-ignore: fetch needs duplex for a streamed request body
      duplex: "half",
    })).text();
    // (Node's fetch refuses such a URL outright; Bun's and Deno's send it.)
    await client(`http://u:p@127.0.0.1:${srv.port}/echo`, { method: "POST", body: "{}", redirect: "manual" })
      .then((r) => r.text())
      .catch(() => "");
    assert.equal(fallbackCalls.length, 3, fallbackCalls.join(" "));
    await (await client(url("/echo"), { method: "POST", body: "{}", redirect: "manual" })).text();
    assert.equal(fallbackCalls.length, 3, "a plain measured request is its own");
  });

  test("an aborted signal rejects before sending; a refused connection rejects with its code", async () => {
    const before = seen.length;
    await assert.rejects(client(url("/echo"), { method: "POST", body: "{}", redirect: "manual", signal: AbortSignal.abort() }));
    assert.equal(seen.length, before);
    const dead = await runtime.serve(() => new Response(""), { port: 0 });
    const port = dead.port;
    await dead.close();
    await assert.rejects(
      client(`http://127.0.0.1:${port}/x`, { method: "POST", body: "{}", redirect: "manual" }),
      (e: Error & { code?: string }) => /ECONNREFUSED|refused/i.test(`${e.code} ${e.message}`),
    );
  });
});

describe("node:http client over a scripted socket", () => {
  let raw: RawServer;
  before(async () => {
    raw = await rawServer((req) =>
      req.path === "/stream"
        ? [
          { head: 200 },
          ...Array.from({ length: 40 }, () => [{ chunk: chatChunk({ content: "a" }) }, { wait: 20 }]).flat(),
          { end: true },
        ]
        : [{ head: 200 }, { wait: 30 }, { chunk: chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE }, {
          end: true,
        }]
    );
  });
  after(() => raw.close());

  test("64 requests at once, twice: all answered, and the second wave reuses the first wave's connections", async () => {
    const go = () =>
      Promise.all(Array.from({ length: 64 }, (_, i) =>
        client(`http://127.0.0.1:${raw.port}/v1/chat/completions`, {
          method: "POST",
          body: JSON.stringify({ i }),
          redirect: "manual",
        }).then((r) => r.text())));
    const c0 = raw.connections();
    const a = await go();
    const c1 = raw.connections();
    const b = await go();
    const c2 = raw.connections();
    assert.ok([...a, ...b].every((t) => t.includes("[DONE]")));
    assert.ok(c1 - c0 <= 64, `first wave: ${c1 - c0} connections`);
    assert.ok(c2 - c1 <= 4, `second wave opened ${c2 - c1} new connections: the pool must keep them`);
  });

  test("cancelling the body mid-stream ends the request (the socket is dropped, not drained)", async () => {
    const r = await client(`http://127.0.0.1:${raw.port}/stream`, { method: "POST", body: "{}", redirect: "manual" });
    const rd = r.body!.getReader();
    await rd.read();
    const t0 = performance.now();
    await rd.cancel();
    assert.ok(performance.now() - t0 < 200);
  });

  test("aborting mid-body errors the body stream with the signal's reason", async () => {
    const ac = new AbortController();
    const r = await client(`http://127.0.0.1:${raw.port}/stream`, {
      method: "POST",
      body: "{}",
      redirect: "manual",
      signal: ac.signal,
    });
    const rd = r.body!.getReader();
    await rd.read();
    ac.abort(new Error("stop now"));
    await assert.rejects(async () => {
      for (let i = 0; i < 100; i++) if ((await rd.read()).done) break;
    });
  });
});
