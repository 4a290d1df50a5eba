/**
 * Load mode against the real llama-server (2 slots, -t 1) through the binary: the test measures the
 * saturated throughput T itself (two closed-loop workers, plain fetch) and the unloaded median TTFT,
 * then runs a rate grid below and above T with an SLO of p95 TTFT ≤ 5 × the unloaded median.
 * Long prompts (~1000 words) and 16 output tokens make TTFT (prefill) the part that queues.
 * Checks: no failure below saturation; the max rate found does not exceed T. Bun only; ~25 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";

const skip = llamaSkip();

describe("bench serve load against a real llama-server", { skip }, () => {
  let server: LlamaServer;
  let dir = "";
  let prompts: string[] = [];
  before(async () => {
    server = await startLlama({ slots: 2 });
    dir = await mkdtemp(join(tmpdir(), "ik-llama-load-"));
    const s = await runIk(["prompts", "synth", "--bucket", "long:1000:16", "--per-bucket", "8", "--out", join(dir, "long.jsonl")], { timeoutMs: 30_000 });
    assert.equal(s.code, 0, s.stderr);
    prompts = (await readFile(join(dir, "long.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l).messages[0].content);
  });
  after(async () => {
    server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("no failures below saturation; the max rate found does not exceed the measured throughput", async () => {
    let k = 0;
    const body = (stream: boolean) => JSON.stringify({ model: "tiny-llama", messages: [{ role: "user", content: `[t${k++}] ${prompts[k % prompts.length]}` }], max_tokens: 16, stream, ignore_eos: true });
    const url = `${server.url}/v1/chat/completions`;
    // The test's own client: a pooled keep-alive connection the server has just closed is sent
    // once more (ECONNRESET before any response), as ik's own client does.
    const post = async (stream: boolean): Promise<Response> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: body(stream), signal: AbortSignal.timeout(30_000) });
        } catch (e) {
          if (attempt > 0 || !/ECONNRESET|closed unexpectedly|socket hang up/i.test(String((e as Error)?.message ?? e))) throw e;
        }
      }
    };
    let done = 0;
    const t0 = performance.now(), end = t0 + 3000;
    await Promise.all([0, 1].map(async () => {
      while (performance.now() < end) {
        await (await post(false)).text();
        done++;
      }
    }));
    const throughput = done / ((performance.now() - t0) / 1000);
    const ttfts: number[] = [];
    for (let i = 0; i < 7; i++) {
      const s = performance.now();
      const rd = (await post(true)).body!.getReader();
      let first = 0;
      for (;;) {
        const x = await rd.read();
        if (x.done) break;
        if (!first && new TextDecoder().decode(x.value).includes('"content"')) first = performance.now() - s;
      }
      ttfts.push(first);
    }
    const unloaded = ttfts.sort((a, b) => a - b)[3];
    const grid = [0.3, 0.6, 1.5, 2].map((f) => +(f * throughput).toFixed(2));
    const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    const r = await runIk(["bench", "serve", "--mode", "load", "--base-url", server.url, "--model", "tiny-llama", "--prompts", join(dir, "long.jsonl"),
      "--rates", grid.join(","), "--duration-s", "3", "--warmup", "1", "--sweep-all", "--slo-ttft-p95-ms", (5 * unloaded).toFixed(1), "--json"], { env, timeoutMs: 180_000 });
    assert.equal(r.code, 0, r.stderr);
    const cap = JSON.parse(r.stdout);
    const curve = cap.data.curve as { level: number; n_failed: number; ttft_p95_ms: number }[];
    const context = `T ${throughput.toFixed(1)} req/s, unloaded TTFT ${unloaded.toFixed(1)} ms, curve ${JSON.stringify(curve.map((c) => [c.level, c.n_failed, c.ttft_p95_ms]))}`;
    for (const c of curve.filter((c) => c.level < throughput)) assert.equal(c.n_failed, 0, context);
    assert.ok(cap.data.rate_star_rps === null || cap.data.rate_star_rps <= throughput, `max rate ${cap.data.rate_star_rps}: ${context}`);
    assert.equal(cap.identity.engine.name, "llamacpp");
  });
});

if (skip) test("real llama-server load mode (skipped)", { skip }, () => {});
