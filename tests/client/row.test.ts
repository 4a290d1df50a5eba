/** requestRow definitions (seed 002 metrics.py) on hand-built results, and the helpers around it. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { eventTimings, itlMs, kFirst, type RequestResult, requestRow } from "../../lib/client/mod.ts";

function result(over: Partial<RequestResult> = {}): RequestResult {
  return {
    id: "p1",
    bucket: "short",
    salt: null,
    api: "chat",
    ok: true,
    error: null,
    errorKind: null,
    status: 200,
    tScheduledMs: 995,
    tSendMs: 1000,
    tHeadersMs: 1010,
    tFirstMs: 1100,
    tFirstContentMs: null,
    connectionRetries: 0,
    tLastMs: 1190,
    tDoneMs: 1200,
    tEndMs: 1201,
    eventTimesMs: new Float64Array([1100, 1130, 1160, 1190]),
    eventIds: new Uint32Array([0, 0, 0, 0]),
    nTokenEvents: 4,
    nSseEvents: 7,
    endedWithDone: true,
    nTokens: 10,
    tokenCountMethod: "usage",
    nIds: null,
    nUsage: 10,
    countMismatch: null,
    tokenIds: new Uint32Array(0),
    finishReason: "length",
    usage: { completion_tokens: 10 },
    text: "t",
    reasoning: "",
    serverTimings: null,
    toolArguments: "",
    ...over,
  };
}

test("usage-counted row: k_first is 1, tpot over the tokens after the first", () => {
  const row = requestRow(result(), { round: 3 });
  assert.equal(row.ttft_ms, 100);
  assert.equal(row.e2e_ms, 200, "t_done - t_send");
  assert.equal(row.k_first, 1);
  assert.equal(row.tpot_ms, 10); // (1190 - 1100) / (10 - 1)
  assert.equal(row.decode_tok_s, 100);
  assert.equal(row.tokens_per_event_max, null, "no ids: unknown");
  assert.equal(row.send_lag_ms, 5);
  assert.equal(row.t_send_ns, 1000e6);
  assert.equal(row.t_end_ns, 1201e6);
  assert.equal(row.connect_ms, null);
  assert.equal(row.ttft_includes_connect, true);
  assert.equal(row.round, 3, "extra fields merged");
  assert.equal(row.n_token_events, 4);
});

test("ids-counted row: k_first from the first event, max tokens per event", () => {
  const r = result({
    eventIds: new Uint32Array([3, 1, 4, 2]),
    nTokens: 10,
    tokenCountMethod: "ids",
    nIds: 10,
  });
  assert.equal(kFirst(r), 3);
  const row = requestRow(r);
  assert.equal(row.k_first, 3);
  assert.equal(row.tokens_per_event_max, 4);
  assert.equal(row.tpot_ms, 90 / 7);
});

test("k_first_assumed: true when the first event had no ids (1 assumed), false from ids, null with no event", () => {
  assert.equal(requestRow(result()).k_first_assumed, true);
  assert.equal(requestRow(result({ eventIds: new Uint32Array([2, 1, 1, 1]), nIds: 5 })).k_first_assumed, false);
  // Ids later but not in the first event: k_first is still the assumed 1.
  const late = requestRow(result({ eventIds: new Uint32Array([0, 3, 3, 3]) }));
  assert.equal(late.k_first, 1);
  assert.equal(late.k_first_assumed, true);
  const none = requestRow(result({
    ok: false,
    eventTimesMs: new Float64Array(),
    eventIds: new Uint32Array(),
    nTokenEvents: 0,
    tFirstMs: null,
    tLastMs: null,
  }));
  assert.equal(none.k_first_assumed, null);
});

test("no t_done (no [DONE]): e2e uses the end of the stream", () => {
  assert.equal(requestRow(result({ tDoneMs: null })).e2e_ms, 201);
});

test("speeds are null when undefined: one token, zero span, failed", () => {
  assert.equal(requestRow(result({ nTokens: 1 })).tpot_ms, null);
  assert.equal(requestRow(result({ tLastMs: 1100 })).decode_tok_s, null);
  const failed = requestRow(result({ ok: false, error: "truncated", errorKind: "protocol" }));
  assert.equal(failed.ttft_ms, null);
  assert.equal(failed.e2e_ms, null);
  assert.equal(failed.tpot_ms, null);
  assert.equal(failed.error_kind, "protocol");
  const none = requestRow(
    result({
      ok: false,
      tFirstMs: null,
      tLastMs: null,
      eventTimesMs: new Float64Array(),
      eventIds: new Uint32Array(),
      nTokenEvents: 0,
      nTokens: null,
      tokenCountMethod: null,
      tScheduledMs: null,
    }),
  );
  assert.equal(none.k_first, null);
  assert.equal(none.send_lag_ms, null);
});

test("the row carries every contract field name", () => {
  const keys = Object.keys(requestRow(result()));
  for (
    const k of [
      "id",
      "bucket",
      "salt",
      "ok",
      "error",
      "error_kind",
      "status",
      "ttft_ms",
      "tpot_ms",
      "decode_tok_s",
      "e2e_ms",
      "connect_ms",
      "n_tokens",
      "token_count_method",
      "count_mismatch",
      "n_ids",
      "n_usage",
      "finish_reason",
      "n_token_events",
      "tokens_per_event_max",
      "k_first",
      "k_first_assumed",
      "ended_with_done",
      "send_lag_ms",
      "t_send_ns",
      "t_end_ns",
    ]
  ) {
    assert.ok(keys.includes(k), k);
  }
});

test("itlMs and eventTimings", () => {
  const r = result();
  assert.deepEqual(itlMs(r), [30, 30, 30]);
  assert.deepEqual(itlMs(result({ eventTimesMs: new Float64Array([5]) })), []);
  assert.deepEqual(eventTimings(r), {
    t_send_ns: 1000e6,
    event_ms: [100, 130, 160, 190],
    event_token_ids: [0, 0, 0, 0],
  });
});
