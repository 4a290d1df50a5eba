/**
 * Everything but the token stream, in-process: error bodies and statuses against the engine
 * transcripts, /v1/models, /health, /ready, /state, metrics paths and names per personality,
 * --metrics off, and whole (stream: false) answers.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMock, type EngineName, ENGINES, type MockOptions } from "../../lib/mock/mod.ts";
import { fixture } from "./_helpers.ts";

type Json = Record<string, unknown>;

function keyPaths(v: unknown, prefix = ""): string[] {
  if (Array.isArray(v)) return [...new Set(v.flatMap((x) => keyPaths(x, prefix + "[]")))].sort();
  if (v && typeof v === "object") {
    return Object.entries(v).flatMap(([k, x]) => [`${prefix}.${k}`, ...keyPaths(x, `${prefix}.${k}`)]).sort();
  }
  return [];
}

async function call(
  opts: Partial<MockOptions>,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string; json: Json | undefined; headers: Headers }> {
  const mock = createMock({ ttftMs: 0, tpotMs: 0, ...opts });
  try {
    const res = await mock.fetch(
      new Request(`http://mock${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    let json: Json | undefined;
    try {
      json = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: res.status, text, json, headers: res.headers };
  } finally {
    mock.close();
  }
}

const chat = (extra: Json = {}) => ({
  model: "mock-model",
  messages: [{ role: "user", content: "hello" }],
  max_tokens: 4,
  ...extra,
});
const longPrompt = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe("error bodies follow each engine (flat vs wrapped, status, fields)", () => {
  const cases: {
    engine: EngineName;
    name: string;
    body: Json;
    status: number;
    fixture: string;
    opts?: Partial<MockOptions>;
    exact?: boolean;
  }[] = [
    {
      engine: "vllm",
      name: "unknown model",
      body: chat({ model: "gpt-4o" }),
      status: 404,
      fixture: "vllm/error-unknown-model.json",
      exact: true,
    },
    {
      engine: "vllm",
      name: "prompt over the context",
      body: chat({ messages: [{ role: "user", content: longPrompt(120) }] }),
      status: 400,
      fixture: "vllm/error-context-length.json",
      opts: { maxModelLen: 100 },
    },
    {
      engine: "vllm",
      name: "prompt + max_tokens over the context",
      body: chat({ max_tokens: 95 }),
      status: 400,
      fixture: "vllm/error-max-tokens.json",
      opts: { maxModelLen: 100 },
    },
    {
      engine: "vllm",
      name: "validation",
      body: { model: "mock-model" },
      status: 400,
      fixture: "vllm/error-validation.json",
    },
    {
      engine: "sglang",
      name: "prompt over the context",
      body: chat({ messages: [{ role: "user", content: longPrompt(120) }] }),
      status: 400,
      fixture: "sglang/error-context-length.json",
      opts: { maxModelLen: 100 },
    },
    {
      engine: "sglang",
      name: "prompt + max_tokens over the context",
      body: chat({ max_tokens: 95 }),
      status: 400,
      fixture: "sglang/error-total-tokens.json",
      opts: { maxModelLen: 100 },
    },
    {
      engine: "sglang",
      name: "validation",
      body: { model: "mock-model" },
      status: 400,
      fixture: "sglang/error-validation.json",
    },
    {
      engine: "llamacpp",
      name: "too long",
      body: chat({ max_tokens: 95 }),
      status: 400,
      fixture: "llamacpp/error-context-length.json",
      opts: { maxModelLen: 100 },
    },
    {
      engine: "llamacpp",
      name: "n > 1",
      body: chat({ n: 2 }),
      status: 400,
      fixture: "llamacpp/error-invalid-request.json",
      exact: true,
    },
    {
      engine: "trtllm",
      name: "too long",
      body: chat({ messages: [{ role: "user", content: longPrompt(120) }] }),
      status: 400,
      fixture: "trtllm/error-context-length.json",
      opts: { maxModelLen: 100 },
    },
    {
      engine: "trtllm",
      name: "unknown field (extra=forbid)",
      body: chat({ model: "Qwen/Qwen2.5-0.5B-Instruct", return_token_ids: true }),
      status: 400,
      fixture: "trtllm/error-extra-field.json",
      exact: true,
    },
    {
      engine: "openai",
      name: "unknown model",
      body: chat({ model: "gpt-9" }),
      status: 404,
      fixture: "openai/error-unknown-model.json",
      exact: true,
    },
    {
      engine: "openai",
      name: "too long",
      body: chat({ max_tokens: 95 }),
      status: 400,
      fixture: "openai/error-context-length.json",
      opts: { maxModelLen: 100 },
    },
  ];
  for (const c of cases) {
    it(`${c.engine}: ${c.name} → ${c.status}`, async () => {
      const r = await call({ engine: c.engine, ...c.opts }, "POST", "/v1/chat/completions", {
        ...c.body,
        stream: true,
      });
      assert.equal(r.status, c.status);
      assert.match(r.headers.get("content-type") ?? "", /application\/json/);
      const want = JSON.parse(fixture(c.fixture));
      assert.deepEqual(keyPaths(r.json), keyPaths(want));
      if (c.exact) assert.deepEqual(r.json, want);
    });
  }

  it("an unknown model is 404 only for vllm and openai; sglang and trtllm echo it, llama.cpp names its own", async () => {
    for (const engine of ENGINES) {
      const r = await call({ engine }, "POST", "/v1/chat/completions", chat({ model: "some-other-model" }));
      assert.equal(r.status, engine === "vllm" || engine === "openai" ? 404 : 200, engine);
      if (r.status === 200) {
        const model = (r.json as Json).model;
        assert.equal(model, engine === "llamacpp" ? "mock-model" : "some-other-model", engine);
      }
    }
  });

  it("trtllm accepts the standard fields plus its own extensions", async () => {
    const body = chat({
      model: "m",
      temperature: 0.1,
      top_p: 1,
      seed: 3,
      stop: ["x"],
      ignore_eos: true,
      min_tokens: 4,
      stream_options: { include_usage: true },
      stream: true,
      top_k: 5,
    });
    assert.equal((await call({ engine: "trtllm" }, "POST", "/v1/chat/completions", body)).status, 200);
    const comp = { model: "m", prompt: "hi", max_tokens: 3, detokenize: false, echo: false };
    assert.equal((await call({ engine: "trtllm" }, "POST", "/v1/completions", comp)).status, 200);
  });

  it("a body that is not JSON gets the personality's 400", async () => {
    for (const engine of ENGINES) {
      const mock = createMock({ engine });
      const res = await mock.fetch(
        new Request("http://mock/v1/chat/completions", { method: "POST", body: "{not json" }),
      );
      assert.equal(res.status, 400, engine);
      await res.body?.cancel();
      mock.close();
    }
  });
});

describe("/v1/models and /health", () => {
  it("models carry each engine's fields (max_model_len for vllm and sglang only)", async () => {
    for (const engine of ENGINES) {
      const r = await call({ engine, maxModelLen: 4096 }, "GET", "/v1/models");
      assert.equal(r.status, 200);
      const want = JSON.parse(fixture(`${engine}/models.json`));
      assert.deepEqual(keyPaths(r.json), keyPaths({ ...want, data: [want.data[0]] }), engine);
      const card = ((r.json as Json).data as Json[])[0];
      assert.equal(card.id, "mock-model");
      assert.equal(card.max_model_len, engine === "vllm" || engine === "sglang" ? 4096 : undefined, engine);
    }
  });

  it("/health: llama.cpp's JSON, empty 200 elsewhere; 503 during --ready-delay-s", async () => {
    const ll = await call({ engine: "llamacpp" }, "GET", "/health");
    assert.equal(ll.status, 200);
    assert.deepEqual(ll.json, JSON.parse(fixture("llamacpp/health.json")));
    const v = await call({ engine: "vllm" }, "GET", "/health");
    assert.deepEqual([v.status, v.text], [200, ""]);
    const loading = await call({ engine: "llamacpp", readyDelayS: 30 }, "GET", "/health");
    assert.equal(loading.status, 503);
    assert.deepEqual(loading.json, JSON.parse(fixture("llamacpp/error-loading.json")));
    assert.equal((await call({ engine: "sglang", readyDelayS: 30 }, "GET", "/health")).status, 503);
  });
});

describe("router view", () => {
  it("/ready is 503 until --ready-delay-s passes, then 200 {ready: true}", async () => {
    const mock = createMock({ readyDelayS: 0.15 });
    const get = async (p: string) => {
      const r = await mock.fetch(new Request(`http://mock${p}`));
      return { status: r.status, json: await r.json() };
    };
    assert.deepEqual(await get("/ready"), { status: 503, json: { ready: false } });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await get("/ready"), { status: 200, json: { ready: true } });
    assert.deepEqual(await get("/state"), { status: 200, json: { admission: 0, resident: 0 } });
    mock.close();
  });
});

describe("metrics", () => {
  const get = (opts: Partial<MockOptions>, path: string) => call(opts, "GET", path);

  it("each engine's path and real running/waiting names", async () => {
    const names: Record<string, [string, string, string]> = {
      vllm: ["/metrics", "vllm:num_requests_running", "vllm:num_requests_waiting"],
      sglang: ["/metrics", "sglang:num_running_reqs", "sglang:num_queue_reqs"],
      llamacpp: ["/metrics", "llamacpp:requests_processing", "llamacpp:requests_deferred"],
      trtllm: ["/prometheus/metrics", "trtllm_num_requests_running", "trtllm_num_requests_waiting"],
    };
    for (const [engine, [path, running, waiting]] of Object.entries(names)) {
      const r = await get({ engine: engine as EngineName }, path);
      assert.equal(r.status, 200, engine);
      assert.match(r.headers.get("content-type") ?? "", /^text\/plain/);
      assert.match(r.text, new RegExp(`^# TYPE ${running} gauge$`, "m"));
      assert.match(r.text, new RegExp(`^${running}(\\{[^}]*\\})? 0(\\.0)?$`, "m"));
      assert.match(r.text, new RegExp(`^${waiting}(\\{[^}]*\\})? 0(\\.0)?$`, "m"));
      // Every family the transcript has for these gauges keeps the same labels.
      const want = fixture(`${engine}/metrics.txt`).split("\n").find((l) =>
        l.startsWith(running + "{") || l.startsWith(running + " ")
      )!;
      const labels = (s: string) =>
        (s.match(/\{([^}]*)\}/)?.[1] ?? "").split(",").map((kv) => kv.split("=")[0]).filter(Boolean);
      const line = r.text.split("\n").find((l) =>
        l.startsWith(running + "{") || l.startsWith(running + " ")
      )!;
      assert.deepEqual(labels(line), labels(want), `${engine} labels`);
    }
    assert.equal((await get({ engine: "openai" }, "/metrics")).status, 404);
  });

  it("--metrics off: llama.cpp 501, SGLang 404, trtllm has no Prometheus path and an empty JSON list; vLLM always serves", async () => {
    const ll = await get({ engine: "llamacpp", metrics: false }, "/metrics");
    assert.equal(ll.status, 501);
    assert.deepEqual(ll.json, JSON.parse(fixture("llamacpp/error-metrics-disabled.json")));
    assert.equal((await get({ engine: "sglang", metrics: false }, "/metrics")).status, 404);
    assert.equal((await get({ engine: "trtllm", metrics: false }, "/prometheus/metrics")).status, 404);
    const t = await get({ engine: "trtllm", metrics: false }, "/metrics");
    assert.deepEqual([t.status, t.json], [200, []]);
    assert.equal((await get({ engine: "vllm", metrics: false }, "/metrics")).status, 200);
  });

  it("counters follow traffic; vLLM exports the spec-decode counters; trtllm's JSON queue drains on read", async () => {
    const mock = createMock({ engine: "vllm", ttftMs: 0, tpotMs: 0, specDepth: 3, specAccept: 0.6, seed: 4 });
    const res = await mock.fetch(
      new Request("http://mock/v1/completions", {
        method: "POST",
        body: JSON.stringify({ prompt: "a b c", max_tokens: 40 }),
      }),
    );
    await res.text();
    const text = await (await mock.fetch(new Request("http://mock/metrics"))).text();
    const value = (name: string) => Number(text.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m"))?.[1]);
    assert.equal(value("vllm:prompt_tokens_total"), 3);
    assert.equal(value("vllm:generation_tokens_total"), 40);
    const drafts = value("vllm:spec_decode_num_draft_tokens_total");
    const accepted = value("vllm:spec_decode_num_accepted_tokens_total");
    const steps = value("vllm:spec_decode_num_drafts_total");
    assert.equal(drafts, 3 * steps);
    assert.equal(accepted + steps, 40, "each step yields 1 + accepted tokens");
    assert.ok(accepted > 0 && accepted < drafts);
    mock.close();

    const trt = createMock({ engine: "trtllm", ttftMs: 0, tpotMs: 0 });
    await (await trt.fetch(
      new Request("http://mock/v1/completions", {
        method: "POST",
        body: JSON.stringify({ model: "m", prompt: "x", max_tokens: 3 }),
      }),
    )).text();
    const first = await (await trt.fetch(new Request("http://mock/metrics"))).json() as Json[];
    assert.equal(first.length, 3);
    const want = JSON.parse(fixture("trtllm/metrics-iteration-stats.json"))[0];
    assert.deepEqual(Object.keys(first[0]).sort(), Object.keys(want).sort());
    assert.deepEqual(await (await trt.fetch(new Request("http://mock/metrics"))).json(), []);
    trt.close();
  });
});

describe("KV in use and the iteration queue under many streams", () => {
  it("KV in use is what the streams in flight reserve, as they start, end and are cancelled", async () => {
    const mock = createMock({ engine: "sglang", ttftMs: 60_000, tpotMs: 0 });
    const used = async () => {
      const text = await (await mock.fetch(new Request("http://mock/metrics"))).text();
      return Number(text.match(/^sglang:num_used_tokens\{[^}]*\} (\S+)$/m)?.[1]);
    };
    try {
      assert.equal(await used(), 0);
      // Chat prompt tokens: words + 4 per message + 3; the reservation adds max_tokens.
      const open = (words: number, maxTokens: number) => {
        const ac = new AbortController();
        const body = JSON.stringify({ model: "m", stream: true, max_tokens: maxTokens, messages: [{ role: "user", content: "w ".repeat(words) }] });
        const res = mock.fetch(new Request("http://mock/v1/chat/completions", { method: "POST", body, signal: ac.signal }));
        return { ac, res, kv: words + 4 + 3 + maxTokens };
      };
      const streams = [open(5, 10), open(20, 100), open(1, 7)];
      const readers = await Promise.all(streams.map(async (s) => (await s.res).body!.getReader()));
      await Promise.all(readers.map((r) => r.read()));
      assert.equal(await used(), streams.reduce((a, s) => a + s.kv, 0));
      await readers[1].cancel();
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await used(), streams[0].kv + streams[2].kv, "a cancelled stream frees its reservation");
      mock.close();
      await Promise.all([readers[0], readers[2]].map(async (r) => {
        while (!(await r.read().catch(() => ({ done: true }))).done) { /* to its end */ }
      }));
      assert.equal(await used(), 0, "every stream ended: nothing reserved");
    } finally {
      mock.close();
    }
  });

  it("trtllm's queue keeps the newest 1,000 iterations, numbered in order, past any length", async () => {
    const trt = createMock({ engine: "trtllm", ttftMs: 0, tpotMs: 0 });
    let total = 0;
    try {
      // 2,000 drains right as the queue has dropped its oldest in bulk.
      for (const n of [1500, 2000, 2600]) {
        await (await trt.fetch(new Request("http://mock/v1/completions", { method: "POST", body: JSON.stringify({ model: "m", prompt: "x", max_tokens: n, ignore_eos: true }) }))).text();
        const q = await (await trt.fetch(new Request("http://mock/metrics"))).json() as { iter: number }[];
        assert.equal(q.length, 1000);
        for (let k = 1; k < q.length; k++) assert.equal(q[k].iter, q[k - 1].iter + 1);
        total += n;
        assert.equal(q.at(-1)!.iter, total, "the newest is the last iteration");
      }
    } finally {
      trt.close();
    }
  });
});

describe("whole answers (stream: false)", () => {
  it("every personality answers one JSON body with the text and usage", async () => {
    for (const engine of ENGINES) {
      const r = await call(
        { engine },
        "POST",
        "/v1/chat/completions",
        chat({ max_tokens: 6, stream: false }),
      );
      assert.equal(r.status, 200, engine);
      const j = r.json as {
        object: string;
        choices: { message: { content: string }; finish_reason: string }[];
        usage: { completion_tokens: number; prompt_tokens: number };
      };
      assert.equal(j.object, "chat.completion", engine);
      assert.equal(j.choices[0].message.content.trim().split(/\s+/).length, 6, engine);
      assert.equal(j.choices[0].finish_reason, "length");
      assert.deepEqual([j.usage.completion_tokens, j.usage.prompt_tokens], [6, 8], engine);
      const c = await call({ engine }, "POST", "/v1/completions", {
        model: "mock-model",
        prompt: "one two three",
        max_tokens: 2,
      });
      const cj = c.json as { object: string; choices: { text: string }[]; usage: { prompt_tokens: number } };
      assert.deepEqual(
        [c.status, cj.object, cj.choices[0].text.trim().split(/\s+/).length, cj.usage.prompt_tokens],
        [200, "text_completion", 2, 3],
        engine,
      );
    }
  });

  it("waits until the last token is due", async () => {
    const t0 = performance.now();
    const r = await call({ ttftMs: 60, tpotMs: 10 }, "POST", "/v1/chat/completions", chat({ max_tokens: 5 }));
    const took = performance.now() - t0;
    assert.equal(r.status, 200);
    assert.ok(took >= 100 && took < 400, `took ${took} ms, the last token is due at 100 ms`);
  });
});

describe("a client that goes away", () => {
  it("frees its slot at once: the next request is admitted and the request log counts what was sent", async () => {
    const lines: string[] = [];
    const mock = createMock({ maxBatch: 1, stepMs: 5, requestLog: true }, {
      requestLog: (l) => lines.push(l),
    });
    const send = (i: number) =>
      mock.fetch(
        new Request("http://mock/v1/chat/completions", {
          method: "POST",
          body: JSON.stringify({
            ...chat({ max_tokens: 400 }),
            stream: true,
            messages: [{ role: "user", content: `bye ${i}` }],
          }),
        }),
      );
    const first = await send(1);
    const second = send(2);
    const reader = first.body!.getReader();
    await reader.read();
    await reader.read();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(mock.stats(), { running: 1, waiting: 1, served: 0 });
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(mock.stats().served, 1);
    assert.equal(mock.stats().running, 1, "the waiting request took the slot");
    assert.match(
      lines[0],
      /^ik-request serial=1 prompt=9 cached=0 gen=([1-9]\d?) acc=0 prop=0 first_ms=\d+\.\d{3} last_ms=\d+\.\d{3} recv_wall_ms=\d+\.\d{3}$/,
    );
    const res = await second;
    await res.body!.cancel();
    mock.close();
    assert.deepEqual(mock.stats(), { running: 0, waiting: 0, served: 2 });
  });
});
