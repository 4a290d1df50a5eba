/**
 * `--engine-kind auto` in-process (fast, both runtimes): detection from the engines' real answers
 * in the shared fixtures, served by an injected fetch that records every GET. Guards the order
 * (owned_by, self-description endpoints, then /metrics) and that trtllm's draining /metrics is
 * never read while TensorRT-LLM is still possible. Budget: well under 1 s.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { listModels, parseEndpoint } from "../../lib/client/mod.ts";
import { MAX_MODELS_BODY_BYTES } from "../../lib/client/models.ts";
import { detectEngine, engineVersion, kindFromMetricNames, kindFromOwnedBy } from "../../lib/engines/mod.ts";
import { ENGINES_DIR } from "../client/_replay.ts";

const FIX = ENGINES_DIR;
/** The shape of llama-server b10587's /props (../shared/fixtures/engines/llamacpp/real-b10587/props.txt), cut down. */
const PROPS = JSON.stringify({
  default_generation_settings: { id: 0, n_ctx: 2048, params: { n_predict: -1 } },
  total_slots: 4,
  model_path: "tiny.gguf",
  build_info: "b10587-3f545be",
});
const fx = (p: string) => readFileSync(join(FIX, p), "utf8");
const ep = parseEndpoint("http://127.0.0.1:9/v1");

/** A fetch answering paths from a table (404 otherwise), recording each path asked. */
function server(routes: Record<string, [number, string] | "hang">) {
  const asked: string[] = [];
  const fetch = (url: string, init: RequestInit): Promise<Response> => {
    const path = new URL(url).pathname;
    asked.push(path);
    const r = routes[path];
    if (r === "hang") {
      return new Promise((_ok, fail) => {
        init.signal?.addEventListener("abort", () => fail(new Error("aborted")), { once: true });
      });
    }
    const [status, body] = r ?? [404, '{"detail":"Not Found"}'];
    return Promise.resolve(new Response(body, { status }));
  };
  return { fetch, asked };
}

describe("detectEngine", () => {
  for (
    const [engine, kind, owner] of [
      ["vllm", "vllm", "vllm"],
      ["sglang", "sglang", "sglang"],
      ["llamacpp", "llamacpp", "llamacpp"],
      ["trtllm", "trtllm", "tensorrt_llm"],
    ] as const
  ) {
    test(`${engine}: /v1/models owned_by=${owner} decides, nothing else is asked`, async () => {
      const s = server({ "/v1/models": [200, fx(`${engine}/models.json`)] });
      const d = await detectEngine(ep, { fetch: s.fetch });
      assert.deepEqual(d, { kind, source: "owned_by", detail: `owned_by=${owner}` });
      assert.deepEqual(s.asked, ["/v1/models"]);
    });
  }

  test("owned_by=system (OpenAI, gateways): llama.cpp's /props decides", async () => {
    const s = server({
      "/v1/models": [200, fx("openai/models.json")],
      "/props": [200, PROPS],
    });
    const d = await detectEngine(ep, { fetch: s.fetch });
    assert.equal(d.kind, "llamacpp");
    assert.equal(d.source, "version_endpoint");
    assert.ok(!s.asked.includes("/metrics"));
  });

  test("SGLang's /get_server_info (server args) decides when owned_by does not", async () => {
    const info = JSON.stringify({ model_path: "Qwen/Qwen2.5-0.5B-Instruct", tp_size: 1, version: "0.5.0" });
    const s = server({ "/v1/models": [200, fx("openai/models.json")], "/get_server_info": [200, info] });
    const d = await detectEngine(ep, { fetch: s.fetch });
    assert.deepEqual([d.kind, d.source], ["sglang", "version_endpoint"]);
  });

  test("/metrics names decide once owned_by has ruled TensorRT-LLM out", async () => {
    for (
      const [engine, kind] of [["vllm", "vllm"], ["sglang", "sglang"], ["llamacpp", "llamacpp"]] as const
    ) {
      const s = server({
        "/v1/models": [200, fx("openai/models.json")],
        "/version": [200, '{"version":"0.11.0"}'],
        "/metrics": [200, fx(`${engine}/metrics.txt`)],
      });
      const d = await detectEngine(ep, { fetch: s.fetch });
      assert.deepEqual([d.kind, d.source], [kind, "metrics"], engine);
    }
  });

  test("a sharded run (noMetrics) never reads a metrics endpoint: every shard detects alike", async () => {
    const s = server({
      "/v1/models": [200, fx("openai/models.json")],
      "/version": [200, '{"version":"0.11.0"}'],
      "/metrics": [200, fx("vllm/metrics.txt")],
      "/prometheus/metrics": [200, fx("trtllm/metrics.txt")],
    });
    const d = await detectEngine(ep, { fetch: s.fetch, noMetrics: true });
    assert.deepEqual([d.kind, d.source], ["generic", "fallback"]);
    assert.ok(!s.asked.some((p) => p.endsWith("/metrics")), `asked ${s.asked.join(" ")}`);
    assert.match(d.detail, /only shard 0 scrapes; give --engine-kind/);
  });

  test("TensorRT-LLM not ruled out (no model list, /version answers): /metrics is never GET", async () => {
    const s = server({
      "/v1/models": [500, "oops"],
      "/version": [200, fx("trtllm/version.json")],
      "/metrics": [200, fx("trtllm/metrics-iteration-stats.json")],
      "/prometheus/metrics": [200, fx("trtllm/metrics.txt")],
    });
    const d = await detectEngine(ep, { fetch: s.fetch });
    assert.ok(!s.asked.includes("/metrics"), `asked ${s.asked.join(" ")}`);
    assert.deepEqual([d.kind, d.source], ["trtllm", "metrics"]);
    assert.match(d.detail, /prometheus\/metrics has trtllm_/);
    const bare = server({ "/v1/models": [500, "oops"], "/version": [200, fx("trtllm/version.json")] });
    const g = await detectEngine(ep, { fetch: bare.fetch });
    assert.equal(g.kind, "generic");
    assert.ok(!bare.asked.includes("/metrics"));
    assert.match(g.detail, /not ruled out/);
  });

  test("nothing matches: generic, fallback, saying what was seen", async () => {
    const s = server({ "/v1/models": [200, fx("openai/models.json")] });
    const d = await detectEngine(ep, { fetch: s.fetch });
    assert.deepEqual([d.kind, d.source], ["generic", "fallback"]);
    assert.match(d.detail, /owned_by=system/);
  });

  test("a server that never answers: every request is bounded by timeoutMs", async () => {
    const hang = server({
      "/v1/models": "hang",
      "/props": "hang",
      "/get_server_info": "hang",
      "/server_info": "hang",
      "/version": "hang",
      "/prometheus/metrics": "hang",
      "/metrics": "hang",
    });
    const t0 = performance.now();
    const d = await detectEngine(ep, { fetch: hang.fetch, timeoutMs: 50 });
    const took = performance.now() - t0;
    assert.equal(d.kind, "generic");
    assert.ok(took < 2000, `took ${took} ms`);
    assert.ok(hang.asked.length <= 7);
  });

  test("an endless /v1/models is cut at MAX_MODELS_BODY_BYTES (protocol), and detection goes on", async () => {
    let sent = 0;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += chunk.byteLength;
        c.enqueue(chunk);
      },
    });
    const models = await listModels(ep, { fetch: () => Promise.resolve(new Response(endless)) });
    assert.deepEqual([models.ok, models.errorKind], [false, "protocol"]);
    assert.ok(sent <= MAX_MODELS_BODY_BYTES + 2 * chunk.byteLength, `read ${sent} bytes`);
    const s = server({ "/props": [200, PROPS] });
    assert.equal((await detectEngine(ep, { fetch: s.fetch, models })).kind, "llamacpp");
  });

  test("kindFromOwnedBy and kindFromMetricNames", () => {
    assert.equal(kindFromOwnedBy("tensorrt_llm"), "trtllm");
    assert.equal(kindFromOwnedBy("LlamaCpp"), "llamacpp");
    assert.equal(kindFromOwnedBy("system"), null);
    assert.equal(kindFromOwnedBy(null), null);
    assert.equal(kindFromMetricNames(fx("trtllm/metrics.txt"))?.kind, "trtllm");
    assert.equal(kindFromMetricNames(fx("llamacpp/metrics.txt"))?.kind, "llamacpp");
    assert.equal(kindFromMetricNames("# HELP vllm:x y\nprocess_cpu_seconds_total 1\n"), null);
  });
});

describe("engineVersion", () => {
  test("each engine's own statement: llama.cpp /props build_info, SGLang /get_server_info (else /version), vLLM and TRT-LLM /version", async () => {
    const ask = async (kind: Parameters<typeof engineVersion>[1], routes: Record<string, [number, string] | "hang">) => {
      const s = server(routes);
      return { v: await engineVersion(ep, kind, { fetch: s.fetch, timeoutMs: 200 }), asked: s.asked };
    };
    assert.deepEqual((await ask("llamacpp", { "/props": [200, PROPS] })).v, { version: "b10587-3f545be", source: "/props build_info" });
    assert.deepEqual((await ask("trtllm", { "/version": [200, fx("trtllm/version.json")] })).v, { version: "1.1.0", source: "/version" });
    assert.deepEqual((await ask("vllm", { "/version": [200, '{"version":"0.11.0"}'] })).v, { version: "0.11.0", source: "/version" });
    assert.deepEqual((await ask("sglang", { "/get_server_info": [200, '{"model_path":"m","tp_size":1,"version":"0.5.4"}'], "/version": [200, '{"version":"x"}'] })).v, { version: "0.5.4", source: "/get_server_info version" });
    assert.deepEqual((await ask("sglang", { "/version": [200, '{"version":"0.4.9"}'] })).v, { version: "0.4.9", source: "/version" });
    // Nothing stated, a route that hangs, an odd answer, or a generic server: null, and a generic one is not even asked.
    assert.equal((await ask("vllm", {})).v, null);
    assert.equal((await ask("vllm", { "/version": "hang" })).v, null);
    assert.equal((await ask("vllm", { "/version": [200, '{"version": 11}'] })).v, null);
    const g = await ask("generic", { "/version": [200, '{"version":"1"}'] });
    assert.deepEqual([g.v, g.asked], [null, []]);
  });
});
