/**
 * GaugeSampler: an injected clock and timer (first sample at once, the tick grid, skipped ticks,
 * caps, no timer left after stop), and the in-process mock (the batching simulator's load shows
 * in running/waiting; metrics off is "not available", never a failure; trtllm is only read at
 * /prometheus/metrics).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEndpoint } from "../../lib/client/endpoint.ts";
import { GaugeSampler, type SamplerTimers } from "../../lib/scrape/mod.ts";
import { chatBody, rawRequest, serveMock } from "../mock/_helpers.ts";

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** A manual clock: timers fire only when advance() passes their time. */
class FakeTimers implements SamplerTimers {
  t = 1000;
  #id = 0;
  pending = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.#id;
    this.pending.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.pending.delete(h as number);
  };
  /** Moves the clock forward, firing due timers in order, letting promises settle in between. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      const due = [...this.pending.entries()].filter(([, p]) =>
        p.at <= end
      ).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].fn();
    }
    this.t = end;
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const EP = parseEndpoint("http://127.0.0.1:9");

/** A fetch that answers vLLM text with running = calls so far, counting calls. */
function countingFetch(): { fetch: Fetch; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    fetch: (u) => {
      calls.push(u);
      const n = calls.length;
      return Promise.resolve(
        new Response(
          `vllm:num_requests_running{engine="0"} ${n}\nvllm:num_requests_waiting{engine="0"} 1\n` +
            `vllm:kv_cache_usage_perc{engine="0"} 0.1234567891\nvllm:num_preemptions_total{engine="0"} ${
              n === 3 ? 0 : n
            }\n`,
        ),
      );
    },
  };
}

test("injected clock: first sample at once, then one per interval; stop leaves no timer", async () => {
  const timers = new FakeTimers();
  const f = countingFetch();
  const s = new GaugeSampler();
  s.start(EP, "vllm", { fetch: f.fetch, timers, intervalMs: 1000 });
  assert.equal(f.calls.length, 1, "first scrape at once");
  await timers.advance(999);
  assert.equal(f.calls.length, 1);
  await timers.advance(1);
  assert.equal(f.calls.length, 2);
  await timers.advance(3000);
  assert.equal(f.calls.length, 5);
  assert.equal(timers.pending.size, 1);
  const sum = s.stop();
  assert.equal(timers.pending.size, 0, "stop() leaves no timer");
  assert.equal(s.polling, false);
  assert.deepEqual(sum.series.t, [0, 1000, 2000, 3000, 4000]);
  assert.deepEqual(sum.series.running, [1, 2, 3, 4, 5]);
  assert.deepEqual(sum.series.kv_cache_usage, [0.123457, 0.123457, 0.123457, 0.123457, 0.123457]);
  assert.deepEqual(sum.series.preemptions_total, [1, 2, 0, 4, 5]);
  assert.equal(sum.means.running, 3);
  assert.equal(sum.means.waiting, 1);
  assert.equal(sum.max.running, 5);
  assert.equal(sum.preemptions_delta, 1 + 0 + 4 + 1, "a drop counts as a counter reset");
  assert.equal(sum.n, 5);
  assert.equal(sum.available, true);
  assert.equal(sum.note, null);
  assert.equal(sum.started_at_ms, 1000);
  assert.equal(sum.ended, "stop");
  assert.deepEqual(s.stop(), sum, "a second stop returns the same summary");
  await timers.advance(5000);
  assert.equal(f.calls.length, 5, "nothing after stop");
  assert.throws(() => s.start(EP, "vllm", { timers }), /started once/);
});

test("a scrape still in flight makes the next ticks skip (never two at once)", async () => {
  const timers = new FakeTimers();
  let inFlight = 0, maxInFlight = 0, calls = 0;
  const release: (() => void)[] = [];
  const slow: Fetch = () => {
    calls++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return new Promise((res) =>
      release.push(() => {
        inFlight--;
        res(new Response("vllm:num_requests_running 1\n"));
      })
    );
  };
  const s = new GaugeSampler();
  s.start(EP, "vllm", { fetch: slow, timers, intervalMs: 100, timeoutMs: 60_000 });
  await timers.advance(350);
  assert.equal(calls, 1);
  release.shift()!();
  await timers.advance(100);
  assert.equal(calls, 2);
  release.shift()!();
  const sum = s.stop();
  assert.equal(maxInFlight, 1);
  assert.equal(sum.skipped, 3);
  assert.equal(sum.attempts, 2);
  assert.match(sum.note ?? "", /3 ticks skipped/);
  assert.match(sum.note ?? "", /not exported: waiting, kv_cache_usage, preemptions_total/);
  assert.deepEqual(sum.missing, ["waiting", "kv_cache_usage", "preemptions_total"]);
  await s.settled();
});

test("bounded: maxSamples and maxDurationMs end polling by themselves", async () => {
  const timers = new FakeTimers();
  const f = countingFetch();
  const s = new GaugeSampler();
  s.start(EP, "vllm", { fetch: f.fetch, timers, intervalMs: 10, maxSamples: 3 });
  await timers.advance(1000);
  assert.equal(f.calls.length, 3);
  assert.equal(s.polling, false);
  assert.equal(timers.pending.size, 0);
  const a = s.stop();
  assert.equal(a.n, 3);
  assert.equal(a.ended, "max_samples");
  assert.match(a.note ?? "", /capped at 3 samples/);

  const t2 = new FakeTimers();
  const g = countingFetch();
  const d = new GaugeSampler();
  d.start(EP, "vllm", { fetch: g.fetch, timers: t2, intervalMs: 100, maxDurationMs: 450 });
  await t2.advance(2000);
  assert.equal(g.calls.length, 5);
  assert.equal(t2.pending.size, 0);
  assert.equal(d.stop().ended, "max_duration");
});

test("a permanent 'not available' ends polling; never started and aborted samplers summarize", async () => {
  const timers = new FakeTimers();
  let calls = 0;
  const off: Fetch = () => {
    calls++;
    return Promise.resolve(new Response('{"error":{"code":501}}', { status: 501 }));
  };
  const s = new GaugeSampler();
  s.start(EP, "llamacpp", { fetch: off, timers });
  await timers.advance(10_000);
  assert.equal(calls, 1);
  assert.equal(timers.pending.size, 0);
  const sum = s.stop();
  assert.equal(sum.available, false);
  assert.equal(sum.ended, "not_available");
  assert.equal(sum.note, "not available: HTTP 501 (llama.cpp started without --metrics)");
  assert.deepEqual(sum.means, {
    running: null,
    waiting: null,
    kv_cache_usage: null,
    preemptions_total: null,
  });

  const never = new GaugeSampler().stop();
  assert.equal(never.available, false);
  assert.match(never.note ?? "", /never started/);

  const ac = new AbortController();
  const t2 = new FakeTimers();
  const f = countingFetch();
  const a = new GaugeSampler();
  a.start(EP, "vllm", { fetch: f.fetch, timers: t2, signal: ac.signal });
  await t2.advance(1000);
  ac.abort();
  assert.equal(t2.pending.size, 0);
  await t2.advance(5000);
  assert.equal(f.calls.length, 2);
  assert.equal(a.stop().ended, "signal");
});

test("transient failures are noted, the sampler keeps polling", async () => {
  const timers = new FakeTimers();
  let n = 0;
  const flaky: Fetch = () =>
    ++n % 2
      ? Promise.reject(new Error("ECONNRESET"))
      : Promise.resolve(new Response("vllm:num_requests_running 2\n"));
  const s = new GaugeSampler();
  s.start(EP, "vllm", { fetch: flaky, timers, intervalMs: 100 });
  await timers.advance(350);
  const sum = s.stop();
  assert.equal(sum.attempts, 4);
  assert.equal(sum.failed, 2);
  assert.equal(sum.n, 2);
  assert.equal(sum.available, true);
  assert.match(sum.note ?? "", /^2 of 4 scrapes failed \(last: connection failed: ECONNRESET\)/);
});

test("real timers: stop() leaves no timer of the sampler's and aborts the scrape in flight", async () => {
  const live = new Set<unknown>();
  const timers: SamplerTimers = {
    now: () => performance.now(),
    setTimeout: (fn, ms) => {
      const h = setTimeout(() => {
        live.delete(h);
        fn();
      }, ms);
      live.add(h);
      return h;
    },
    clearTimeout: (h) => {
      live.delete(h);
      clearTimeout(h as ReturnType<typeof setTimeout>);
    },
  };
  let aborted = false;
  const hang: Fetch = (_u, init) =>
    new Promise((_res, rej) =>
      init.signal?.addEventListener("abort", () => {
        aborted = true;
        rej(new Error("aborted"));
      })
    );
  const s = new GaugeSampler();
  s.start(EP, "vllm", { fetch: hang, timers, intervalMs: 20 });
  await new Promise((r) => setTimeout(r, 70));
  assert.equal(live.size, 1);
  const sum = s.stop();
  assert.equal(live.size, 0);
  await s.settled();
  assert.equal(aborted, true);
  assert.equal(sum.available, false);
  assert.equal(sum.attempts, 1);
  assert.ok(sum.skipped >= 2);
});

test("batching simulator: running/waiting follow the load (max-batch 2, six requests)", async () => {
  const m = await serveMock({ engine: "vllm", maxBatch: 2, stepMs: 10 });
  try {
    const s = new GaugeSampler();
    s.start(parseEndpoint(m.base), "vllm", { intervalMs: 25 });
    // The load starts once the first sample is in (on a busy host the first scrape could be answered
    // after the first request had started), bounded in time.
    for (let i = 0; i < 200 && s.size === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const reqs = Array.from(
      { length: 6 },
      (_, i) => rawRequest(m.port, "POST", "/v1/chat/completions", chatBody(`load ${i}`, { max_tokens: 12 })),
    );
    await Promise.all(reqs);
    await new Promise((r) => setTimeout(r, 60));
    const sum = s.stop();
    await s.settled();
    assert.equal(sum.available, true, sum.note ?? "");
    assert.ok(sum.n >= 5, `n=${sum.n}`);
    assert.equal(sum.max.running, 2);
    assert.ok((sum.max.waiting ?? 0) >= 1, `max waiting ${sum.max.waiting}`);
    assert.equal(sum.series.running[0], 0, "first sample before the load");
    assert.equal(sum.series.running.at(-1), 0, "last sample after the load");
    assert.ok((sum.means.running ?? 0) > 0);
    assert.equal(sum.sources.running?.metric, "vllm:num_requests_running");
    assert.equal(sum.path, "/metrics");
  } finally {
    await m.close();
  }
});

test("metrics off (llama.cpp, SGLang): not available, noted, never a failure", async () => {
  for (const engine of ["llamacpp", "sglang"] as const) {
    const m = await serveMock({ engine, metrics: false });
    try {
      const s = new GaugeSampler();
      s.start(parseEndpoint(m.base), engine, { intervalMs: 20 });
      await new Promise((r) => setTimeout(r, 80));
      assert.equal(s.polling, false);
      const sum = s.stop();
      assert.equal(sum.available, false);
      assert.equal(sum.attempts, 1);
      assert.match(
        sum.note ?? "",
        engine === "llamacpp"
          ? /HTTP 501 \(llama\.cpp started without --metrics\)/
          : /HTTP 404 \(SGLang started without --enable-metrics\)/,
      );
    } finally {
      await m.close();
    }
  }
});

test("trtllm personality: the sampler requests only /prometheus/metrics, never /metrics", async () => {
  const m = await serveMock({ engine: "trtllm", maxBatch: 2, stepMs: 10 });
  try {
    const urls: string[] = [];
    const rec: Fetch = (u, init) => {
      urls.push(new URL(u).pathname);
      return fetch(u, init);
    };
    const s = new GaugeSampler();
    s.start(parseEndpoint(m.base + "/v1/"), "trtllm", { fetch: rec, intervalMs: 20 });
    await Promise.all(
      Array.from(
        { length: 3 },
        (_, i) => rawRequest(m.port, "POST", "/v1/chat/completions", chatBody(`t ${i}`, { max_tokens: 8 })),
      ),
    );
    const sum = s.stop();
    await s.settled();
    assert.ok(urls.length >= 2, `${urls.length} scrapes`);
    assert.ok(urls.every((p) => p === "/prometheus/metrics"), urls.join(","));
    assert.equal(sum.available, true, sum.note ?? "");
    assert.equal(sum.max.running, 2);
    assert.equal(sum.path, "/prometheus/metrics");
    assert.equal(sum.sources.kv_cache_usage?.metric, "trtllm_kv_cache_utilization");
  } finally {
    await m.close();
  }
});

test("preemptions during sampling are counted per series: one DP engine restarting is not the sum falling", async () => {
  // engine 1 restarts between the 2nd and 3rd scrape (and preempts once); engine 2 appears at the 4th.
  const seq: [number, number, number | null][] = [[10, 5, null], [12, 5, null], [12, 1, null], [13, 2, 2]];
  let i = 0;
  const fetch: Fetch = () => {
    const [a, b, c] = seq[Math.min(i++, seq.length - 1)];
    const line = (e: number, v: number) => `vllm:num_preemptions_total{engine="${e}",model_name="m"} ${v}\n`;
    return Promise.resolve(new Response(`# TYPE vllm:num_preemptions_total counter\n${line(0, a)}${line(1, b)}${c === null ? "" : line(2, c)}`));
  };
  const timers = new FakeTimers();
  const s = new GaugeSampler();
  s.start(EP, "vllm", { fetch, timers, intervalMs: 10, maxSamples: 4 });
  await timers.advance(100);
  const sum = s.stop();
  assert.deepEqual(sum.series.preemptions_total, [15, 17, 13, 17]);
  // engine 0: +2, +0, +1; engine 1: +0, restarted (1 from zero), +1; engine 2 from zero: +2
  assert.equal(sum.preemptions_delta, 7);
});
