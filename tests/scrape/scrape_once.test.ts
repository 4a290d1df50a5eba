/** scrapeOnce against the in-process mock's personalities and against fetches that misbehave. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEndpoint } from "../../lib/client/endpoint.ts";
import { scrapeOnce } from "../../lib/scrape/mod.ts";
import { serveMock } from "../mock/_helpers.ts";

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** A fetch that records every URL (and headers) and passes through to the real one. */
function recording(): { fetch: Fetch; urls: string[]; headers: Record<string, string>[] } {
  const urls: string[] = [];
  const headers: Record<string, string>[] = [];
  return {
    urls,
    headers,
    fetch: (input, init) => {
      urls.push(input);
      headers.push({ ...(init.headers as Record<string, string>) });
      return fetch(input, init);
    },
  };
}

test("vllm personality: gauges, sources, the key sent as a bearer token", async () => {
  const m = await serveMock({ engine: "vllm" });
  try {
    const rec = recording();
    const r = await scrapeOnce(parseEndpoint(m.base + "/v1"), "vllm", { fetch: rec.fetch, apiKey: "sk-x" });
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.status, 200);
    assert.deepEqual(r.values, { running: 0, waiting: 0, kv_cache_usage: 0, preemptions_total: 0 });
    assert.deepEqual(r.missing, []);
    assert.equal(r.sources.running?.metric, "vllm:num_requests_running");
    assert.deepEqual(rec.urls, [m.base + "/metrics"]);
    assert.equal(rec.headers[0].authorization, "Bearer sk-x");
    assert.ok(r.durationMs >= 0 && r.tMs > 0);
  } finally {
    await m.close();
  }
});

test("metrics off: llama.cpp 501 and SGLang 404 are 'not available' with the reason", async () => {
  for (
    const [engine, status, reason] of [
      ["llamacpp", 501, "llama.cpp started without --metrics"],
      ["sglang", 404, "SGLang started without --enable-metrics"],
      ["trtllm", 404, "return_perf_metrics"],
    ] as const
  ) {
    const m = await serveMock({ engine, metrics: false });
    try {
      const r = await scrapeOnce(parseEndpoint(m.base), engine);
      assert.equal(r.ok, false);
      assert.equal(r.permanent, true);
      assert.equal(r.status, status);
      assert.ok(r.error?.startsWith(`not available: HTTP ${status} (`), r.error ?? "");
      assert.ok(r.error?.includes(reason), r.error ?? "");
      assert.deepEqual(r.values, {
        running: null,
        waiting: null,
        kv_cache_usage: null,
        preemptions_total: null,
      });
    } finally {
      await m.close();
    }
  }
});

test("trtllm: only /prometheus/metrics is requested; a /metrics path override is refused unsent", async () => {
  const m = await serveMock({ engine: "trtllm" });
  try {
    const rec = recording();
    const ep = parseEndpoint(m.base);
    const r = await scrapeOnce(ep, "trtllm", { fetch: rec.fetch });
    assert.equal(r.ok, true, r.error ?? "");
    assert.equal(r.sources.running?.metric, "trtllm_num_requests_running");
    assert.equal(r.values.kv_cache_usage, 0);
    for (const path of ["/metrics", "metrics", "/metrics/", "/metrics?x=1"]) {
      const refused = await scrapeOnce(ep, "trtllm", { fetch: rec.fetch, path });
      assert.equal(refused.ok, false);
      assert.equal(refused.permanent, true);
      assert.match(refused.error ?? "", /refusing GET \/metrics on TensorRT-LLM/);
    }
    assert.deepEqual(rec.urls, [m.base + "/prometheus/metrics"]);
  } finally {
    await m.close();
  }
});

test("generic on a trtllm server: the JSON /metrics is noticed and marked not available", async () => {
  const m = await serveMock({ engine: "trtllm" });
  try {
    const r = await scrapeOnce(parseEndpoint(m.base), "generic");
    assert.equal(r.ok, false);
    assert.equal(r.permanent, true);
    assert.match(r.error ?? "", /answered JSON, not Prometheus text/);
  } finally {
    await m.close();
  }
});

test("a path prefix is kept; an openai server's 404 is not available", async () => {
  const urls: string[] = [];
  const f: Fetch = (u) => {
    urls.push(u);
    return Promise.resolve(new Response("nope", { status: 404 }));
  };
  const r = await scrapeOnce(parseEndpoint("http://127.0.0.1:9/proxy/v1"), "vllm", { fetch: f });
  assert.deepEqual(urls, ["http://127.0.0.1:9/proxy/metrics"]);
  assert.equal(r.permanent, true);
  assert.match(r.error ?? "", /^not available: HTTP 404/);
});

test("transient failures: timeout, refused connection, 503, empty body; never a throw", async () => {
  const ep = parseEndpoint("http://127.0.0.1:9");
  const hang: Fetch = (_u, init) =>
    new Promise((_res, rej) =>
      init.signal?.addEventListener("abort", () => rej(new Error("aborted by signal")))
    );
  const t = await scrapeOnce(ep, "vllm", { fetch: hang, timeoutMs: 30 });
  assert.equal(t.ok, false);
  assert.equal(t.permanent, false);
  assert.equal(t.error, "timeout after 30 ms on /metrics");
  const boom: Fetch = () => Promise.reject(new TypeError("connect ECONNREFUSED"));
  const c = await scrapeOnce(ep, "vllm", { fetch: boom });
  assert.equal(c.error, "connection failed: connect ECONNREFUSED");
  assert.equal(c.permanent, false);
  const throwsSync: Fetch = () => {
    throw new Error("sync throw");
  };
  assert.equal((await scrapeOnce(ep, "vllm", { fetch: throwsSync })).error, "connection failed: sync throw");
  const busy: Fetch = () => Promise.resolve(new Response("busy", { status: 503 }));
  const b = await scrapeOnce(ep, "vllm", { fetch: busy });
  assert.equal(b.error, "HTTP 503 on /metrics");
  assert.equal(b.permanent, false);
  const empty: Fetch = () => Promise.resolve(new Response("", { status: 200 }));
  assert.equal((await scrapeOnce(ep, "vllm", { fetch: empty })).permanent, false);
  const ac = new AbortController();
  ac.abort();
  const a = await scrapeOnce(ep, "vllm", { fetch: hang, signal: ac.signal });
  assert.equal(a.error, "aborted");
});

test("not Prometheus text (an HTML page) is not available; a body over the cap is cut at a line", async () => {
  const ep = parseEndpoint("http://127.0.0.1:9");
  const html: Fetch = () =>
    Promise.resolve(new Response("<html>\n<body>hi</body>\n</html>", { status: 200 }));
  const h = await scrapeOnce(ep, "vllm", { fetch: html });
  assert.equal(h.ok, false);
  assert.equal(h.permanent, true);
  assert.match(h.error ?? "", /is not Prometheus text \(3 bad lines/);
  const big = "vllm:num_requests_running 2\n" + "filler_metric_line 1\n".repeat(1000);
  const b = await scrapeOnce(ep, "vllm", {
    fetch: () => Promise.resolve(new Response(big, { status: 200 })),
    maxBytes: 100,
  });
  assert.equal(b.ok, true);
  assert.equal(b.truncated, true);
  assert.equal(b.badLines, 0);
  assert.equal(b.values.running, 2);
  assert.deepEqual(b.missing, ["waiting", "kv_cache_usage", "preemptions_total"]);
});
