/**
 * The batching simulator (MOCK.md "Batching simulator"): discrete steps, admission in arrival
 * order up to B and within the KV budget, running/waiting at scrape time, and the timeline
 * that follows, end to end through the compiled `ik mock` and in-process.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMock } from "../../lib/mock/mod.ts";
import { Rng } from "../../lib/mock/prng.ts";
import { BatchSimulator, type StepStats } from "../../lib/mock/simulator.ts";
import { chatBody, median, rawRequest, serveMock, splitSse, startMock } from "./_helpers.ts";

const STEP = 20;
const L = 8;

describe("--max-batch 2 --step-ms 20, four concurrent streams", () => {
  it("/metrics shows 2 running and 2 waiting; the 3rd starts only as the first two finish", async () => {
    const m = await startMock(["--engine", "vllm", "--max-batch", "2", "--step-ms", String(STEP)]);
    try {
      const requests = Array.from(
        { length: 4 },
        (_, i) =>
          rawRequest(m.port, "POST", "/v1/chat/completions", chatBody(`batch ${i}`, { max_tokens: L })),
      );
      await new Promise((r) => setTimeout(r, 90));
      const metrics = (await rawRequest(m.port, "GET", "/metrics")).body;
      const state = JSON.parse((await rawRequest(m.port, "GET", "/state")).body);
      const gauge = (name: string) =>
        Number(metrics.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m"))?.[1]);
      assert.equal(gauge("vllm:num_requests_running"), 2);
      assert.equal(gauge("vllm:num_requests_waiting"), 2);
      assert.deepEqual(state, { admission: 2, resident: 2 });

      const runs = (await Promise.all(requests)).map((x) => {
        const tokens = splitSse(x.body, x.bodyPieces).filter((e) =>
          ((e.json as { choices?: { delta?: { content?: string } }[] })?.choices?.[0]?.delta?.content ??
            "") !== ""
        );
        assert.equal(tokens.length, L);
        const at = tokens.map((t) => x.sentAt + t.atMs);
        return { first: at[0], last: at[L - 1], gaps: at.slice(1).map((t, i) => t - at[i]) };
      }).sort((a, b) => a.first - b.first);
      const [r1, r2, r3, r4] = runs;
      const tol = 8;
      // One token per step while running: L tokens span L - 1 steps.
      for (const r of runs) {
        assert.ok(Math.abs(median(r.gaps) - STEP) <= 5, `token gap median ${median(r.gaps).toFixed(1)}`);
      }
      assert.ok(
        Math.abs(r1.last - r1.first - (L - 1) * STEP) <= tol * 2,
        `r1 decode ${(r1.last - r1.first).toFixed(1)} ms`,
      );
      // r1 leaves at the end of step L; r3 is admitted at the next step's start and its first token
      // ends that step, the same step in which r2 (one step behind r1) gets its last token.
      assert.ok(
        r3.first >= r1.last + STEP - tol,
        `r3 first ${(r3.first - r1.first).toFixed(1)} vs r1 last ${(r1.last - r1.first).toFixed(1)}`,
      );
      assert.ok(
        r3.first >= r2.last - tol && r3.first <= r2.last + tol,
        `r3 first ${(r3.first - r1.first).toFixed(1)} vs r2 last ${(r2.last - r1.first).toFixed(1)}`,
      );
      assert.ok(
        Math.abs(r4.first - r3.first - STEP) <= tol,
        `r4 one step after r3: ${(r4.first - r3.first).toFixed(1)}`,
      );
      const after = (await rawRequest(m.port, "GET", "/metrics")).body;
      assert.match(after, /^vllm:num_requests_running\{[^}]*\} 0\.0$/m);
      assert.match(after, /^vllm:num_requests_waiting\{[^}]*\} 0\.0$/m);
    } finally {
      await m.stop();
    }
  });
});

describe("simulator rules", () => {
  it("the KV budget (prompt + max_tokens per request) limits admission", async () => {
    // Each request reserves 8 prompt + 10 output = 18 tokens; 40 fit two of them.
    const mock = createMock({ maxBatch: 4, stepMs: 10, kvTokens: 40 });
    const bodies = [0, 1, 2].map((i) =>
      mock.fetch(
        new Request("http://mock/v1/chat/completions", {
          method: "POST",
          body: JSON.stringify(chatBody(`kv${i}`, { max_tokens: 10 })),
        }),
      )
    );
    const responses = await Promise.all(bodies);
    await new Promise((r) => setTimeout(r, 35));
    assert.deepEqual(mock.stats(), { running: 2, waiting: 1, served: 0 });
    await Promise.all(responses.map((r) => r.text()));
    assert.deepEqual(mock.stats(), { running: 0, waiting: 0, served: 3 });
    mock.close();
  });

  it("a step lasts A + B2 × batch (+ prefill of the admitted prompts); B slots at most", async () => {
    const steps: StepStats[] = [];
    const sim = new BatchSimulator({
      maxBatch: 2,
      stepMs: 4,
      stepMsPerSeq: 3,
      prefillMsPerToken: 0.5,
      kvTokens: null,
      tokensPerEvent: 1,
      specDepth: 0,
      specAccept: 0,
      jitterMs: 0,
      seed: 0,
    }, (s) => steps.push(s));
    const sources = [10, 20, 30].map((prompt) =>
      sim.submit({ promptTokens: prompt, outputLen: 3, kvTokens: prompt + 3, rng: new Rng(1) })
    );
    const counts = await Promise.all(sources.map(async (s) => {
      let n = 0;
      for (let ev = await s.next(); ev; ev = await s.next()) n += ev.tokens;
      return n;
    }));
    assert.deepEqual(counts, [3, 3, 3]);
    // Step 1 admits only the first (the engine was idle), step 2 the second, later the third.
    assert.deepEqual(steps.map((s) => [s.running, s.admitted, s.prefillTokens]).slice(0, 2), [[1, 1, 10], [
      2,
      1,
      20,
    ]]);
    for (const s of steps) assert.ok(s.running <= 2);
    for (const s of steps) assert.equal(s.iterLatencyMs, 4 + 3 * s.running + 0.5 * s.prefillTokens);
    assert.equal(steps.reduce((n, s) => n + s.completed, 0), 3);
    sim.close();
  });
});

describe("capacity", () => {
  it("a closed loop of 2B clients completes ≈ 1000 · B / (L · A) requests per second", async () => {
    // B = 4 slots, A = 10 ms steps, B2 = 0, L = 10 tokens: 40 requests/s. With 2B clients the queue
    // never empties, so every slot is refilled at the next step start and client latency does not count.
    const B = 4;
    const A = 10;
    const len = 10;
    const clients = 2 * B;
    const total = 48;
    const m = await serveMock({ engine: "vllm", maxBatch: B, stepMs: A });
    try {
      const done: number[] = [];
      let sent = 0;
      const worker = async () => {
        while (sent < total) {
          sent++;
          const res = await fetch(`${m.base}/v1/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "mock-model", prompt: `capacity ${sent}`, max_tokens: len }),
          });
          const body = await res.json() as { usage: { completion_tokens: number } };
          assert.equal(body.usage.completion_tokens, len);
          done.push(performance.now());
        }
      };
      await Promise.all(Array.from({ length: clients }, worker));
      assert.equal(done.length, total);
      // Measure after the first batch has turned over (the start staggers admission), over a
      // whole number of turnovers: completions come in bunches, B of them every L steps.
      const from = clients;
      const to = from + B * Math.floor((total - 1 - from) / B);
      const rate = (to - from) / ((done[to] - done[from]) / 1000);
      const want = (1000 * B) / (len * A);
      assert.ok(Math.abs(rate - want) / want <= 0.15, `throughput ${rate.toFixed(1)} req/s, formula ${want}`);
      assert.deepEqual(m.mock.stats(), { running: 0, waiting: 0, served: total });
    } finally {
      await m.close();
    }
  });
});
