/**
 * A load run drops what setting it up compiled and left live before its first request
 * (`runtime.shrinkHeap`, Bun.shrink on Bun; issue 21: each MB the heap keeps through a level is ~3 MB
 * of peak RSS at 1,000 streams), and the shim's call reaches the runtime's own.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime } from "../../lib/runtime/mod.ts";
import { parseEndpoint } from "../../lib/client/mod.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { Runner } from "../../lib/bench/runner.ts";
import { runLoad } from "../../lib/bench/serve_load.ts";

const SSE = `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n` +
  `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\ndata: [DONE]\n\n`;

test("runtime.shrinkHeap resolves, and on Bun it is Bun.shrink", async () => {
  const bun = (globalThis as { Bun?: { shrink?: () => void } }).Bun;
  if (runtime.name !== "bun" || !bun) {
    await runtime.shrinkHeap();
    return;
  }
  const real = bun.shrink;
  let calls = 0;
  bun.shrink = () => void calls++;
  try {
    await runtime.shrinkHeap();
  } finally {
    bun.shrink = real;
  }
  assert.equal(calls, 1);
  await runtime.shrinkHeap(); // the real one runs and the promise settles
});

test("runLoad shrinks the heap and drops the executable's pages once, then warms its request path, then sends", async () => {
  const events: string[] = [];
  const real = runtime.shrinkHeap, realRelease = runtime.releaseExePages;
  runtime.shrinkHeap = () => {
    events.push("shrink");
    return Promise.resolve();
  };
  runtime.releaseExePages = () => {
    events.push("release");
    return { reason: "a test" };
  };
  const dir = await mkdtemp(join(tmpdir(), "ik-shrink-"));
  try {
    const fetch = (url: string) => {
      events.push(url.endsWith("/models") ? "models" : "request");
      return Promise.resolve(new Response(SSE, { status: 200, headers: { "content-type": "text/event-stream" } }));
    };
    const set = loadBuiltinPromptSet();
    const runner = new Runner({
      ep: parseEndpoint("http://127.0.0.1:9/v1"), api: "chat", engineKind: "vllm", model: "m", maxTokens: 4,
      tokenIds: "auto", exactLength: true, extraBody: {}, chatTemplateKwargs: {}, timeoutMs: 5_000, idleTimeoutMs: 5_000, fetch,
    });
    // The in-memory warm-up builds its bodies with salts of its own, and sends nothing.
    const body = runner.body.bind(runner);
    runner.body = (prompt, salt) => {
      if (salt?.startsWith("ik-warm-up-") && events[events.length - 1] !== "warm-up") events.push("warm-up");
      return body(prompt, salt);
    };
    await runLoad({
      runner, set, prompts: set.prompts, label: "t", seed: 0, storeRoot: dir, runDir: null, levelKind: "concurrency", grid: [2],
      closedLoop: true, durationS: 0.2, maxRequestsPerLevel: 6, burstiness: 1, refRequests: 0, refE2eMs: null, warmup: 2,
      slo: { maxFail: 0 }, sweepAll: true, gpuCount: 1, gpuPriceUsdH: null,
      server: { limitations: [], info: { models_status: 200 } }, gpu: {}, args: {},
      engine: { name: "vllm", version: null, kind_source: "flag" }, keyNote: null, isLocal: true,
    });
  } finally {
    runtime.shrinkHeap = real;
    runtime.releaseExePages = realRelease;
    await rm(dir, { recursive: true, force: true });
  }
  assert.equal(events.filter((e) => e === "shrink").length, 1, events.join(" "));
  assert.equal(events.filter((e) => e === "release").length, 1, events.join(" "));
  // Shrunk and dropped first: warmed after them, so the first level does not fault its pages back in.
  assert.deepEqual(events.slice(0, 3), ["shrink", "release", "warm-up"], events.slice(0, 6).join(" "));
  assert.equal(events.filter((e) => e === "warm-up").length, 1, "one warm-up, in one stretch");
  assert.ok(events.filter((e) => e === "request").length >= 4, "the --warmup requests and the level ran");
});
