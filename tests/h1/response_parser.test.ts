/**
 * ik's HTTP/1.1 response parser: every framing (chunked, content-length, close, none), split at
 * every byte, interim responses, persistence rules, and each malformed shape refused with a
 * message that names it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { framingOf, H1ProtocolError, keepsAlive, MAX_HEAD_BYTES, type ResponseHead, ResponseParser } from "../../lib/h1/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Feeds `wire` in pieces cut at `cuts`, then optionally closes; returns what the parser said. */
function parse(wire: string | Uint8Array, opts: { cuts?: number[]; close?: boolean; isHead?: boolean } = {}) {
  const bytes = typeof wire === "string" ? enc.encode(wire) : wire;
  const out = { head: null as ResponseHead | null, framing: "", body: "", ended: 0, parser: null as unknown as ResponseParser };
  const p = new ResponseParser({
    onHead: (h, f) => {
      out.head = h;
      out.framing = f;
    },
    // A view valid until the next push: copied, as the fetch's stream consumer would read it.
    onData: (b) => (out.body += dec.decode(b.slice(), { stream: true })),
    onEnd: () => out.ended++,
  }, opts.isHead);
  out.parser = p;
  let at = 0;
  for (const c of [...(opts.cuts ?? []), bytes.length]) {
    // Each piece is its own buffer (a transport never hands the same bytes twice).
    p.push(bytes.slice(at, c));
    at = c;
  }
  if (opts.close) p.close();
  return out;
}

const CHUNKED = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
  "f\r\ndata: {\"a\":1}\n\n\r\n" + "10;ext=1\r\ndata: [DONE]\n\n\r\n\r\n" + "0\r\nx-trailer: t\r\n\r\n";

describe("framing", () => {
  test("chunked: the data of every chunk, extensions and trailers dropped, ended once", () => {
    const r = parse(CHUNKED);
    assert.equal(r.head?.status, 200);
    assert.equal(r.framing, "chunked");
    assert.equal(r.body, 'data: {"a":1}\n\ndata: [DONE]\n\n\r\n');
    assert.equal(r.ended, 1);
    assert.equal(r.parser.done, true);
    assert.equal(r.parser.extra, false);
  });

  test("the body bytes of one push go out as one piece, however many chunks carried them", () => {
    const wire = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + Array.from({ length: 50 }, (_, i) => `2\r\n${String(i).padStart(2, "0")}\r\n`).join("") + "0\r\n\r\n";
    let calls = 0, body = "";
    const p = new ResponseParser({ onHead: () => {}, onData: (b) => (calls++, body += dec.decode(b)), onEnd: () => {} });
    p.push(enc.encode(wire));
    assert.equal(calls, 1);
    assert.equal(body, Array.from({ length: 50 }, (_, i) => String(i).padStart(2, "0")).join(""));
  });

  test("chunked, split at every byte boundary: the same body", () => {
    const want = parse(CHUNKED).body;
    const n = enc.encode(CHUNKED).length;
    for (let k = 1; k < n; k++) {
      const r = parse(CHUNKED, { cuts: [k] });
      assert.equal(r.body, want, `cut at ${k}`);
      assert.equal(r.ended, 1, `cut at ${k}`);
    }
    // and one byte at a time
    const r = parse(CHUNKED, { cuts: Array.from({ length: n - 1 }, (_, i) => i + 1) });
    assert.equal(r.body, want);
    assert.equal(r.ended, 1);
  });

  test("a multi-byte character split across chunks and pushes arrives whole", () => {
    const s = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    const body = enc.encode("naïve café —");
    const wire = new Uint8Array([...enc.encode(s), ...enc.encode("3\r\n"), ...body.subarray(0, 3), ...enc.encode("\r\n"),
      ...enc.encode((body.length - 3).toString(16) + "\r\n"), ...body.subarray(3), ...enc.encode("\r\n0\r\n\r\n")]);
    assert.equal(parse(wire, { cuts: [s.length + 4, s.length + 6] }).body, "naïve café —");
  });

  test("content-length: exactly that many bytes; bytes after it mark the connection unusable", () => {
    const r = parse("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello");
    assert.equal(r.framing, "length");
    assert.equal(r.body, "hello");
    assert.equal(r.ended, 1);
    const extra = parse("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloJUNK");
    assert.equal(extra.body, "hello");
    assert.equal(extra.parser.extra, true);
  });

  test("content-length 0, 204 and 304 and a HEAD request end at the head", () => {
    for (const [wire, isHead] of [
      ["HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", false],
      ["HTTP/1.1 204 No Content\r\n\r\n", false],
      ["HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n", false],
      ["HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n", true],
    ] as const) {
      const r = parse(wire, { isHead });
      assert.equal(r.ended, 1, wire);
      assert.equal(r.body, "");
    }
  });

  test("no length and no chunking: the body runs to the connection's close", () => {
    const r = parse("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: x\n\n", { close: true });
    assert.equal(r.framing, "close");
    assert.equal(r.body, "data: x\n\n");
    assert.equal(r.ended, 1);
  });

  test("a bare LF ends lines too (lenient servers), and a missing reason phrase is fine", () => {
    const r = parse("HTTP/1.1 200\ntransfer-encoding: chunked\n\n2\nok\n0\n\n");
    assert.equal(r.head?.reason, "");
    assert.equal(r.body, "ok");
    assert.equal(r.ended, 1);
  });

  test("interim 100 Continue and 103 Early Hints are skipped; the final head is reported", () => {
    const r = parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", { cuts: [10, 30] });
    assert.equal(r.head?.status, 200);
    assert.equal(r.body, "ok");
  });

  test("header fields keep their order and names; obs-fold continues a value", () => {
    const r = parse("HTTP/1.1 429 Too Many\r\nRetry-After: 3\r\nX-A: 1,\r\n  2\r\ncontent-length: 0\r\n\r\n");
    assert.deepEqual(r.head?.fields, [["Retry-After", "3"], ["X-A", "1, 2"], ["content-length", "0"]]);
    assert.equal(r.head?.reason, "Too Many");
  });
});

describe("leniency a real server needs (RFC 9112)", () => {
  test("chunk sizes padded with leading zeros are read by their value (§7.1: 1*HEXDIG); the value, not the digits, is bounded", () => {
    const ev = "data: {\"a\":1}\n\n";
    const pad = (n: number) => n.toString(16).padStart(16, "0");
    const wire = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + `${pad(ev.length)}\r\n${ev}\r\n` + "0000000000000000\r\n\r\n";
    for (const cuts of [[], [50, 60, 70]]) {
      const r = parse(wire, { cuts });
      assert.equal(r.body, ev);
      assert.equal(r.ended, 1);
    }
    // 13 significant hex digits are the limit, however many zeros lead them.
    assert.throws(
      () => parse("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n00010000000000000\r\n"),
      (e: unknown) => e instanceof H1ProtocolError && /chunk size over 13 hex digits/.test(e.message) && e.code === "ERR_HTTP_PARSE",
    );
  });

  test("empty lines before a status line are skipped (§2.2: a stray CRLF after the last response on a reused connection)", () => {
    for (const cuts of [[], [1], [2], [3, 10]]) {
      const r = parse("\r\n\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", { cuts });
      assert.equal(r.head?.status, 200, String(cuts));
      assert.equal(r.body, "ok");
    }
    // A connection that sent only empty lines closed before the response.
    assert.throws(() => parse("\r\n", { close: true }), /closed before the response/);
    assert.throws(() => parse("\r\nSSH-2.0-x\r\n"), /malformed status line 'SSH-2.0-x/);
  });
});

describe("cut short: the close says where", () => {
  test("closed before any byte, mid-head, mid-chunk and short of content-length: ECONNRESET errors", () => {
    const cases: [string, RegExp][] = [
      ["", /closed before the response/],
      ["HTTP/1.1 200 OK\r\ncontent-", /closed mid-head/],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", /closed mid-body, before the last chunk/],
      ["HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", /7 bytes short of its content-length/],
    ];
    for (const [wire, re] of cases) {
      assert.throws(() => parse(wire, { close: true }), (e: unknown) => e instanceof H1ProtocolError && re.test(e.message) && e.code === "ECONNRESET", wire);
    }
  });
});

describe("malformed responses are refused, naming what is wrong", () => {
  const cases: [string, RegExp][] = [
    ["SSH-2.0-OpenSSH_9.2\r\n", /malformed status line 'SSH-2.0/],
    ["HTTP/2 200\r\n\r\n", /malformed status line/],
    ["HTTP/1.1 20 OK\r\n\r\n", /malformed status line/],
    ["HTTP/1.1 200 OK\r\nbad header\r\n\r\n", /malformed header line 'bad header'/],
    ["HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\n", /malformed content-length '12abc'/],
    ["HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\n", /conflicting content-length values \(3, 4\)/],
    ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", /chunk size 'zz' is not hexadecimal/],
    ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n", /chunk data longer than its size/],
    ["HTTP/1.1 101 Switching Protocols\r\n\r\n", /unexpected 101/],
  ];
  for (const [wire, re] of cases) {
    test(JSON.stringify(wire.slice(0, 40)), () => {
      assert.throws(() => parse(wire), (e: unknown) => e instanceof H1ProtocolError && re.test(e.message));
    });
  }

  test("an HTTP/2-only server's SETTINGS frame is named", () => {
    const settings = new Uint8Array([0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100]);
    assert.throws(() => parse(settings), /not an HTTP\/1\.x response; an HTTP\/2 frame: the server speaks only HTTP\/2/);
  });

  test(`a head over ${MAX_HEAD_BYTES / 1024} KiB is refused without waiting for its end`, () => {
    const big = "HTTP/1.1 200 OK\r\n" + "x-pad: " + "a".repeat(MAX_HEAD_BYTES) + "\r\n";
    assert.throws(() => parse(big, { cuts: [1000, 40_000] }), /response head over 64 KiB/);
  });
});

describe("persistence (RFC 9112 §9.3)", () => {
  const head = (minor: 0 | 1, fields: [string, string][]): ResponseHead => ({ minor, status: 200, reason: "OK", fields });
  test("HTTP/1.1 persists unless `connection: close`; HTTP/1.0 only with keep-alive; close-delimited never", () => {
    assert.equal(keepsAlive(head(1, [["content-length", "1"]]), "length"), true);
    assert.equal(keepsAlive(head(1, [["Connection", "close"], ["content-length", "1"]]), "length"), false);
    assert.equal(keepsAlive(head(0, [["content-length", "1"]]), "length"), false);
    assert.equal(keepsAlive(head(0, [["connection", "Keep-Alive"], ["content-length", "1"]]), "length"), true);
    assert.equal(keepsAlive(head(1, []), "close"), false);
    // Both a transfer-encoding and a content-length: chunked wins, and the connection is not reused.
    const both = head(1, [["transfer-encoding", "chunked"], ["content-length", "5"]]);
    assert.equal(framingOf(both, false), "chunked");
    assert.equal(keepsAlive(both, "chunked"), false);
    // A transfer-encoding that does not end in chunked: the body runs to the close.
    assert.equal(framingOf(head(1, [["transfer-encoding", "gzip"]]), false), "close");
  });

  test("reset() parses a second response on the same parser", () => {
    const r = parse("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na");
    r.parser.reset();
    r.parser.push(enc.encode("HTTP/1.1 201 Created\r\ncontent-length: 1\r\n\r\nb"));
    assert.equal(r.head?.status, 201);
    assert.equal(r.body, "ab");
    assert.equal(r.ended, 2);
  });
});
