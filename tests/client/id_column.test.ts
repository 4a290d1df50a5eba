/**
 * IdColumn: the streamed token ids of one response, in a 32-bit column reserved from the request's
 * max_tokens (issue 21: a `number[]` grown by push left ~10 KB of promoted garbage a request), widened
 * to doubles by an id that does not fit, and always equal to what was pushed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IdColumn } from "../../lib/client/_id_column.ts";
import { MAX_RESERVED_EVENTS } from "../../lib/client/_event_log.ts";
import { Attempt, RequestPayload } from "../../lib/client/_attempt.ts";
import { streamCompletion } from "../../lib/client/mod.ts";
import { chatStreamOf } from "./_replay.ts";
import { outputDoc } from "../../lib/bench/single_rows.ts";

const id = (i: number) => (i * 7919) % 151_936;

test("IdColumn returns exactly what was pushed, at every length around its reservation and past it", () => {
  for (const expected of [null, 1, 16, 256, 5000]) {
    for (const n of [0, 1, 2, 100, 128, 129, 255, 256, 257, 600, 1025, 3000]) {
      const col = new IdColumn(expected);
      for (let i = 0; i < n; i++) col.push(id(i));
      const v = col.values();
      assert.ok(v instanceof Uint32Array, `32-bit rows (expected ${expected}, n ${n})`);
      assert.equal(v.length, n, `length (expected ${expected}, n ${n})`);
      for (let i = 0; i < n; i++) assert.equal(v[i], id(i), `id ${i} (expected ${expected}, n ${n})`);
    }
  }
});

test("IdColumn: an id that is not an integer in 0..2^32-1 widens the column once and keeps every id exactly", () => {
  for (const odd of [-1, 1.5, 2 ** 32, 2 ** 53, Number.NaN, Infinity]) {
    for (const at of [0, 1, 255, 256, 300]) {
      const col = new IdColumn(256);
      for (let i = 0; i < 400; i++) col.push(i === at ? odd : id(i));
      const v = col.values();
      assert.ok(v instanceof Float64Array, `doubles after ${odd} at ${at}`);
      assert.equal(v.length, 400);
      for (let i = 0; i < 400; i++) assert.ok(Object.is(v[i], i === at ? odd : id(i)), `id ${i} (${odd} at ${at}): ${v[i]}`);
    }
  }
  const edge = new IdColumn(4);
  edge.push(0);
  edge.push(2 ** 32 - 1);
  assert.ok(edge.values() instanceof Uint32Array, "0 and 2^32-1 still fit 32 bits");
  assert.deepEqual([...edge.values()], [0, 2 ** 32 - 1]);
});

test("IdColumn reserves the request's max_tokens (capped) on the first id, four bytes an id, and nothing for a stream without ids", () => {
  const none = new IdColumn(256);
  assert.equal(none.bytesHeld, 0, "no id, no column");
  assert.equal(none.values().length, 0);
  for (const [expected, reserved] of [[256, 256], [1, 1], [null, 128], [0, 128], [1e9, MAX_RESERVED_EVENTS]] as const) {
    const col = new IdColumn(expected);
    col.push(5);
    assert.equal(col.bytesHeld, reserved * 4, `reserved for ${expected}`);
  }
  const full = new IdColumn(256);
  for (let i = 0; i < 256; i++) full.push(i);
  assert.equal(full.bytesHeld, 1024, "256 ids in the one reserved column: no growth");
  // Handed over as a view of the reservation only when it fills half of it: a view keeps the rest.
  const few = new IdColumn(1000), most = new IdColumn(1000);
  for (let i = 0; i < 10; i++) few.push(i);
  for (let i = 0; i < 900; i++) most.push(i);
  assert.equal(few.values().buffer.byteLength, 40, "10 of 1,000 reserved: a copy of the 10");
  assert.equal(most.values().buffer.byteLength, 4000, "900 of 1,000 reserved: a view, no copy");
});

test("streamCompletion keeps the streamed ids in the reserved column, and the output document writes them as a JSON list", async () => {
  const events = 40;
  const { fetch, ep, body } = chatStreamOf(events, (i) => `,"token_ids":[${id(i)}]`);
  const r = await streamCompletion(ep, "chat", body, { fetch });
  assert.equal(r.ok, true, r.error ?? "");
  assert.ok(r.tokenIds instanceof Uint32Array);
  assert.deepEqual([...r.tokenIds], Array.from({ length: events }, (_, i) => id(i)));
  assert.equal(r.nIds, events);
  const a = new Attempt(new RequestPayload(body), { fetch });
  a.st.tokenIds.push(1);
  assert.equal(a.st.tokenIds.bytesHeld, events * 4, "reserved from the body's max_tokens");
  const doc = JSON.parse(JSON.stringify(outputDoc(r, { id: "p0", messages: [] } as never, events, {})));
  assert.deepEqual(doc.token_ids, Array.from({ length: events }, (_, i) => id(i)), "a JSON list, not a typed array's object");
});
