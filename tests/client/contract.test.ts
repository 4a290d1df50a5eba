/**
 * Contract: every engine transcript through the client, two ways (an injected fetch streaming the
 * exact bytes in small uneven chunks, and a real loopback server), against expected.json.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import type { RequestResult } from "../../lib/client/mod.ts";
import {
  apiOf,
  type Expected,
  expectedAll,
  fakeFetch,
  replayServer,
  streamingResponse,
  transcriptBytes,
  transcriptNames,
  unevenChunks,
} from "./_replay.ts";

const expected = expectedAll();
const names = transcriptNames();

function check(name: string, r: RequestResult, want: Expected): void {
  const row = requestRow(r);
  const got: Record<string, unknown> = { ok: row.ok, ended_with_done: row.ended_with_done };
  if ("n_tokens" in want) got.n_tokens = row.n_tokens;
  if ("token_count_method" in want) got.token_count_method = row.token_count_method;
  if ("n_token_events" in want) got.n_token_events = row.n_token_events;
  if ("error_kind" in want) got.error_kind = row.error_kind;
  assert.deepEqual(got, want, `${name}: ${row.error ?? ""}`);
  if (row.ok) {
    assert.equal(row.error_kind, null, name);
    assert.ok(row.ttft_ms !== null && row.ttft_ms >= 0, `${name}: ttft`);
    assert.equal(r.eventTimesMs.length, want.n_token_events, `${name}: one timestamp per token event`);
  } else {
    assert.ok(row.error && row.error.length > 0, `${name}: a failed row says why`);
  }
}

test("every .sse transcript has an expected.json entry and vice versa", () => {
  assert.ok(names.length >= 17, `found ${names.length} transcripts`);
  assert.deepEqual([...names].sort(), Object.keys(expected).sort());
});

describe("transcripts through an injected fetch, uneven chunks", () => {
  const ep = parseEndpoint("http://127.0.0.1:9/v1");
  for (const name of names) {
    for (const seed of [7, 1234]) {
      test(`${name} (chunk seed ${seed})`, async () => {
        const bytes = transcriptBytes(name);
        const f = fakeFetch(() => streamingResponse(unevenChunks(bytes, seed)));
        const r = await streamCompletion(ep, apiOf(name), { model: "m" }, {
          fetch: f.fetch,
          idleTimeoutMs: 5000,
          timeoutMs: 10000,
        });
        check(name, r, expected[name]);
      });
    }
  }
  test("the whole file in one chunk gives the same answers", async () => {
    for (const name of names) {
      const f = fakeFetch(() => streamingResponse([transcriptBytes(name)]));
      const r = await streamCompletion(ep, apiOf(name), { model: "m" }, {
        fetch: f.fetch,
        idleTimeoutMs: 5000,
      });
      check(name, r, expected[name]);
    }
  });
});

describe("transcripts over a loopback server", () => {
  let server: Awaited<ReturnType<typeof replayServer>>;
  before(async () => {
    server = await replayServer();
  });
  after(async () => {
    await server.close();
  });
  for (const name of names) {
    test(name, async () => {
      const ep = parseEndpoint(server.url(name));
      const r = await streamCompletion(ep, apiOf(name), { model: "m", stream: true }, {
        idleTimeoutMs: 5000,
        timeoutMs: 10000,
      });
      assert.equal(r.status, 200);
      check(name, r, expected[name]);
    });
  }
});
