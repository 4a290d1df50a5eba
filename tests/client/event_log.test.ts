/**
 * EventLog: the per-request columns of token-event times and ids. Reserved from the request's
 * max_tokens and handed over without a copy when mostly filled (issue 21: each column lives as long
 * as its request, so every extra one is promoted garbage), but always equal to what was pushed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { EventLog, MAX_RESERVED_EVENTS, TICKS_PER_MS } from "../../lib/client/_stream_state.ts";
import { Attempt, RequestPayload } from "../../lib/client/_attempt.ts";
import { streamCompletion } from "../../lib/client/mod.ts";
import { chatStreamOf } from "./_replay.ts";

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
    assert.equal(log.bytesHeld, 514 * 4 + 514 * 4, "four bytes a row from the wide event on");
  }
  const narrow = new EventLog(256);
  fill(narrow, 400, (i) => (i === 399 ? 7 : 255));
  assert.equal(narrow.bytesHeld, 514 * 4 + 514, "255 still fits one byte");
  assert.deepEqual([...narrow.idsPerEvent()], [...new Array(399).fill(255), 7]);
});

test("EventLog: rows that all carry the same ids keep no column; the first row that differs gets one holding every count before it", () => {
  for (const same of [0, 1, 3, 255, 256, 70_000]) {
    const log = new EventLog(256);
    fill(log, 300, () => same);
    assert.equal(log.bytesHeld, 514 * 4, `no ids column while every row carries ${same}`);
    assert.deepEqual([...log.idsPerEvent()], new Array(300).fill(same));
    for (const other of [0, 2, 300]) {
      if (other === same) continue;
      const mixed = new EventLog(256);
      fill(mixed, 300, (i) => (i === 280 ? other : same));
      assert.ok(mixed.bytesHeld > 514 * 4, `a column once a row differs (${same} then ${other})`);
      assert.deepEqual([...mixed.idsPerEvent()], Array.from({ length: 300 }, (_, i) => (i === 280 ? other : same)), `${same} then ${other}`);
    }
  }
});

test("EventLog reserves the request's max_tokens (capped), four bytes a time while the request streams", () => {
  const full = new EventLog(256);
  fill(full, 256, () => 1);
  // One column of 257 rows of 32-bit ticks, reserved at once: no growth; no ids column while every
  // event carries one id; the times read out once, as doubles, when the request ends.
  assert.equal(full.bytesHeld, 257 * 4);
  assert.equal(full.timesMs().buffer.byteLength, 256 * 8);
  assert.equal(full.idsPerEvent().buffer.byteLength, 256 * 4);

  const early = new EventLog(1000);
  fill(early, 10, () => 1);
  assert.equal(early.bytesHeld, 1001 * 4);
  assert.equal(early.timesMs().buffer.byteLength, 10 * 8);
  assert.equal(early.idsPerEvent().buffer.byteLength, 10 * 4);

  // A huge max_tokens reserves no more than MAX_RESERVED_EVENTS rows.
  const huge = new EventLog(1_000_000);
  fill(huge, MAX_RESERVED_EVENTS, () => 0);
  assert.equal(huge.bytesHeld, MAX_RESERVED_EVENTS * 4);
  assert.equal(huge.timesMs().length, MAX_RESERVED_EVENTS);
});

test("EventLog keeps every time to 0.1 µs; a time 429 s after the first, or before it, widens the column to doubles and loses nothing", () => {
  const t0 = 123_456.789_012_3;
  const gaps = [0, 3.141_592_65, 0.000_04, 0.000_06, 17.5, 1e-9, 250.123_456_789];
  const log = new EventLog(8);
  let t = t0;
  const pushed = gaps.map((g) => (t += g));
  for (const x of pushed) log.push(x, 0);
  const back = log.timesMs();
  assert.equal(back[0], t0, "the first time exactly");
  for (let i = 0; i < pushed.length; i++) assert.ok(Math.abs(back[i] - pushed[i]) <= 0.5 / TICKS_PER_MS + 1e-9, `time ${i}: ${back[i]} for ${pushed[i]}`);
  assert.equal(log.bytesHeld, 9 * 4);

  for (const late of [429_496.8, 600_000, -0.001]) {
    const wide = new EventLog(4);
    const xs = [1000, 1000.25, 1000 + late, 1000 + Math.abs(late) + 5, 1000 + Math.abs(late) + 6.5];
    for (const x of xs) wide.push(x, 0);
    assert.equal(wide.bytesHeld, 5 * 8, `widened to doubles (${late})`);
    assert.deepEqual([...wide.timesMs()], xs, `every time as pushed (${late})`);
  }
  const edge = new EventLog(4);
  edge.push(1000, 0);
  edge.push(1000 + 429_496.7295, 0);
  assert.equal(edge.bytesHeld, 5 * 4, "the last tick that fits stays 32-bit");
  assert.deepEqual([...edge.timesMs()], [1000, 1000 + 429_496.7295]);
});

test("streamCompletion reserves the event log from the body's max_tokens", async () => {
  const events = 40;
  const { fetch, ep, body } = chatStreamOf(events);
  const r = await streamCompletion(ep, "chat", body, { fetch });
  assert.equal(r.ok, true, r.error ?? "");
  assert.equal(r.nTokenEvents, events);
  assert.equal(r.eventTimesMs.length, events);
  const reserved = (b: unknown) => new Attempt(new RequestPayload(b), { fetch }).st.log.bytesHeld;
  assert.equal(reserved(body), (events + 1) * 4, "one column reserved for max_tokens + 1");
  assert.equal(reserved({ ...body, max_tokens: undefined, max_completion_tokens: events }), (events + 1) * 4, "max_completion_tokens counts too");
  assert.equal(reserved(JSON.stringify(body)), 128 * 4, "a serialized body: the default start");
  const text = await streamCompletion(ep, "chat", JSON.stringify(body), { fetch });
  assert.equal(text.eventTimesMs.length, events);
});
