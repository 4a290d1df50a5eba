/**
 * The Node build's serve (lib/runtime/node.ts: node:http, what `ik mock` runs on in the Node
 * build), in process where the runtime's node:http server allows it: chunked events framed by
 * hand and written at once, keep-alive after them, a large body under backpressure, HTTP/1.0
 * (no chunking), and the body-read time it hands the handler (small bodies read first, large ones
 * streamed). The Node build itself runs the same code in the end-to-end suites (IK_BIN=dist/ik-node).
 */
import assert from "node:assert/strict";
import * as net from "node:net";
import { test } from "node:test";
import { nodeServe } from "../../lib/runtime/node.ts";
import type { ServedRequestInfo } from "../../lib/runtime/mod.ts";

const enc = new TextEncoder();

/** One raw HTTP exchange on a fresh socket; resolves with everything the server sent until it closed or `until` matched. */
function rawExchange(port: number, request: string, until: RegExp): Promise<string> {
  return new Promise((ok, fail) => {
    const s = net.connect(port, "127.0.0.1");
    let got = "";
    const t = setTimeout(() => (s.destroy(), fail(new Error(`no answer: ${got}`))), 5000);
    s.on("data", (d) => {
      got += d.toString("latin1");
      if (until.test(got)) (clearTimeout(t), s.destroy(), ok(got));
    });
    s.on("end", () => (clearTimeout(t), ok(got)));
    s.on("error", (e) => (clearTimeout(t), fail(e)));
    s.write(request);
  });
}

test("node serve: events stream at once, bodies of every size arrive whole, keep-alive holds, the body-read time is handed over", async () => {
  const infos: (ServedRequestInfo | undefined)[] = [];
  const srv = await nodeServe(async (req, info) => {
    infos.push(info);
    const path = new URL(req.url).pathname;
    const text = req.method === "POST" ? await req.text() : "";
    if (path === "/events") {
      let i = 0;
      let timer: ReturnType<typeof setInterval> | undefined;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new Uint8Array(0)); // an empty chunk must not end a chunked body
            timer = setInterval(() => {
              c.enqueue(enc.encode(`data: ${i}\n\n`));
              if (++i === 5) (clearInterval(timer), c.close());
            }, 15);
          },
          cancel: () => clearInterval(timer),
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    if (path === "/big") return new Response(new Uint8Array(4 * 1024 * 1024).fill(65));
    return new Response(`len=${text.length}`);
  }, { port: 0 });
  try {
    const base = `http://127.0.0.1:${srv.port}`;
    for (let round = 0; round < 2; round++) { // the second round reuses the kept-alive connection
      const r = await fetch(`${base}/events`);
      const rd = r.body!.getReader();
      const t0 = performance.now();
      const first = await rd.read();
      assert.ok(performance.now() - t0 < 1000, "the first event comes before the stream ends");
      let all = new TextDecoder().decode(first.value);
      for (;;) {
        const x = await rd.read();
        if (x.done) break;
        all += new TextDecoder().decode(x.value);
      }
      assert.equal(all, [0, 1, 2, 3, 4].map((i) => `data: ${i}\n\n`).join(""));
    }
    const big = new Uint8Array(await (await fetch(`${base}/big`)).arrayBuffer());
    assert.equal(big.length, 4 * 1024 * 1024);
    assert.ok(big.every((b) => b === 65));

    infos.length = 0;
    const small = "x".repeat(1000);
    assert.equal(await (await fetch(`${base}/echo`, { method: "POST", body: small })).text(), "len=1000");
    const info = infos[0];
    assert.equal(typeof info?.bodyReadMs, "number", "a small body is read before the handler, and timed");
    assert.ok((info!.bodyReadMs as number) <= performance.now());
    const large = "y".repeat(2 * 1024 * 1024);
    assert.equal(await (await fetch(`${base}/echo`, { method: "POST", body: large })).text(), `len=${large.length}`);
    assert.equal(infos[1]?.bodyReadMs, null, "a large body streams to the handler, which times its own read");

    const old = await rawExchange(srv.port, "GET /events HTTP/1.0\r\nHost: x\r\n\r\n", /data: 4\n\n$/);
    assert.match(old, /^HTTP\/1\.[01] 200/);
    assert.doesNotMatch(old, /transfer-encoding: chunked/i, "HTTP/1.0 gets no chunks");
    assert.ok(old.endsWith("data: 3\n\ndata: 4\n\n"), old.slice(-60));
  } finally {
    await srv.close();
  }
});
