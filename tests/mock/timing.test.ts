/**
 * The timing model over real loopback against the compiled `ik mock`, timed on the raw socket:
 * headers and role chunk at once, the first token at TTFT, token gaps of tpot (medians, a
 * handful of tokens: the machine is small and shared), tokens per event, prefill time and
 * speculative decoding.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Rng } from "../../lib/mock/prng.ts";
import { timedSource } from "../../lib/mock/timing_model.ts";
import {
  chatBody,
  median,
  type MockProc,
  rawRequest,
  splitSse,
  type SseEvent,
  startMock,
} from "./_helpers.ts";

type Json = Record<string, unknown>;

function tokenEvents(events: SseEvent[]): SseEvent[] {
  return events.filter((e) => {
    const c = (e.json as { choices?: { delta?: { content?: string | null } }[] } | undefined)?.choices?.[0];
    return typeof c?.delta?.content === "string" && c.delta.content !== "";
  });
}

async function streamChat(port: number, content: string, extra: Json = {}) {
  const x = await rawRequest(
    port,
    "POST",
    "/v1/chat/completions",
    chatBody(content, { max_tokens: 6, ...extra }),
  );
  assert.equal(x.status, 200);
  const events = splitSse(x.body, x.bodyPieces);
  return { x, events, tokens: tokenEvents(events) };
}

describe("timing model: --ttft-ms 200 --tpot-ms 20", () => {
  let vllm: MockProc;
  let llamacpp: MockProc;
  before(async () => {
    [vllm, llamacpp] = await Promise.all([
      startMock(["--engine", "vllm", "--ttft-ms", "200", "--tpot-ms", "20"]),
      startMock(["--engine", "llamacpp", "--ttft-ms", "200", "--tpot-ms", "20"]),
    ]);
  });
  after(async () => {
    await Promise.all([vllm?.stop(), llamacpp?.stop()]);
  });

  it("headers and the role chunk at once, first token at 200 ms, then one every 20 ms", async () => {
    const ttfts: number[] = [];
    const gaps: number[] = [];
    const heads: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { x, events, tokens } = await streamChat(vllm.port, `timing run ${i}`);
      assert.equal(tokens.length, 6);
      heads.push(x.headersAtMs, events[0].atMs);
      ttfts.push(tokens[0].atMs);
      for (let k = 1; k < tokens.length; k++) gaps.push(tokens[k].atMs - tokens[k - 1].atMs);
    }
    assert.ok(median(heads) < 50, `headers and role chunk median ${median(heads).toFixed(1)} ms`);
    const ttft = median(ttfts);
    assert.ok(ttft >= 200 && ttft <= 215, `first token median ${ttft.toFixed(1)} ms (told 200)`);
    const gap = median(gaps);
    assert.ok(Math.abs(gap - 20) <= 5, `token gap median ${gap.toFixed(1)} ms (told 20)`);
  });

  it("llama.cpp: the role chunk comes with the first token, after prefill", async () => {
    const { events, tokens } = await streamChat(llamacpp.port, "llama timing");
    const role = events[0];
    assert.equal((role.json as { choices: { delta: Json }[] }).choices[0].delta.role, "assistant");
    assert.ok(role.atMs >= 200, `role chunk at ${role.atMs.toFixed(1)} ms`);
    assert.ok(Math.abs(tokens[0].atMs - role.atMs) < 5, "same write as the first token");
  });
});

describe("events and steps", () => {
  it("--tokens-per-event 3: an event every 3 × tpot carrying 3 tokens (the last fewer)", async () => {
    const m = await startMock(["--ttft-ms", "50", "--tpot-ms", "10", "--tokens-per-event", "3"]);
    try {
      await streamChat(m.port, "warm up", { max_tokens: 1 });
      const { tokens, events } = await streamChat(m.port, "grouped", {
        max_tokens: 11,
        return_token_ids: true,
        stream_options: { include_usage: true },
      });
      const ids = tokens.map((e) =>
        (e.json as { choices: { token_ids: number[] }[] }).choices[0].token_ids.length
      );
      assert.deepEqual(ids, [3, 3, 3, 2]);
      const gaps = tokens.slice(1).map((e, i) => e.atMs - tokens[i].atMs);
      assert.ok(Math.abs(median(gaps) - 30) <= 5, `gaps ${gaps.map((g) => g.toFixed(1))} (told 30)`);
      assert.equal((events.at(-2)!.json as { usage: Json }).usage.completion_tokens, 11);
    } finally {
      await m.stop();
    }
  });

  it("--tokens-per-event 3 over loopback: the shorter last event waits only its own tokens × tpot", async () => {
    const m = await startMock(["--ttft-ms", "100", "--tpot-ms", "20", "--tokens-per-event", "3"]);
    try {
      await streamChat(m.port, "warm up", { max_tokens: 1 });
      const firsts: number[] = [];
      const middles: number[] = [];
      const lasts: number[] = [];
      for (let i = 0; i < 3; i++) {
        // 7 tokens: events of 3, 3, 1 due at 100, 160, 180 ms (the last waits 1 × 20, not 3 × 20).
        const { tokens } = await streamChat(m.port, `short last ${i}`, {
          max_tokens: 7,
          return_token_ids: true,
        });
        const sizes = tokens.map((e) =>
          (e.json as { choices: { token_ids: number[] }[] }).choices[0].token_ids.length
        );
        assert.deepEqual(sizes, [3, 3, 1]);
        firsts.push(tokens[0].atMs);
        middles.push(tokens[1].atMs - tokens[0].atMs);
        lasts.push(tokens[2].atMs - tokens[1].atMs);
      }
      assert.ok(
        median(firsts) >= 100 && median(firsts) < 115,
        `TTFT ${median(firsts).toFixed(1)} (told 100)`,
      );
      assert.ok(Math.abs(median(middles) - 60) <= 8, `3-token gap ${median(middles).toFixed(1)} (want 60)`);
      assert.ok(Math.abs(median(lasts) - 20) <= 8, `1-token last gap ${median(lasts).toFixed(1)} (want 20)`);
      // max_tokens below K: the first (and only) event carries them all, at TTFT.
      const { tokens } = await streamChat(m.port, "short", { max_tokens: 2, return_token_ids: true });
      assert.deepEqual(
        tokens.map((e) => (e.json as { choices: { token_ids: number[] }[] }).choices[0].token_ids.length),
        [2],
      );
    } finally {
      await m.stop();
    }
  });

  it("--prefill-ms-per-token: TTFT = ttft_ms + prefill × prompt tokens", async () => {
    const m = await startMock(["--ttft-ms", "40", "--prefill-ms-per-token", "2", "--tpot-ms", "5"]);
    try {
      await streamChat(m.port, "warm up", { max_tokens: 1 });
      const words = Array.from({ length: 43 }, (_, i) => `w${i}`).join(" ");
      const firsts: number[] = [];
      for (let i = 0; i < 3; i++) {
        firsts.push((await streamChat(m.port, `${words} ${i}`, { max_tokens: 2 })).tokens[0].atMs);
      }
      const want = 40 + 2 * (44 + 4 + 3);
      const got = median(firsts);
      assert.ok(got >= want && got <= want + 15, `first token median ${got.toFixed(1)} ms, want ${want}`);
    } finally {
      await m.stop();
    }
  });

  it("--spec-depth 3 --spec-accept 0.6: one event per step every tpot, 1 + accepted tokens", async () => {
    const m = await startMock([
      "--ttft-ms",
      "30",
      "--tpot-ms",
      "15",
      "--spec-depth",
      "3",
      "--spec-accept",
      "0.6",
      "--seed",
      "2",
    ]);
    try {
      const { tokens, events } = await streamChat(m.port, "drafts", {
        max_tokens: 24,
        return_token_ids: true,
        stream_options: { include_usage: true },
      });
      const sizes = tokens.map((e) =>
        (e.json as { choices: { token_ids: number[] }[] }).choices[0].token_ids.length
      );
      assert.equal(sizes.reduce((a, b) => a + b, 0), 24);
      assert.ok(sizes.every((s) => s >= 1 && s <= 4));
      assert.ok(sizes.some((s) => s > 1), "some drafts accepted");
      const gaps = tokens.slice(1).map((e, i) => e.atMs - tokens[i].atMs);
      assert.ok(Math.abs(median(gaps) - 15) <= 5, `step gap median ${median(gaps).toFixed(1)} (told 15)`);
      assert.equal((events.at(-2)!.json as { usage: Json }).usage.completion_tokens, 24);
    } finally {
      await m.stop();
    }
  });
});

describe("deadlines", () => {
  it("are absolute from arrival, never chained sleeps: a late reader catches up instead of shifting later tokens", async () => {
    const start = performance.now();
    const source = timedSource(
      10,
      { ttftMs: 0, tpotMs: 20, tokensPerEvent: 1, specDepth: 0, specAccept: 0, jitterMs: 0 },
      new Rng(1),
      start,
    );
    assert.ok(await source.next());
    await new Promise((r) => setTimeout(r, 60)); // the reader falls three tokens behind
    let n = 1;
    let last = 0;
    for (let ev = await source.next(); ev; ev = await source.next()) {
      n += ev.tokens;
      last = performance.now() - start;
    }
    assert.equal(n, 10);
    // Token 10 is due 9 × 20 = 180 ms after arrival; chained sleeps would put it at 60 + 180.
    assert.ok(last >= 180 && last < 225, `last token at ${last.toFixed(1)} ms, due at 180`);
  });
});
