/**
 * Every fault kind, checked on the raw bytes over a real loopback socket (node:net, no client
 * library): statuses and bodies, where the stream breaks, whether `[DONE]` and the chunked
 * terminator come, and the timing of stalls and slow headers.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type EngineName, ENGINES, type MockOptions } from "../../lib/mock/mod.ts";
import {
  chatBody,
  fixture,
  type RawExchange,
  rawRequest,
  serveMock,
  splitSse,
  type SseEvent,
} from "./_helpers.ts";

type Json = Record<string, unknown>;
const MAX = 8;

async function withMock<T>(opts: Partial<MockOptions>, fn: (port: number) => Promise<T>): Promise<T> {
  const m = await serveMock({ ttftMs: 10, tpotMs: 5, ...opts });
  try {
    return await fn(m.port);
  } finally {
    await m.close();
  }
}

function chat(engine: EngineName, extra: Json = {}): Json {
  return chatBody(`fault test ${engine}`, { max_tokens: MAX, ...extra });
}

function tokenEvents(events: SseEvent[]): SseEvent[] {
  return events.filter((e) => {
    const c = (e.json as { choices?: { delta?: { content?: string | null }; text?: string }[] } | undefined)
      ?.choices?.[0];
    const t = c?.delta?.content ?? c?.text;
    return typeof t === "string" && t !== "";
  });
}

function hasFinish(events: SseEvent[]): boolean {
  return events.some((e) =>
    ((e.json as { choices?: { finish_reason?: string | null }[] } | undefined)?.choices?.[0]?.finish_reason ??
      null) !== null
  );
}

function stream(x: RawExchange): SseEvent[] {
  return splitSse(x.body, x.bodyPieces);
}

describe("http429 / http500 / http503", () => {
  const wrapped: Record<EngineName, boolean> = {
    vllm: true,
    sglang: false,
    llamacpp: true,
    trtllm: false,
    openai: true,
  };
  for (const engine of ENGINES) {
    it(`${engine}: the personality's error body and status`, async () => {
      for (const status of [429, 500, 503]) {
        const x = await withMock({
          engine,
          faults: [{ kind: `http${status}` as "http429", text: `http${status}` }],
        }, (port) => rawRequest(port, "POST", "/v1/chat/completions", chat(engine)));
        assert.equal(x.status, status, `${engine} http${status}`);
        const body = JSON.parse(x.body);
        if (wrapped[engine]) {
          assert.equal(typeof body.error.message, "string");
          assert.equal(body.error.code, engine === "openai" ? body.error.code : status);
        } else {
          assert.deepEqual([body.object, body.code, typeof body.message], ["error", status, "string"]);
        }
      }
    });
  }
});

describe("error-event: the engine's own mid-stream error after half the tokens", () => {
  const expectations: Record<EngineName, { error: boolean; done: boolean; pythonJson: boolean }> = {
    vllm: { error: true, done: true, pythonJson: true },
    sglang: { error: true, done: true, pythonJson: true },
    llamacpp: { error: true, done: false, pythonJson: false },
    trtllm: { error: false, done: false, pythonJson: false },
    openai: { error: true, done: false, pythonJson: false },
  };
  for (const engine of ENGINES) {
    it(engine, async () => {
      const x = await withMock(
        { engine, faults: [{ kind: "error-event", text: "error-event" }] },
        (port) => rawRequest(port, "POST", "/v1/chat/completions", chat(engine)),
      );
      assert.equal(x.status, 200);
      const events = stream(x);
      const want = expectations[engine];
      assert.equal(tokenEvents(events).length, MAX / 2);
      assert.equal(hasFinish(events), false);
      const errors = events.filter((e) => (e.json as Json | undefined)?.error);
      assert.equal(errors.length, want.error ? 1 : 0);
      assert.equal(events.at(-1)?.data === "[DONE]", want.done);
      // trtllm-serve re-raises: uvicorn drops the connection and the chunked body never ends.
      assert.equal(x.terminated, engine !== "trtllm", engine === "trtllm" ? "the connection is cut mid-body" : "the body ends cleanly");
      if (want.error) {
        assert.equal(
          errors[0].data.startsWith('{"error": {'),
          want.pythonJson,
          "Python json.dumps spacing for vLLM/SGLang",
        );
        if (engine !== "openai") {
          const sample = splitSse(fixture(`${engine}/error-stream.sse`)).find((e) =>
            (e.json as Json | undefined)?.error
          )!;
          assert.deepEqual(
            Object.keys((errors[0].json as { error: Json }).error).sort(),
            Object.keys((sample.json as { error: Json }).error).sort(),
          );
        }
      }
    });
  }
});

describe("body faults (vllm wire)", () => {
  const run = (fault: string, extra: Partial<MockOptions> = {}) =>
    withMock({
      engine: "vllm",
      ...extra,
      faults: [{
        kind: fault.split(":")[0] as "reset",
        seconds: fault.includes(":") ? Number(fault.split(":")[1]) : undefined,
        text: fault,
      }],
    }, (port) => rawRequest(port, "POST", "/v1/chat/completions", chat("vllm")));

  it("truncate: half the tokens, then a clean close with no [DONE] and no finish_reason", async () => {
    const x = await run("truncate");
    const events = stream(x);
    assert.equal(tokenEvents(events).length, MAX / 2);
    assert.equal(hasFinish(events), false);
    assert.notEqual(events.at(-1)?.data, "[DONE]");
    assert.ok(x.terminated);
    assert.equal(x.socketError, null);
  });

  it("malformed: exactly one invalid-JSON chunk mid-stream; the rest is complete", async () => {
    const events = stream(await run("malformed"));
    const bad = events.filter((e) => e.json === undefined && e.data !== "[DONE]");
    assert.equal(bad.length, 1);
    const at = events.indexOf(bad[0]);
    assert.equal(tokenEvents(events.slice(0, at)).length, MAX / 2, "after half the tokens");
    assert.equal(tokenEvents(events).length, MAX);
    assert.equal(events.at(-1)?.data, "[DONE]");
  });

  it("stall:S: nothing for S seconds after the first token, then the rest", async () => {
    const x = await run("stall:0.3");
    const tokens = tokenEvents(stream(x));
    assert.equal(tokens.length, MAX);
    const gap = tokens[1].atMs - tokens[0].atMs;
    assert.ok(gap >= 300 && gap < 300 + 150, `gap after the first token ${gap} ms`);
    for (let i = 2; i < tokens.length; i++) assert.ok(tokens[i].atMs - tokens[i - 1].atMs < 100);
  });

  it("slow-headers:S: the response headers come after S seconds, tokens paced after them", async () => {
    const x = await run("slow-headers:0.3");
    assert.ok(x.headersAtMs >= 300 && x.headersAtMs < 450, `headers at ${x.headersAtMs} ms`);
    const tokens = tokenEvents(stream(x));
    assert.equal(tokens.length, MAX);
    assert.ok(tokens[0].atMs >= 310, `first token at ${tokens[0].atMs} ms`);
    assert.equal(stream(x).at(-1)?.data, "[DONE]");
  });

  it("reset: the connection dies after the first token (no chunked terminator, no [DONE])", async () => {
    const x = await run("reset");
    const events = stream(x);
    assert.equal(x.status, 200);
    assert.equal(tokenEvents(events).length, 1);
    assert.equal(x.terminated, false, "no zero-length chunk: the body never ended");
    assert.notEqual(events.at(-1)?.data, "[DONE]");
    assert.ok(x.closedAtMs < 2000);
  });

  it("whole answers: reset kills the connection, http503 answers the error", async () => {
    const body = { ...chat("vllm"), stream: false };
    const reset = await withMock(
      { faults: [{ kind: "reset", text: "reset" }] },
      (port) => rawRequest(port, "POST", "/v1/chat/completions", body),
    );
    assert.equal(reset.terminated && reset.body.length > 0, false);
    // truncate: half the JSON, then the connection dies (no clean end); malformed ends cleanly.
    const truncated = await withMock({ faults: [{ kind: "truncate", text: "truncate" }] }, (port) => rawRequest(port, "POST", "/v1/chat/completions", body));
    assert.equal(truncated.status, 200);
    assert.ok(truncated.body.startsWith('{"id"') && truncated.body.length > 20, truncated.body);
    assert.equal(truncated.terminated, false, "the body never ended");
    const malformed = await withMock({ faults: [{ kind: "malformed", text: "malformed" }] }, (port) => rawRequest(port, "POST", "/v1/chat/completions", body));
    assert.equal(malformed.terminated, true);
    assert.throws(() => JSON.parse(malformed.body));
    const e503 = await withMock(
      { faults: [{ kind: "http503", text: "http503" }] },
      (port) => rawRequest(port, "POST", "/v1/chat/completions", body),
    );
    assert.equal(e503.status, 503);
  });
});

describe("which requests a fault hits", () => {
  it("@N: every N-th request", async () => {
    const statuses = await withMock(
      { faults: [{ kind: "http503", every: 3, text: "http503@3" }] },
      async (port) => {
        const out: number[] = [];
        for (let i = 0; i < 7; i++) {
          out.push(
            (await rawRequest(port, "POST", "/v1/chat/completions", { ...chat("vllm"), max_tokens: 1 }))
              .status,
          );
        }
        return out;
      },
    );
    assert.deepEqual(statuses, [200, 200, 503, 200, 200, 503, 200]);
  });

  it("~P: seeded, so the same seed hits the same requests", async () => {
    const pattern = (seed: number) =>
      withMock({
        seed,
        ttftMs: 1,
        tpotMs: 1,
        faults: [{ kind: "http429", probability: 0.5, text: "http429~0.5" }],
      }, async (port) => {
        const out: number[] = [];
        for (let i = 0; i < 16; i++) {
          out.push(
            (await rawRequest(port, "POST", "/v1/chat/completions", { ...chat("vllm"), max_tokens: 1 }))
              .status,
          );
        }
        return out.join(",");
      });
    const a = await pattern(21);
    assert.equal(await pattern(21), a);
    assert.match(a, /200/);
    assert.match(a, /429/);
  });
});

