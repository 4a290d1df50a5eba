/**
 * The SSE parser: line ends (LF, CRLF, CR, CRLF split across reads), comments, fields, multi-line
 * data, optional space, BOM, UTF-8 split across reads, trtllm's trailing space, unterminated tail;
 * and byte-by-byte / random splits agree with whole-text parsing and with eventsource-parser.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createParser } from "eventsource-parser";
import { encodeSseEvent, parseSseText, type SseEvent, sseEvents, SseParser } from "../../lib/sse/mod.ts";

const enc = new TextEncoder();
const datas = (evs: SseEvent[]) => evs.map((e) => e.data);

/** Parses `bytes` fed in pieces cut at `cuts`. */
function parseCut(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const out: SseEvent[] = [];
  const p: SseParser = new SseParser({
    onEvent: (data, event) => out.push({ data, event, id: p.lastEventId }),
  });
  let prev = 0;
  for (const c of [...cuts, bytes.length]) {
    p.pushBytes(bytes.subarray(prev, c));
    prev = c;
  }
  p.end();
  return out;
}

function mulberry(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = ": comment line\r\n" +
  "event: ping\r\ndata: a\r\n\r\n" +
  "data: line1\rdata: line2\r\r" +
  "id: 42\ndata:nospace\n\n" +
  "data:  two spaces\n\n" +
  "retry: 1500\ndata\n\n" +
  "data: emoji 😀 ünï 中文\n\n" +
  "event: only-event-no-data\n\n" +
  'data: {"x":1} \n\n' +
  "unknown: field\ndata: [DONE]\n\n" +
  "data: unterminated tail";

test("every feature of the format, parsed from whole text", () => {
  const evs = parseSseText(TRICKY);
  assert.deepEqual(evs, [
    { data: "a", event: "ping", id: "" },
    { data: "line1\nline2", event: "message", id: "" },
    { data: "nospace", event: "message", id: "42" },
    { data: " two spaces", event: "message", id: "42" },
    { data: "", event: "message", id: "42" },
    { data: "emoji 😀 ünï 中文", event: "message", id: "42" },
    { data: '{"x":1} ', event: "message", id: "42" },
    { data: "[DONE]", event: "message", id: "42" },
  ]);
});

test("byte-by-byte and random splits give the same events (UTF-8 and CRLF split everywhere)", () => {
  const bytes = enc.encode(TRICKY);
  const whole = parseSseText(bytes);
  assert.deepEqual(parseCut(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)), whole);
  const rnd = mulberry(1);
  for (let trial = 0; trial < 200; trial++) {
    const cuts = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => Math.floor(rnd() * bytes.length))
      .sort((a, b) => a - b);
    assert.deepEqual(parseCut(bytes, cuts), whole, `cuts ${cuts}`);
  }
});

test("a CRLF split between two reads is one line end, not two", () => {
  const out: string[] = [];
  const p = new SseParser({ onEvent: (d) => out.push(d) });
  p.pushText("data: a\r");
  p.pushText("\ndata: b\r");
  p.pushText("\n\r");
  p.pushText("\n");
  assert.deepEqual(out, ["a\nb"]);
});

test("the same data payloads as eventsource-parser on random splits", () => {
  const rnd = mulberry(99);
  const body = TRICKY.replace("data: unterminated tail", "") +
    Array.from({ length: 50 }, (_, i) => `data: {"i":${i},"t":"ü${"x".repeat(i % 7)}"}\r\n\r\n`).join("");
  const bytes = enc.encode(body);
  const ref: string[] = [];
  const rp = createParser({ onEvent: (e) => ref.push(e.data) });
  rp.feed(body);
  for (let trial = 0; trial < 50; trial++) {
    const cuts = Array.from({ length: 20 }, () => Math.floor(rnd() * bytes.length)).sort((a, b) => a - b);
    assert.deepEqual(datas(parseCut(bytes, cuts)), ref);
  }
});

test("a leading BOM is skipped; an unterminated last event is dropped and reported as partial", () => {
  const out: string[] = [];
  const p = new SseParser({ onEvent: (d) => out.push(d) });
  p.pushBytes(new Uint8Array([0xef, 0xbb, 0xbf]));
  p.pushText("data: x\n\ndata: cut");
  assert.equal(p.hasPartial, true);
  p.end();
  assert.deepEqual(out, ["x"]);
  assert.equal(p.hasPartial, false);
});

test("retry is recorded; an id with NUL is ignored", () => {
  const p = new SseParser({ onEvent: () => {} });
  p.pushText("retry: 1500\nid: a\u0000b\ndata: x\n\nretry: soon\n\n");
  assert.equal(p.retryMs, 1500);
  assert.equal(p.lastEventId, "");
});

test("llama.cpp's non-standard `error: {json}` line is an error event with that data; other unknown fields stay ignored", () => {
  const out: [string, string][] = [];
  const p = new SseParser({ onEvent: (d, e) => out.push([d, e]) });
  p.pushText('data: {"a":1}\n\nerror: {"code":500,"message":"m"}\n\nwarning: x\n\ndata: [DONE]\n\n');
  assert.deepEqual(out, [['{"a":1}', "message"], ['{"code":500,"message":"m"}', "error"], ["[DONE]", "message"]]);
});

test("encodeSseEvent round-trips, multi-line payloads included", () => {
  for (const data of ['{"a":1}', "[DONE]", "two\nlines", "cr\r\nlf", ""]) {
    const back = parseSseText(encodeSseEvent(data, data === "" ? "error" : undefined));
    assert.equal(back.length, 1);
    assert.equal(back[0].data, data.replace(/\r\n/g, "\n"));
  }
  assert.equal(encodeSseEvent("{}"), "data: {}\n\n");
});

test("sseEvents iterates a byte stream", async () => {
  const chunks = ["data: 1\n", "\ndata: 2\n\nda", "ta: 3\n\n"].map((s) => enc.encode(s));
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++]);
      else c.close();
    },
  });
  const got: string[] = [];
  for await (const ev of sseEvents(stream)) got.push(ev.data);
  assert.deepEqual(got, ["1", "2", "3"]);
});

test("breaking out of sseEvents early cancels the stream", async () => {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(enc.encode("data: x\n\n"));
    },
    cancel() {
      cancelled = true;
    },
  });
  for await (const _ of sseEvents(stream)) break;
  assert.equal(cancelled, true);
});

test("a multi-megabyte single line over many small reads is one event, parsed in linear time", () => {
  // A huge logprobs or tool-call chunk, or a merged multi-token event, cut by the network into
  // thousands of reads: re-scanning the pending line on every read made this quadratic.
  const payload = `{"choices":[{"delta":{"content":"${"é".repeat(1000)}${"x".repeat(6_000_000)}"}}]}`;
  const bytes = enc.encode(`: ping\n\ndata: ${payload}\r\n\r\ndata: [DONE]\n\n`);
  const out: string[] = [];
  const p = new SseParser({ onEvent: (d) => out.push(d) });
  const t0 = performance.now();
  for (let i = 0; i < bytes.length; i += 2047) p.pushBytes(bytes.subarray(i, i + 2047));
  p.end();
  const took = performance.now() - t0;
  assert.equal(out.length, 2);
  assert.equal(out[0].length, payload.length);
  assert.ok(out[0] === payload, "payload intact, UTF-8 split across reads");
  assert.equal(out[1], "[DONE]");
  assert.ok(took < 1500, `took ${took.toFixed(0)} ms`);
});

/** A parser with a small cap that records events and overflow messages. */
function capped(maxLineBytes: number) {
  const events: string[] = [];
  const overflows: string[] = [];
  const p = new SseParser({ onEvent: (d) => events.push(d), onOverflow: (m) => overflows.push(m) }, { maxLineBytes });
  return { p, events, overflows };
}

test("a line up to the cap is parsed; one byte over, however it is split, overflows once and stops the parser", () => {
  const line = (n: number) => `data: ${"x".repeat(n - 6)}`; // a line of exactly n bytes
  // At the cap: fine, whole or split.
  for (const step of [1, 7, 64, 10_000]) {
    const { p, events, overflows } = capped(64);
    const bytes = enc.encode(`${line(64)}\n\ndata: [DONE]\n\n`);
    for (let i = 0; i < bytes.length; i += step) p.pushBytes(bytes.subarray(i, i + step));
    p.end();
    assert.deepEqual(overflows, [], `step ${step}`);
    assert.equal(events.length, 2, `step ${step}`);
  }
  // One over: a line left open, a line completed by a later read, a line wholly inside one read.
  for (const step of [1, 7, 40, 10_000]) {
    const { p, events, overflows } = capped(64);
    const bytes = enc.encode(`data: a\n\n${line(65)}\n\ndata: after\n\n`);
    for (let i = 0; i < bytes.length; i += step) p.pushBytes(bytes.subarray(i, i + step));
    p.end();
    assert.deepEqual(overflows, ["SSE line over 64 bytes"], `step ${step}`);
    assert.deepEqual(events, ["a"], `step ${step}: nothing after the overflow is parsed`);
    assert.equal(p.overflowed, "SSE line over 64 bytes");
    assert.equal(p.hasPartial, false, "the buffer was dropped");
  }
  // A line that never ends (no newline at all).
  const { p, overflows } = capped(1024);
  for (let i = 0; i < 100; i++) p.pushBytes(enc.encode("y".repeat(100)));
  assert.deepEqual(overflows, ["SSE line over 1024 bytes"]);
});

test("the cap counts bytes (multi-byte UTF-8), also through pushText and for many data lines of one event", () => {
  const a = capped(64);
  a.p.pushBytes(enc.encode(`data: ${"é".repeat(30)}\n\n`)); // 6 + 60 bytes, 36 characters
  assert.deepEqual(a.overflows, ["SSE line over 64 bytes"]);
  const b = capped(64);
  b.p.pushText(`data: ${"z".repeat(80)}`);
  assert.deepEqual(b.overflows, ["SSE line over 64 bytes"]);
  const c = capped(64);
  c.p.pushText("data: 0123456789\n".repeat(10) + "\n");
  assert.deepEqual(c.overflows, ["SSE event over 64 bytes"]);
  assert.deepEqual(c.events, []);
  const mib = capped(2 * 1024 * 1024);
  mib.p.pushBytes(new Uint8Array(2 * 1024 * 1024 + 1).fill(0x61));
  assert.deepEqual(mib.overflows, ["SSE line over 2 MiB"]);
  // The default is 64 MiB.
  const big = new SseParser({ onEvent: () => {} });
  big.pushBytes(new Uint8Array(1024 * 1024).fill(0x61));
  assert.equal(big.overflowed, null);
});

/** Parses already-decoded text (no decoder in the parser: the reference for the bytes path). */
function parseTextRef(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  const p: SseParser = new SseParser({ onEvent: (data, event) => out.push({ data, event, id: p.lastEventId }) });
  p.pushText(text);
  p.end();
  return out;
}

test("bytes cut anywhere decode as one streaming decoder over the whole stream would: split sequences, invalid and truncated bytes, BOMs at the start and inside", () => {
  const rnd = mulberry(7);
  const bom = [0xef, 0xbb, 0xbf];
  const pieces: number[][] = [
    [...enc.encode("data: ")], [...enc.encode("é")], [...enc.encode("日本")], [...enc.encode("😀")], [...enc.encode("abc")],
    [0xff], [0x80], [0xc0, 0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], bom, [...enc.encode("\n")], [...enc.encode("\n\n")],
  ];
  for (let trial = 0; trial < 400; trial++) {
    const body: number[] = [];
    const lead = trial % 4 === 0 ? [] : trial % 4 === 1 ? bom : trial % 4 === 2 ? [...bom, ...bom] : [0xef, 0xbb];
    body.push(...lead, ...enc.encode("data: "));
    for (let k = 0; k < 30; k++) body.push(...pieces[Math.floor(rnd() * pieces.length)]);
    body.push(...enc.encode("\n\n"));
    const bytes = Uint8Array.from(body);
    const want = parseTextRef(new TextDecoder().decode(bytes));
    const cuts = Array.from({ length: Math.floor(rnd() * 20) }, () => Math.floor(rnd() * bytes.length)).sort((a, b) => a - b);
    assert.deepEqual(parseCut(bytes, cuts), want, `trial ${trial}, cuts ${cuts}`);
    if (trial < 40) assert.deepEqual(parseCut(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)), want, `trial ${trial}, byte by byte`);
  }
});
