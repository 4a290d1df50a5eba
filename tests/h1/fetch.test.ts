/**
 * ik's HTTP/1.1 client as a fetch: the request on the wire, keep-alive reuse (also after a body
 * that outran its reader and paused the socket), backpressure, abort and cancel, a pooled
 * connection the server closed, connect errors with their OS code, what goes to the fallback, and a
 * body handed to a sink (the streaming loop's path: no stream between the socket and the parser).
 * Run over both transports this runtime has: node:net everywhere, and the runtime's own (on Bun,
 * Bun.connect). Loopback only; every loop bounded.
 */
import assert from "node:assert/strict";
import * as net from "node:net";
import { after, before, describe, test } from "node:test";
import { type BodyCancel, type BodySink, type H1Fetch, h1Fetch, netConnect } from "../../lib/h1/mod.ts";
import type { HeadersLike } from "../../lib/h1/types.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { closedPort, type RawServer, rawServer, type Step } from "../client/_raw_server.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A forced full collection where the runtime offers one to tests (Bun), else null. */
const forceGc = (globalThis as { Bun?: { gc(full: boolean): void } }).Bun?.gc ?? null;
const dec = new TextDecoder();

/** Reads a body to its end, optionally pausing between reads (a slow reader). */
async function readAll(res: Response, pauseMs = 0): Promise<string> {
  const rd = (res.body as ReadableStream<Uint8Array>).getReader();
  let s = "";
  for (let i = 0; i < 100_000; i++) {
    const r = await rd.read();
    if (r.done) break;
    s += dec.decode(r.value, { stream: true });
    if (pauseMs) await sleep(pauseMs);
  }
  return s;
}

const post = (body: string, extra: RequestInit = {}): RequestInit => ({
  method: "POST", headers: { "content-type": "application/json", "x-test": "1" }, body, redirect: "manual", ...extra,
});

const fallbackCalls: string[] = [];
const fallback = (u: string, _i?: RequestInit) => {
  fallbackCalls.push(u);
  return Promise.resolve(new Response("from the fallback"));
};

const transports: [string, H1Fetch | null][] = [["node:net", h1Fetch(netConnect, fallback)]];
// On Bun the runtime's measured client is this client over Bun.connect (unless IK_HTTP_CLIENT=fetch).
if (runtime.name === "bun" && typeof (runtime.fetch as Partial<H1Fetch>).closeIdle === "function") {
  transports.push(["Bun.connect (the runtime's client)", runtime.fetch as H1Fetch]);
}

const many = (n: number, len: number): Step[] => Array.from({ length: n }, (_, i) => ({ chunk: `${String(i).padStart(6, "0")}${"x".repeat(len)}\n` }));

for (const [name, f] of transports) {
  const h1 = f as H1Fetch;
  describe(`h1 client over ${name}`, () => {
    let srv: RawServer;
    before(async () => {
      srv = await rawServer((req) => {
        if (req.path.startsWith("/echo")) {
          return [{ head: 200, headers: { "content-type": "application/json" } }, { chunk: JSON.stringify(req) }, { end: true }];
        }
        if (req.path === "/long") return [{ head: 200 }, ...many(300, 200), { end: true }];
        if (req.path === "/slow-head") return [{ wait: 2000 }, { head: 200 }, { end: true }];
        if (req.path === "/slow-body") return [{ head: 200 }, { chunk: "a" }, { wait: 2000 }, { end: true }];
        if (req.path === "/then-close") return [{ head: 200 }, { chunk: "one" }, { end: true }, { wait: 30 }, { close: true }];
        // Two fields of one name (the second line rides in the first's value).
        if (req.path === "/dup") return [{ head: 200, headers: { "content-type": "text/event-stream", "x-dup": "a\r\nX-Dup: b" } }, { chunk: "hello" }, { end: true }];
        if (req.path === "/ctl") return [{ head: 200, headers: { "content-type": "text/event-stream", "x-ctl": "a\x01b" } }, { chunk: "hello" }, { end: true }];
        return [{ head: 404, headers: { "content-type": "text/plain" } }, { chunk: "nope" }, { end: true }];
      });
    });
    after(async () => {
      h1.closeIdle();
      await srv.close();
    });
    const url = (p: string) => `http://127.0.0.1:${srv.port}${p}`;

    test("the request on the wire: method, path and query, host, the caller's headers, a UTF-8 body with its byte length", async () => {
      const body = JSON.stringify({ text: "naïve café — 日本" });
      const res = await h1(url("/echo?x=1"), post(body));
      assert.equal(res.status, 200);
      const seen = JSON.parse(await readAll(res));
      assert.equal(seen.method, "POST");
      assert.equal(seen.path, "/echo?x=1");
      assert.equal(seen.headers.host, `127.0.0.1:${srv.port}`);
      assert.equal(seen.headers["x-test"], "1");
      assert.equal(seen.headers["content-length"], String(new TextEncoder().encode(body).length));
      assert.equal(seen.body, body);
    });

    test("sequential long responses read slowly (the socket paused and resumed) reuse one connection", async () => {
      h1.closeIdle();
      const c0 = srv.connections();
      for (let i = 0; i < 3; i++) {
        const res = await h1(url("/long"), post("{}"));
        const text = await readAll(res, i === 0 ? 1 : 0);
        assert.equal(text.split("\n").length - 1, 300, `response ${i}`);
        assert.ok(text.startsWith("000000") && text.includes("000299"), `response ${i} whole and in order`);
      }
      assert.equal(srv.connections() - c0, 1, "one connection for all three");
      assert.deepEqual(h1.connections(), { busy: 0, idle: 1 });
    });

    test("abort before the head rejects with the signal's reason; mid-body it errors the read; the next request works", async () => {
      const ac = new AbortController();
      const p = h1(url("/slow-head"), post("{}", { signal: ac.signal }));
      setTimeout(() => ac.abort(new Error("stop now")), 50);
      await assert.rejects(p, /stop now/);
      const ac2 = new AbortController();
      const res = await h1(url("/slow-body"), post("{}", { signal: ac2.signal }));
      const rd = (res.body as ReadableStream<Uint8Array>).getReader();
      assert.equal(dec.decode((await rd.read()).value), "a");
      setTimeout(() => ac2.abort(new Error("cut")), 50);
      await assert.rejects(rd.read(), /cut/);
      const ok = await h1(url("/echo"), post("{}"));
      assert.equal(ok.status, 200);
      await readAll(ok);
      await assert.rejects(h1(url("/echo"), post("{}", { signal: AbortSignal.abort(new Error("already")) })), /already/);
    });

    test("a body cancelled mid-way closes its connection; the next request gets a fresh one", async () => {
      const c0 = srv.connections();
      const res = await h1(url("/long"), post("{}"));
      const rd = (res.body as ReadableStream<Uint8Array>).getReader();
      await rd.read();
      await rd.cancel();
      const again = await h1(url("/long"), post("{}"));
      assert.equal((await readAll(again)).split("\n").length - 1, 300);
      assert.ok(srv.connections() - c0 >= 1);
    });

    test("a pooled connection the server closed while idle is not reused: no failure", async () => {
      h1.closeIdle();
      const res = await h1(url("/then-close"), post("{}"));
      assert.equal(await readAll(res), "one");
      await sleep(150); // the server closes it 30 ms after the response
      assert.equal(h1.connections().idle, 0, "the closed connection left the pool");
      const next = await h1(url("/echo"), post("{}"));
      assert.equal(next.status, 200);
      await readAll(next);
    });

    test("onSend says whether the request went out on a reused pooled connection; newConnection asks for one of its own", async () => {
      h1.closeIdle();
      const c0 = srv.connections();
      const seen: unknown[] = [];
      const send = async (extra: Record<string, unknown> = {}) => {
        const res = await h1(url("/echo"), { ...post("{}"), onSend: (reused: unknown) => seen.push(reused), ...extra } as RequestInit);
        await readAll(res);
      };
      await send();
      await send();
      assert.deepEqual(seen, [false, true], "a new connection, then the pooled one");
      assert.equal(srv.connections() - c0, 1);
      await send({ newConnection: true });
      assert.deepEqual(seen, [false, true, false], "a connection of its own, though one was idle");
      assert.equal(srv.connections() - c0, 2);
      assert.equal(h1.connections().idle, 2, "both go back to the pool");
    });

    /** A body sink that records what it is given; `take` decides at the head. */
    const recorder = (take: (status: number, h: HeadersLike) => boolean = () => true) => {
      const got = { heads: [] as number[], text: "", chunks: 0, ends: [] as unknown[], cancel: null as BodyCancel | null };
      const sink: BodySink = {
        accepts: (status, h, cancel) => {
          got.heads.push(status);
          got.cancel = cancel;
          return take(status, h);
        },
        data: (b) => {
          got.chunks++;
          got.text += dec.decode(b, { stream: true });
        },
        end: (err) => void got.ends.push(err),
      };
      const ended = async () => {
        for (let i = 0; i < 400 && got.ends.length === 0; i++) await sleep(5);
      };
      return { got, sink, ended };
    };

    test("a body sink that accepts gets every chunk in order and one clean end; the Response has no body; the connection is reused", async () => {
      h1.closeIdle();
      const c0 = srv.connections();
      for (let i = 0; i < 2; i++) {
        const { got, sink, ended } = recorder();
        const res = await h1(url("/long"), { ...post("{}"), bodySink: sink } as RequestInit);
        assert.equal(res.status, 200);
        await ended();
        assert.deepEqual(got.heads, [200]);
        assert.deepEqual(got.ends, [null], "end(null) once");
        assert.equal(got.text.split("\n").length - 1, 300);
        assert.ok(got.text.startsWith("000000") && got.text.endsWith(`000299${"x".repeat(200)}\n`), "whole and in order");
        assert.equal(res.body, null, "the body went to the sink, not to a stream");
      }
      assert.equal(srv.connections() - c0, 1, "one connection for both");
      assert.deepEqual(h1.connections(), { busy: 0, idle: 1 });
    });

    test("a sink's 2xx body comes with the head alone (no Response, no Headers), read as a Response's head is; a head with a control character is checked by building a Response", async () => {
      const { got, sink, ended } = recorder();
      const res = await h1(url("/dup"), { ...post("{}"), bodySink: sink } as RequestInit);
      await ended();
      assert.equal(got.text, "hello");
      assert.equal(res instanceof Response, false, "one object of the head, not a Response and a Headers per open stream");
      assert.equal(res.status, 200);
      assert.equal(res.statusText, "X");
      assert.equal(res.ok, true);
      assert.equal(res.body, null);
      // Read as Headers reads the same fields.
      const real = new Headers([["content-type", "text/event-stream"], ["x-dup", "a"], ["X-Dup", "b"], ["transfer-encoding", "chunked"]]);
      for (const name of ["X-DUP", "x-dup", "Content-Type", "transfer-encoding", "absent", "x-du", "dup"]) {
        assert.equal(res.headers.get(name), real.get(name), name);
        assert.equal(res.headers.has(name), real.has(name), name);
      }
      const ctl = recorder();
      const checked = await h1(url("/ctl"), { ...post("{}"), bodySink: ctl.sink } as RequestInit).catch((e: Error) => e);
      // The runtime's Headers decides, as for every response before this path: it takes the value
      // (a Response) or refuses it (a protocol error).
      if (checked instanceof Error) assert.match(checked.message, /malformed header field/);
      else {
        assert.equal(checked instanceof Response, true, "checked by building a Response");
        await ctl.ended();
        assert.equal(ctl.got.text, "hello");
      }
    });

    test("a sink that declines (or throws deciding) leaves the body to the stream; it is asked with the status and headers", async () => {
      for (const take of [(st: number) => st >= 200 && st < 300, () => { throw new Error("cannot say"); }]) {
        const { got, sink } = recorder(take as (s: number, h: HeadersLike) => boolean);
        const res = await h1(url("/missing"), { ...post("{}"), bodySink: sink } as RequestInit);
        assert.deepEqual(got.heads, [404]);
        assert.equal(await res.text(), "nope");
        assert.equal(got.chunks, 0);
        assert.deepEqual(got.ends, []);
      }
      let ct: string | null = null;
      const { got, sink } = recorder((_s, h) => ((ct = h.get("content-type")), false));
      const res = await h1(url("/echo"), { ...post("{}"), bodySink: sink } as RequestInit);
      assert.equal(ct, "application/json");
      assert.equal(JSON.parse(await res.text()).path, "/echo");
      assert.equal(got.chunks, 0);
    });

    test("a sink's body: an abort mid-body ends it with the signal's reason; the sink's cancel drops the connection and tells the sink nothing", async () => {
      const ac = new AbortController();
      const a = recorder();
      await h1(url("/slow-body"), { ...post("{}", { signal: ac.signal }), bodySink: a.sink } as RequestInit);
      for (let i = 0; i < 200 && a.got.text !== "a"; i++) await sleep(5);
      assert.equal(a.got.text, "a");
      ac.abort(new Error("cut"));
      assert.equal(a.got.ends.length, 1);
      assert.match(String(a.got.ends[0]), /cut/);
      const c0 = srv.connections();
      const b = recorder();
      await h1(url("/slow-body"), { ...post("{}"), bodySink: b.sink } as RequestInit);
      for (let i = 0; i < 200 && b.got.text !== "a"; i++) await sleep(5);
      assert.equal(b.got.text, "a");
      (b.got.cancel as BodyCancel).cancelBody();
      await sleep(100);
      assert.deepEqual(b.got.ends, []);
      assert.equal(h1.connections().busy, 0, "the cancelled exchange holds no connection");
      const ok = await h1(url("/echo"), post("{}"));
      assert.equal(ok.status, 200);
      await readAll(ok);
      assert.ok(srv.connections() - c0 >= 2, "the cancelled connection was not reused");
    });

    test("an idle pooled connection keeps nothing of the exchange that opened it (its sink, and what the sink holds, can be collected)", {
      skip: !forceGc ? "needs a forced full GC (Bun)" : name === "node:net"
        ? "node:net on Bun keeps the first exchange until its socket closes, for a reason outside lib/h1 not yet found; the binary measures over Bun's own sockets"
        : false,
    }, async () => {
      h1.closeIdle();
      const refs: WeakRef<object>[] = [];
      const once = async () => {
        const r = recorder();
        const sink = Object.assign(r.sink, { held: new Uint8Array(1 << 20) });
        refs.push(new WeakRef(sink));
        await h1(url("/long"), { ...post("{}"), bodySink: sink } as RequestInit);
        await r.ended();
        assert.deepEqual(r.got.ends, [null]);
      };
      await once();
      assert.deepEqual(h1.connections(), { busy: 0, idle: 1 }, "the connection waits in the pool");
      // The collector scans native stack frames conservatively: a stale copy of a pointer left in a
      // frame of the event loop by the last socket callback keeps the dead exchange alive for as long
      // as nothing else runs there (after tests/selftest in the same process it did, every time).
      // Other exchanges, on another server (not this pooled connection), overwrite such copies.
      const other = await rawServer(() => [{ head: 200 }, { chunk: "x" }, { end: true }]);
      try {
        for (let i = 0; i < 60 && refs[0].deref() !== undefined; i++) {
          (forceGc as (full: boolean) => void)(true);
          await sleep(10);
          if (i % 3 === 2) {
            const r = recorder();
            await h1(`http://127.0.0.1:${other.port}/`, { ...post("{}"), bodySink: r.sink } as RequestInit);
            await r.ended();
          }
        }
      } finally {
        await other.close();
      }
      assert.equal(refs[0].deref(), undefined, "the pooled connection still holds the first exchange's sink");
    });

    /**
     * Starts a `/slow-body` request into a sink with `start` (which returns the object to watch),
     * waits for its first body byte, then forces collections while the body is still open: true when
     * the object is still held. The request is aborted after.
     */
    const heldWhileStreaming = async (start: (init: RequestInit) => Promise<object>): Promise<boolean> => {
      const refs: WeakRef<object>[] = [];
      const ac = new AbortController();
      const r = recorder();
      await (async () => {
        refs.push(new WeakRef(await start({ ...post("{}"), signal: ac.signal, bodySink: r.sink } as RequestInit)));
      })();
      for (let i = 0; i < 200 && r.got.text !== "a"; i++) await sleep(5);
      assert.equal(r.got.text, "a");
      for (let i = 0; i < 20 && refs[0].deref() !== undefined; i++) {
        (forceGc as (full: boolean) => void)(true);
        await sleep(10);
      }
      const held = refs[0].deref() !== undefined;
      ac.abort(new Error("done"));
      assert.deepEqual(r.got.ends.length, 1);
      return held;
    };

    test("a request whose response is still streaming keeps nothing of its init (the prompt is not held while tokens arrive)", {
      skip: !forceGc ? "needs a forced full GC (Bun)" : false,
    }, async () => {
      const held = await heldWhileStreaming(async (base) => {
        const init = { ...base, body: "x".repeat(1 << 16), held: new Uint8Array(1 << 20) };
        await h1(url("/slow-body"), init as RequestInit);
        return init;
      });
      assert.equal(held, false, "the exchange in flight still holds its init (and with it the request body)");
    });

    test("a response still streaming into a sink keeps nothing of its settled fetch (its promise, the head-only response)", {
      skip: !forceGc ? "needs a forced full GC (Bun)" : false,
    }, async () => {
      const held = await heldWhileStreaming(async (init) => {
        const res = await h1(url("/slow-body"), init);
        assert.equal(res.body, null);
        return res;
      });
      assert.equal(held, false, "the exchange in flight still holds its fetch's settle functions (and through them the response)");
    });

    test("a sink that throws on a chunk fails the response: end(error), the connection dropped", async () => {
      let n = 0;
      const ends: unknown[] = [];
      const sink: BodySink = {
        accepts: () => true,
        data: () => {
          if (++n === 2) throw new Error("sink broke");
        },
        end: (e) => void ends.push(e),
      };
      await h1(url("/long"), { ...post("{}"), bodySink: sink } as RequestInit);
      for (let i = 0; i < 400 && ends.length === 0; i++) await sleep(5);
      assert.equal(ends.length, 1);
      assert.match(String(ends[0]), /sink broke/);
      assert.equal(n, 2, "no chunk after the failure");
    });

    test("an error status comes back as a response with its body", async () => {
      const res = await h1(url("/missing"), post("{}"));
      assert.equal(res.status, 404);
      assert.equal(res.headers.get("content-type"), "text/plain");
      assert.equal(await res.text(), "nope");
    });

    test("connect errors carry the OS code, in the code and in the words (refused: ECONNREFUSED)", async () => {
      const port = await closedPort();
      await assert.rejects(h1(`http://127.0.0.1:${port}/v1`, post("{}")), (e: unknown) => (e as { code?: string }).code === "ECONNREFUSED" && /ECONNREFUSED/.test((e as Error).message));
    });

    test("a header value with a line break is refused before anything is sent", async () => {
      await assert.rejects(h1(url("/echo"), post("{}", { headers: { "x-bad": "a\r\nx-injected: 1" } })), TypeError);
    });

    test("https, a followed redirect, a streamed body and credentials in the URL go to the fallback", async () => {
      fallbackCalls.length = 0;
      if (name !== "node:net") return; // the runtime's client falls back to the runtime's fetch
      await h1("https://127.0.0.1:1/v1", post("{}"));
      await h1(url("/echo"), { method: "POST", body: "{}" }); // redirect defaults to "follow"
      await h1(url("/echo"), post("{}", { body: new ReadableStream() }));
      await h1(`http://u:p@127.0.0.1:${srv.port}/echo`, post("{}"));
      assert.equal(fallbackCalls.length, 4);
    });
  });
}

test("a body nobody reads does not pile up in memory: the socket is paused at 64 KiB queued, resumed by reads", async () => {
  const srv = await rawServer(() => [{ head: 200 }, ...many(2000, 1000), { end: true }]);
  let delivered = 0, pauses = 0, resumes = 0;
  // node:net, watched: what the transport handed to the client, and each pause and resume.
  const watched: typeof netConnect = async (host, port, h) => {
    const c = await netConnect(host, port, { data: (b) => (delivered += b.length, h.data(b)), close: (e) => h.close(e) });
    return { ...c, pause: () => (pauses++, c.pause()), resume: () => (resumes++, c.resume()) };
  };
  const f = h1Fetch(watched, fallback);
  try {
    const res = await f(`http://127.0.0.1:${srv.port}/`, post("{}"));
    await sleep(300);
    assert.ok(pauses >= 1, "paused");
    assert.ok(delivered < 1_000_000, `${delivered} bytes of 2 MB taken from the socket before anyone read`);
    const text = await readAll(res);
    assert.equal(text.split("\n").length - 1, 2000, "then the whole body arrives");
    assert.ok(resumes >= 1, "resumed");
  } finally {
    f.closeIdle();
    await srv.close();
  }
});

/** A one-shot server that answers the first request with `wire`, then resets (RST) or closes (FIN). */
async function oneShot(wire: string, end: "reset" | "close" | "none", afterMs = 30) {
  const srv = net.createServer((s) => {
    s.on("error", () => {});
    s.once("data", () => {
      s.write(wire);
      if (end !== "none") {
        setTimeout(() => {
          const r = s as net.Socket & { resetAndDestroy?: () => void };
          if (end === "reset" && r.resetAndDestroy) r.resetAndDestroy();
          else if (end === "reset") s.destroy();
          else s.end();
        }, afterMs);
      }
    });
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}/`, close: () => new Promise<void>((ok) => srv.close(() => ok())) };
}

test("chunks received before the connection was lost are read first (a [DONE] among them counts), then the error", async () => {
  const s = await oneShot("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\ne\r\ndata: [DONE]\n\n\r\n", "close");
  const f = h1Fetch(netConnect, fallback);
  try {
    const res = await f(s.url, post("{}"));
    await sleep(200); // the FIN (without the last chunk) arrives before anyone reads
    const rd = (res.body as ReadableStream<Uint8Array>).getReader();
    assert.equal(dec.decode((await rd.read()).value), "data: [DONE]\n\n");
    await assert.rejects(rd.read(), /closed mid-body/);
  } finally {
    f.closeIdle();
    await s.close();
  }
});

test("a body delimited by the close and ended by a reset is cut short, not complete; by a FIN it is complete", async () => {
  const wire = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: x\n\n";
  for (const end of ["reset", "close"] as const) {
    const s = await oneShot(wire, end);
    const f = h1Fetch(netConnect, fallback);
    try {
      const res = await f(s.url, post("{}"));
      if (end === "reset") await assert.rejects(readAll(res), /connection reset during a body delimited by the close/);
      else assert.equal(await readAll(res), "data: x\n\n");
    } finally {
      f.closeIdle();
      await s.close();
    }
  }
});

test("205 Reset Content ends at its head (no body follows), and the connection is reused", async () => {
  const s = await oneShot("HTTP/1.1 205 Reset Content\r\n\r\n", "none");
  const f = h1Fetch(netConnect, fallback);
  try {
    const res = await f(s.url, post("{}"));
    assert.equal(res.status, 205);
    assert.equal(res.body, null);
    assert.deepEqual(f.connections(), { busy: 0, idle: 1 });
  } finally {
    f.closeIdle();
    await s.close();
  }
});

test("a response cut mid-body by the server (reset) errors the read with ECONNRESET in its words", async () => {
  const srv = net.createServer((s) => {
    s.once("data", () => {
      s.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n");
      setTimeout(() => s.destroy(), 30);
    });
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
  const f = h1Fetch(netConnect, fallback);
  try {
    const res = await f(`http://127.0.0.1:${(srv.address() as net.AddressInfo).port}/`, post("{}"));
    const rd = (res.body as ReadableStream<Uint8Array>).getReader();
    assert.equal(dec.decode((await rd.read()).value), "abc");
    await assert.rejects(rd.read(), (e: unknown) => /closed mid-body/.test((e as Error).message) && (e as { code?: string }).code === "ECONNRESET");
  } finally {
    f.closeIdle();
    await new Promise<void>((ok) => srv.close(() => ok()));
  }
});
