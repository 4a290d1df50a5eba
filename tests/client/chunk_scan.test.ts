/**
 * The byte-level chunk reader (lib/client/_chunk_scan.ts, offered whole events by the SSE parser)
 * against the general path (decode, SSE text, JSON.parse): every stream is read both ways, from the
 * same reads, and what the stream state ends with must be identical: text, reasoning, finish
 * reason, every token event's time and ids, counts, [DONE], the failure and its message. Streams:
 * every engine transcript (tests/testdata), a real llama-server's, ik's mock's; cut at every event,
 * in one read, and at seeded random places; hand-written edge cases of JSON; and thousands of
 * randomly mutated events. Each group also checks that the byte path was really taken.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { SseParser } from "../../lib/sse/mod.ts";
import { StreamState } from "../../lib/client/_stream_state.ts";
import { ChunkScan, MAX_CHOICES } from "../../lib/client/_chunk_scan.ts";
import { SeededRng } from "../../lib/stats/mod.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const DATA = join(HERE, "..", "testdata");
const enc = new TextEncoder();

/** Reads `chunks` into a fresh stream state, through the byte path or (bytes: false) the text path only. */
function read(chunks: Uint8Array[], bytes: boolean): { snap: Record<string, unknown>; fromBytes: number } {
  const st = new StreamState(null);
  st.secret = "sk-test-secret";
  const sink = bytes ? st : { onEvent: (d: string, e: string) => st.onEvent(d, e), onOverflow: (m: string) => st.onOverflow(m) };
  const parser = new SseParser(sink);
  chunks.forEach((c, i) => {
    st.tRead = 1000 + i;
    parser.pushBytes(c);
  });
  parser.end();
  const snap = {
    textLength: st.text.length,
    text: st.text.toString(),
    reasoning: st.reasoning?.toString() ?? null,
    toolArguments: st.toolArguments?.toString() ?? null,
    finishReason: st.finishReason,
    times: Array.from(st.log.timesMs()),
    ids: Array.from(st.log.idsPerEvent()),
    tokenIds: Array.from(st.tokenIds.values()),
    nIds: st.nIds,
    nSseEvents: st.nSseEvents,
    sawDone: st.sawDone,
    tDone: st.tDone,
    tFirst: st.tFirst,
    tLast: st.tLast,
    tFirstContent: st.tFirstContent,
    failKind: st.failKind,
    failMessage: st.failMessage,
    usage: JSON.stringify(st.usage),
    serverTimings: JSON.stringify(st.serverTimings),
    lastEventId: parser.lastEventId,
  };
  return { snap, fromBytes: parser.eventsFromBytes };
}

/** Both paths agree on `chunks`; returns the events the byte path took. */
function same(chunks: Uint8Array[], what: string): number {
  const viaBytes = read(chunks, true), viaText = read(chunks, false);
  assert.equal(viaText.fromBytes, 0);
  assert.deepEqual(viaBytes.snap, viaText.snap, what);
  return viaBytes.fromBytes;
}

/** A body's events, each with its blank line (`data: …\n\n`). */
function eventsOf(body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let pos = 0;
  for (;;) {
    let i = pos;
    while (i + 1 < body.length && !(body[i] === 10 && body[i + 1] === 10)) i++;
    if (i + 1 >= body.length) break;
    out.push(body.subarray(pos, i + 2));
    pos = i + 2;
  }
  if (pos < body.length) out.push(body.subarray(pos));
  return out;
}

function transcripts(): { name: string; body: Uint8Array }[] {
  const out: { name: string; body: Uint8Array }[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".sse")) out.push({ name: p.slice(DATA.length + 1), body: new Uint8Array(readFileSync(p)) });
    }
  };
  walk(join(DATA, "engines"));
  walk(join(DATA, "llamacpp_real"));
  return out;
}

/** What `ik mock` sends (captured 2026-12-05; its own shape: reasoning_content null, token_ids null, stop_reason). */
const MOCK = enc.encode([
  `{"id":"chatcmpl-8851","object":"chat.completion.chunk","created":1796505148,"model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}`,
  `{"id":"chatcmpl-8851","object":"chat.completion.chunk","created":1796505148,"model":"mock-model","choices":[{"index":0,"delta":{"content":" maple","reasoning_content":null},"logprobs":null,"finish_reason":null,"token_ids":null}]}`,
  `{"id":"chatcmpl-8851","object":"chat.completion.chunk","created":1796505148,"model":"mock-model","choices":[{"index":0,"delta":{"content":" comet","reasoning_content":null},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":null}]}`,
  `[DONE]`,
].map((d) => `data: ${d}\n\n`).join(""));

test("every engine transcript, a real llama-server's and the mock's read the same through bytes and text, however the reads are cut", () => {
  const all = [...transcripts(), { name: "ik mock", body: MOCK }];
  assert.ok(all.length >= 19, `transcripts found: ${all.length}`);
  const rng = new SeededRng(7);
  let viaBytes = 0;
  for (const { name, body } of all) {
    const events = eventsOf(body);
    viaBytes += same(events, `${name}, a read per event`);
    same([body], `${name}, one read`);
    for (let r = 0; r < 12; r++) {
      const cuts = new Set<number>();
      const n = 1 + Math.floor(rng.next() * 8);
      for (let k = 0; k < n; k++) cuts.add(1 + Math.floor(rng.next() * (body.length - 1)));
      const at = [0, ...[...cuts].sort((a, b) => a - b), body.length];
      same(at.slice(1).map((end, k) => body.subarray(at[k], end)), `${name}, cut at ${at.join(",")}`);
    }
    // Events two by two (a server that coalesces), after a first read of one.
    const pairs = [events[0]];
    for (let k = 1; k < events.length; k += 2) pairs.push(concat(events.slice(k, k + 2)));
    same(pairs, `${name}, two events a read`);
  }
  // The byte path is the common one: most events of these streams went through it.
  assert.ok(viaBytes > 100, `events read as bytes: ${viaBytes}`);
});

test("a short response in one read, the stream's first, goes as bytes; a first read that may start a BOM goes the text way", () => {
  const events = eventsOf(MOCK).length;
  assert.equal(same([MOCK], "the mock's whole response in one read"), events, "every event of the first read as bytes");
  // A BOM first: dropped by both paths alike; that read is decoded, the reads after it go as bytes.
  const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
  assert.equal(same([concat([bom, MOCK])], "a BOM, then the response, in one read"), 0);
  assert.equal(same([bom, MOCK], "a BOM alone, then the response"), events);
  // A first byte that only looks like a BOM's start (not one) is text too, and no event is lost.
  same([concat([new Uint8Array([0xef]), MOCK])], "0xEF, then the response");
});

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const ROLE = `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`;
const TOKEN = `{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}`;

/** A stream of a role chunk, `data` as its own read (raw bytes allowed), a token, [DONE]: one read each. */
function around(data: Uint8Array | string): Uint8Array[] {
  const d = typeof data === "string" ? enc.encode(data) : data;
  return [enc.encode(`data: ${ROLE}\n\n`), concat([enc.encode("data: "), d, enc.encode("\n\n")]), enc.encode(`data: ${TOKEN}\n\n`), enc.encode("data: [DONE]\n\n")];
}

const ch = (choice: string, top = "") => `{${top}"choices":[${choice}]}`;
const dl = (delta: string, rest = `"finish_reason":null`) => ch(`{"index":0,"delta":{${delta}},${rest}}`);

/** Edge cases: [event data, whether the byte reader must take it]. */
const CASES: [string | Uint8Array, boolean][] = [
  [dl(`"content":"a\\nb\\"c\\\\d\\/e\\b\\f\\r\\t"`), true],
  [dl(`"content":"\\u00e9\\ud83d\\ude00\\ud800 lone"`), true],
  [dl(`"content":"é — 漢字 😀"`), true],
  [concat([enc.encode(`{"choices":[{"delta":{"content":"`), new Uint8Array([0xef, 0xbb, 0xbf, 0x61]), enc.encode(`"}}]}`)]), true], // a BOM inside the text stays
  [concat([enc.encode(`{"choices":[{"delta":{"content":"x`), new Uint8Array([0xff, 0xc3, 0x28, 0xe2, 0x82]), enc.encode(`"}}]}`)]), true], // invalid UTF-8
  [concat([enc.encode(`{"choices":[{"delta":{"content":"x"}}],"m":`), new Uint8Array([0xc3, 0xa9]), enc.encode(`}`)]), false], // non-ASCII outside a string
  [dl(`"content":""`), true],
  [dl(`"content":null`), true],
  [dl(`"content":42`), true],
  [dl(`"content":{"a":[1,2,{"b":null}]}`), true],
  [dl(`"content":"a","content":"b"`), false],
  [dl(`"\\u0063ontent":"x"`), false],
  [dl(`"reasoning_content":"think"`), true],
  [dl(`"reasoning_content":"think","reasoning":"think"`), true],
  [dl(`"reasoning_content":null,"reasoning":"r"`), true],
  [dl(`"reasoning_content":"","reasoning":"r"`), true],
  [dl(`"content":"a","reasoning_content":"b"`), true],
  [dl(`"tool_calls":[]`), true],
  [dl(`"tool_calls":[ ]`), true],
  [dl(`"tool_calls":null`), true],
  [dl(`"tool_calls":[{"index":0,"function":{"arguments":"{\\"x\\":1}"}}]`), false],
  [dl(`"function_call":{"arguments":"{}"}`), false],
  [dl(`"function_call":null`), true],
  [dl(`"content":"t"`, `"finish_reason":"st\\u006fp"`), true],
  [dl(`"content":"t"`, `"finish_reason":""`), true],
  [dl(`"content":"t"`, `"finish_reason":7`), true],
  [dl(`"content":"t"`, `"token_ids":null,"logprobs":null,"sglext":null`), true],
  [dl(`"content":"t"`, `"token_ids":[1,2]`), true],
  [dl(`"content":""`, `"token_ids":[7]`), true],
  [dl(`"content":"t"`, `"token_ids":[]`), true],
  [dl(`"content":"t"`, `"token_ids":[ 0 , 123456789012345 ]`), true],
  [dl(`"content":"t"`, `"token_ids":[1234567890123456]`), false],
  [dl(`"content":"t"`, `"token_ids":[1.5]`), false],
  [dl(`"content":"t"`, `"token_ids":[-1]`), false],
  [dl(`"content":"t"`, `"token_ids":[1e3]`), false],
  [dl(`"content":"t"`, `"token_ids":["1"]`), false],
  [dl(`"content":"t"`, `"token_ids":[01]`), false],
  [dl(`"content":"t"`, `"token_ids":[1,]`), false],
  [dl(`"content":"t"`, `"token_ids":[1],"token_ids":[2]`), false],
  [dl(`"content":"t"`, `"token_ids":{"0":1}`), false],
  [dl(`"content":"t"`, `"token_ids":[1],"logprobs":{"content":[]}`), false],
  [ch(`{"delta":{"content":"a"},"token_ids":[1]},{"delta":{"content":"b"},"token_ids":[2,3]}`), true],
  [dl(`"content":"t"`, `"logprobs":{"content":[{"id":5,"token":"t"}]}`), false],
  [ch(`{"index":0,"delta":null,"text":"plain"}`), true],
  [ch(`{"index":0,"text":"plain","finish_reason":null}`), true],
  [ch(`{"index":0,"text":"","finish_reason":"length"}`), true],
  [ch(`{"index":0,"delta":{"content":"d"},"text":"ignored"}`), true],
  [ch(`{"index":0,"delta":"str"}`), false],
  [ch(`{"index":0,"delta":{},"delta":{}}`), false],
  [ch(`null`), false],
  [ch(`7`), false],
  [ch(``), true],
  [ch(`{"delta":{"content":"a"}},{"delta":{"content":"b"}},{"delta":{"reasoning":"c"}}`), true],
  [ch(Array.from({ length: MAX_CHOICES + 1 }, () => `{"delta":{"content":"a"}}`).join(",")), false],
  [`{"choices":null}`, false],
  [`{"choices":{}}`, false],
  [`{"object":"error","message":"bad"}`, false],
  [`{"choices":[],"choices":[]}`, false],
  [ch(`{"delta":{"content":"x"}}`, `"usage":null,"error":null,"timings":null,"sglext":null,`), true],
  [ch(`{"delta":{"content":"x"}}`, `"usage":{"completion_tokens":3},`), false],
  [ch(`{"delta":{"content":"x"}}`, `"error":{"message":"boom sk-test-secret"},`), false],
  [ch(`{"delta":{"content":"x"}}`, `"error":false,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"timings":{"predicted_n":1},`), false],
  [ch(`{"delta":{"content":"x"}}`, `"sglext":{"output_ids":[3]},`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":-0,"a":1.5e-3,"b":1E+5,"c":0,"d":-12.25e2,"e":[true,false,null],"f":{},"g":[],`), true],
  [ch(`{"delta":{"content":"x"}}`, `"n":01,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":1.,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":.5,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":+1,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":-,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":1e,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":tru,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":nul,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":NaN,`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":[1,],`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":{"a":1,},`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":"\\x",`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":"\\u12g4",`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":"tab\there",`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":"del\x7f",`), true],
  [ch(`{"delta":{"content":"x"}}`, `"n":${"[".repeat(40)}${"]".repeat(40)},`), false],
  [ch(`{"delta":{"content":"x"}}`, `"n":${"[".repeat(10)}${"]".repeat(10)},`), true],
  [`\t{ "choices" : [ { "delta" : { "content" : "sp" } } ] }\t `, true],
  [`{"choices":[{"delta":{"content":"x"}}]} trailing`, false],
  [`{"choices":[{"delta":{"content":"x"}}]`, false],
  [`{"choices":[{"delta":{"content":"x"}}]}}`, false],
  [`["not an object"]`, false],
  [`x"choices":[{"delta":{"content":"x"}}]}`, false],
  [`[{"choices":[{"delta":{"content":"x"}}]}]`, false],
  [`"string"`, false],
  [``, false],
  [`[DONE] `, false],
  [` [DONE]`, false],
  [`[DONE]x`, false],
  [`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`, false],
];

test("edge cases of JSON and of the chunk's shape read the same through bytes and text, and the byte reader takes exactly what it is sure of", () => {
  const scan = new ChunkScan();
  let taken = 0;
  for (const [data, sure] of CASES) {
    const d = typeof data === "string" ? enc.encode(data) : data;
    const label = typeof data === "string" ? data : new TextDecoder().decode(data);
    assert.equal(scan.scan(d, 0, d.length), sure, `scan of ${label}`);
    taken += same(around(d), label) - 2; // the token and [DONE] always go as bytes (the first read never: a stream starts on the general path)
  }
  assert.ok(taken > 30, `edge cases read as bytes: ${taken}`);
  // The stream's own shape decides too: anything but whole `data:` events goes the general way.
  const shapes = [
    `data: ${TOKEN}\r\n\r\n`, `data:${TOKEN}\n\n`, `data:  ${TOKEN}\n\n`, `event: error\ndata: ${TOKEN}\n\n`, `: keep-alive\n\ndata: ${TOKEN}\n\n`,
    `id: 7\ndata: ${TOKEN}\n\n`, `data: ${TOKEN}\ndata: ${TOKEN}\n\n`, `data: ${TOKEN}\n`, `data: ${TOKEN}\n\ndata: ${TOKEN}`, `retry: 10\n\n`, `data\n\n`,
    `data: ${TOKEN}\n\ndata: [DONE]\n\n`, `\ufeffdata: ${TOKEN}\n\n`, `data: ${TOKEN}\nxdata: ${TOKEN}\n\n`, `data: ${TOKEN}\n\n\n`,
    // A CR inside what would be one line's value ends the line: the rest is a comment here.
    `data: ${TOKEN}\r: c\n\n`, `data: ${TOKEN}\n\ndata: ${TOKEN}\r: c\n\n`,
    // Whole events, then the start of the next: the whole ones as bytes, the rest the general way.
    `data: ${TOKEN}\n\ndata: ${TOKEN}\n\ndata: {"choi`, `data: ${TOKEN}\n\nevent: error\n`, `data: ${TOKEN}\n\ndata: ${TOKEN}\n`,
  ];
  for (const s of shapes) {
    same([enc.encode(`data: ${ROLE}\n\n`), enc.encode(s), enc.encode(`data: ${TOKEN}\n\n`)], JSON.stringify(s));
    same([enc.encode(s), enc.encode(`data: ${TOKEN}\n\n`)], `first read ${JSON.stringify(s)}`);
  }
});

test("thousands of randomly mutated engine events read the same through bytes and text (seeded)", () => {
  const bases = transcripts().filter((t) => !t.name.includes("error")).flatMap((t) => eventsOf(t.body).map((e) => e.subarray(6, e.length - 2)));
  bases.push(...eventsOf(MOCK).map((e) => e.subarray(6, e.length - 2)));
  const alphabet = enc.encode(`{}[]":,\\ 0123456789.eE+-nulltruefalsexu\t/é`);
  const rng = new SeededRng(2026);
  const pick = (n: number) => Math.floor(rng.next() * n);
  let taken = 0, differentFromBase = 0;
  for (let it = 0; it < 4000; it++) {
    let ev = Array.from(bases[pick(bases.length)]);
    const n = 1 + pick(3);
    for (let k = 0; k < n; k++) {
      const at = pick(ev.length + 1);
      const op = pick(4);
      if (op === 0 && ev.length > 0) ev.splice(Math.min(at, ev.length - 1), 1);
      else if (op === 1) ev.splice(at, 0, alphabet[pick(alphabet.length)]);
      else if (op === 2 && ev.length > 0) ev[Math.min(at, ev.length - 1)] = alphabet[pick(alphabet.length)];
      else {
        const from = pick(ev.length), len = pick(24);
        ev = [...ev.slice(0, at), ...ev.slice(from, from + len), ...ev.slice(at)];
      }
    }
    // A mutation may make a line break: keep the event one line, as the byte path requires.
    const d = Uint8Array.from(ev.filter((c) => c !== 10 && c !== 13));
    differentFromBase++;
    taken += same(around(d), `mutated event ${JSON.stringify(new TextDecoder().decode(d))}`) - 2;
  }
  // Enough of them stay valid for the byte reader to take: it is tested on acceptance, not only on refusals.
  assert.ok(taken > 400, `mutated events read as bytes: ${taken} of ${differentFromBase}`);
});

test("what a read leaves pending is honoured: an event field, a held byte, a split UTF-8 sequence, a [DONE] after a failure, pieces whose bytes join", () => {
  const b = (...parts: (string | number[])[]) => concat(parts.map((p) => (typeof p === "string" ? enc.encode(p) : Uint8Array.from(p))));
  const streams: [string, Uint8Array[]][] = [
    // An `event:` line read before its data: the event is an error event, not a message.
    ["event field, then its data", [b(`data: ${ROLE}\n\n`), b("event: error\n"), b(`data: ${TOKEN}\n\n`), b("data: [DONE]\n\n")]],
    // A first read of one byte that could start a BOM: it joins the next read (not a BOM: U+FFFD before `data`).
    ["a lone 0xEF first", [b([0xef]), b(`data: ${TOKEN}\n\n`), b(`data: ${TOKEN}\n\n`)]],
    // A read that ends inside a UTF-8 sequence: the held byte joins the next read's start.
    ["a read ending mid-sequence", [b(`data: ${ROLE}\n\n`, [0xc3]), b(`data: ${TOKEN}\n\n`), b(`data: ${TOKEN}\n\n`)]],
    // A failure, then `[DONE] ` with a trailing space (the text path trims it): the stream saw [DONE].
    ["[DONE] with a space after a failure", [b(`data: ${ROLE}\n\n`), b("data: {not json}\n\n"), b("data: [DONE] \n\n")]],
    // Invalid UTF-8 at the end of one piece and the start of the next: each piece decoded alone, as JSON.parse saw it.
    ["pieces whose bytes would join", [b(`data: ${ROLE}\n\n`), b(`data: {"choices":[{"delta":{"content":"a`, [0xe2, 0x82], `"}}]}\n\n`), b(`data: {"choices":[{"delta":{"content":"`, [0xac], `b"}}]}\n\n`)]],
    // Non-ASCII text read as bytes: the text's length is in UTF-16 units.
    ["non-ASCII pieces", [b(`data: ${ROLE}\n\n`), b(`data: {"choices":[{"delta":{"content":"é😀"}}]}\n\n`), b(`data: ${TOKEN}\n\n`)]],
  ];
  for (const [what, reads] of streams) same(reads, what);
});
