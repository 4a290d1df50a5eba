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
