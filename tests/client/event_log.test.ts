/**
 * EventLog: the per-request columns of token-event times and ids. Reserved from the request's
 * max_tokens and handed over without a copy when mostly filled (issue 21: each column lives as long
 * as its request, so every extra one is promoted garbage), but always equal to what was pushed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { EventLog, MAX_RESERVED_EVENTS } from "../../lib/client/_stream_state.ts";
import { streamCompletion } from "../../lib/client/mod.ts";
import { parseEndpoint } from "../../lib/client/endpoint.ts";

function fill(log: EventLog, n: number, ids: (i: number) => number): void {
  for (let i = 0; i < n; i++) log.push(1000 + i * 2.5, ids(i));
}

test("EventLog returns exactly what was pushed, at every length around its reservation and past it", () => {
  for (const expected of [null, 1, 16, 256, 5000]) {
    for (const n of [0, 1, 2, 100, 128, 129, 255, 256, 257, 258, 600, 1025, 3000]) {
      const log = new EventLog(expected);
      fill(log, n, (i) => (i % 3 === 0 ? 0 : i % 7 + 1));
      const times = log.timesMs(), ids = log.idsPerEvent();
      assert.equal(times.length, n, `times length (expected ${expected}, n ${n})`);
      assert.equal(ids.length, n, `ids length (expected ${expected}, n ${n})`);
      for (let i = 0; i < n; i++) {
        assert.equal(times[i], 1000 + i * 2.5, `time ${i} (expected ${expected}, n ${n})`);
        assert.equal(ids[i], i % 3 === 0 ? 0 : i % 7 + 1, `ids ${i} (expected ${expected}, n ${n})`);
      }
    }
  }
});

test("EventLog: a stream without ids reads as zeros; ids that start mid-stream keep the zeros before them", () => {
  const none = new EventLog(256);
  fill(none, 300, () => 0);
  assert.deepEqual([...none.idsPerEvent()], new Array(300).fill(0));
  const late = new EventLog(4);
  fill(late, 40, (i) => (i >= 30 ? 2 : 0));
  assert.deepEqual([...late.idsPerEvent()], [...new Array(30).fill(0), ...new Array(10).fill(2)]);
});

test("EventLog: an event of more than 255 ids widens the ids column and keeps every count before it", () => {
  for (const at of [0, 1, 100, 256, 300]) {
    const log = new EventLog(256);
    fill(log, 400, (i) => (i === at ? 70_000 : i === at + 1 ? 256 : i % 5));
    const ids = log.idsPerEvent();
    assert.equal(ids.length, 400);
    for (let i = 0; i < 400; i++) assert.equal(ids[i], i === at ? 70_000 : i === at + 1 ? 256 : i % 5, `ids ${i} (wide at ${at})`);
    assert.equal(log.bytesHeld, 514 * 8 + 514 * 4, "four bytes a row from the wide event on");
  }
  const narrow = new EventLog(256);
  fill(narrow, 400, (i) => (i === 399 ? 7 : 255));
  assert.equal(narrow.bytesHeld, 514 * 8 + 514, "255 still fits one byte");
  assert.deepEqual([...narrow.idsPerEvent()], [...new Array(399).fill(255), 7]);
});

test("EventLog: rows that all carry the same ids keep no column; the first row that differs gets one holding every count before it", () => {
  for (const same of [0, 1, 3, 255, 256, 70_000]) {
    const log = new EventLog(256);
    fill(log, 300, () => same);
    assert.equal(log.bytesHeld, 514 * 8, `no ids column while every row carries ${same}`);
    assert.deepEqual([...log.idsPerEvent()], new Array(300).fill(same));
    for (const other of [0, 2, 300]) {
      if (other === same) continue;
      const mixed = new EventLog(256);
      fill(mixed, 300, (i) => (i === 280 ? other : same));
      assert.ok(mixed.bytesHeld > 514 * 8, `a column once a row differs (${same} then ${other})`);
      assert.deepEqual([...mixed.idsPerEvent()], Array.from({ length: 300 }, (_, i) => (i === 280 ? other : same)), `${same} then ${other}`);
    }
  }
});

test("EventLog reserves the request's max_tokens (capped) and hands a mostly full column over without a copy", () => {
  const full = new EventLog(256);
  fill(full, 256, () => 1);
  // One column of 257 rows, reserved at once: no growth, no trimmed copy; no ids column while every
  // event carries one id, a column of four bytes a row made once, when it is read.
  assert.equal(full.bytesHeld, 257 * 8);
  assert.equal(full.timesMs().buffer.byteLength, 257 * 8);
  assert.equal(full.idsPerEvent().buffer.byteLength, 256 * 4);
  assert.equal(full.timesMs().buffer, full.timesMs().buffer, "a view of the one column");

  // A request that stopped early gets a copy of its rows (a view would keep the whole reservation).
  const early = new EventLog(1000);
  fill(early, 10, () => 1);
  assert.equal(early.timesMs().buffer.byteLength, 10 * 8);
  assert.equal(early.idsPerEvent().buffer.byteLength, 10 * 4);

  // A huge max_tokens reserves no more than MAX_RESERVED_EVENTS rows.
  const huge = new EventLog(1_000_000);
  fill(huge, MAX_RESERVED_EVENTS, () => 0);
  assert.equal(huge.timesMs().buffer.byteLength, MAX_RESERVED_EVENTS * 8);
});

test("streamCompletion reserves the event log from the body's max_tokens", async () => {
  const events = 40;
  const chunk = (i: number) => `data: {"choices":[{"index":0,"delta":{"content":"t${i}"},"finish_reason":null}]}\n\n`;
  const sse = Array.from({ length: events }, (_, i) => chunk(i)).join("") +
    `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n`;
  const fetch = () => Promise.resolve(new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } }));
  const ep = parseEndpoint("http://127.0.0.1:9/v1", "--base-url");
  const body = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: events, stream: true };
  const r = await streamCompletion(ep, "chat", body, { fetch });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.nTokenEvents, events);
  assert.equal(r.eventTimesMs.buffer.byteLength, (events + 1) * 8, "one column reserved for max_tokens + 1");
  const chat = await streamCompletion(ep, "chat", { ...body, max_tokens: undefined, max_completion_tokens: events }, { fetch });
  assert.equal(chat.eventTimesMs.buffer.byteLength, (events + 1) * 8, "max_completion_tokens counts too");
  const text = await streamCompletion(ep, "chat", JSON.stringify(body), { fetch });
  assert.equal(text.eventTimesMs.length, events);
  assert.equal(text.eventTimesMs.buffer.byteLength, events * 8, "a serialized body: the default start, then a trimmed copy");
});
