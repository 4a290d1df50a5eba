/**
 * MOCK.md statements checked one by one, in-process (no sockets, no timing): exact-length fields
 * on the wire per personality, the "too long" boundary and words per engine, completions'
 * default max_tokens, running/waiting at scrape time on every engine's metrics path, and the
 * speculative-decoding bookkeeping (vLLM counters, request log) against what was streamed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMock, type EngineName, ENGINES, type MockOptions } from "../../lib/mock/mod.ts";
import { fixture, splitSse, type SseEvent } from "./_helpers.ts";

type Json = Record<string, unknown>;

async function post(
  mock: ReturnType<typeof createMock>,
  path: string,
  body: Json,
): Promise<{ status: number; text: string; json: Json | undefined }> {
  const res = await mock.fetch(
    new Request(`http://mock${path}`, { method: "POST", body: JSON.stringify(body) }),
  );
  const text = await res.text();
  let json: Json | undefined;
  try {
    json = JSON.parse(text);
  } catch { /* a stream */ }
  return { status: res.status, text, json };
}

async function once(
  opts: Partial<MockOptions>,
  path: string,
  body: Json,
): Promise<{ status: number; text: string; json: Json | undefined }> {
  const mock = createMock({ ttftMs: 0, tpotMs: 0, ...opts });
  try {
    return await post(mock, path, body);
  } finally {
    mock.close();
  }
}

function choice(e: SseEvent): Json | undefined {
  return ((e.json as Json | undefined)?.choices as Json[] | undefined)?.[0];
}

/** Text, finish_reason and (when sent) usage of a streamed answer. */
function summary(events: SseEvent[]) {
  let text = "";
  let finish: unknown = null;
  let usage: Json | undefined;
  let matched: unknown = undefined;
  for (const e of events) {
    const c = choice(e);
    text += ((c?.delta as Json | undefined)?.content as string | undefined) ??
      (c?.text as string | undefined) ?? "";
    if (c?.finish_reason) {
      finish = c.finish_reason;
      matched = c.matched_stop;
    }
    const u = (e.json as Json | undefined)?.usage as Json | undefined;
    if (u) usage = u;
  }
  return { words: text.trim() === "" ? 0 : text.trim().split(/\s+/).length, finish, usage, matched };
}

const MESSAGES = [{ role: "user", content: "exact length please" }];

describe("--eos-after on the wire: exact-length fields each personality honours", () => {
  // vllm/sglang/trtllm honour ignore_eos and min_tokens, llamacpp only ignore_eos, openai none.
  const honours: Record<EngineName, { ignore_eos: boolean; min_tokens: boolean }> = {
    vllm: { ignore_eos: true, min_tokens: true },
    sglang: { ignore_eos: true, min_tokens: true },
    trtllm: { ignore_eos: true, min_tokens: true },
    llamacpp: { ignore_eos: true, min_tokens: false },
    openai: { ignore_eos: false, min_tokens: false },
  };
  for (const engine of ENGINES) {
    it(engine, async () => {
      const cases: [string, Json][] = [
        ["none", {}],
        ["ignore_eos", { ignore_eos: true }],
        ["min_tokens", { min_tokens: 10 }],
      ];
      for (const [name, extra] of cases) {
        for (const kind of ["chat", "completions"] as const) {
          const body = {
            model: "mock-model",
            ...(kind === "chat" ? { messages: MESSAGES } : { prompt: "exact length please" }),
            max_tokens: 10,
            stream: true,
            stream_options: { include_usage: true },
            ...extra,
          };
          const r = await once(
            { engine, eosAfter: 3 },
            kind === "chat" ? "/v1/chat/completions" : "/v1/completions",
            body,
          );
          assert.equal(r.status, 200, `${engine} ${kind} ${name}: ${r.text.slice(0, 200)}`);
          const s = summary(splitSse(r.text));
          const exact = name !== "none" && honours[engine][name as "ignore_eos" | "min_tokens"];
          const want = exact ? [10, "length"] : [3, "stop"];
          assert.deepEqual([s.words, s.finish], want, `${engine} ${kind} ${name}`);
          assert.equal(
            s.usage?.completion_tokens,
            want[0],
            `${engine} ${kind} ${name}: usage = tokens streamed`,
          );
          if (engine === "sglang") {
            // matched_stop: the EOS id for a natural stop, null for a length stop.
            assert.equal(s.matched === null, want[1] === "length", `${engine} ${kind} ${name} matched_stop`);
          }
        }
      }
    });
  }
});

describe("--max-model-len: the personality's 'too long' error", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

  it("the boundary is prompt + max_tokens > max-model-len, on every personality and both endpoints", async () => {
    for (const engine of ENGINES) {
      for (const kind of ["chat", "completions"] as const) {
        // chat: 13 + 4 + 3 = 20 prompt tokens; completions: 20.
        const base = kind === "chat"
          ? { model: "mock-model", messages: [{ role: "user", content: words(13) }] }
          : { model: "mock-model", prompt: words(20) };
        const path = kind === "chat" ? "/v1/chat/completions" : "/v1/completions";
        const fits = await once({ engine, maxModelLen: 30 }, path, { ...base, max_tokens: 10 });
        assert.equal(fits.status, 200, `${engine} ${kind}: 20 + 10 = 30 fits`);
        const over = await once({ engine, maxModelLen: 30 }, path, { ...base, max_tokens: 11 });
        assert.equal(over.status, 400, `${engine} ${kind}: 20 + 11 > 30`);
      }
    }
  });

  it("vLLM: a prompt that fills the context is refused for its input tokens, whatever max_tokens says", async () => {
    const r = await once({ engine: "vllm", maxModelLen: 10 }, "/v1/chat/completions", {
      model: "mock-model",
      messages: [{ role: "user", content: "a b c" }], // 3 + 4 + 3 = 10 tokens
      max_tokens: 1,
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, {
      error: {
        message:
          "This model's maximum context length is 10 tokens. However, your request has 10 input tokens. Please reduce the length of the input messages.",
        type: "BadRequestError",
        param: "input_tokens",
        code: 400,
      },
    });
  });

  it("trtllm: prompt + max_tokens over max_seq_len in the words of llmapi's _check_arguments", async () => {
    const r = await once({ engine: "trtllm", maxModelLen: 20 }, "/v1/chat/completions", {
      model: "mock-model",
      messages: [{ role: "user", content: "a b c" }],
      max_tokens: 20,
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, {
      object: "error",
      message:
        "The sum of prompt length (10.0) and query length (0) max_tokens (20) should not exceed max_seq_len (20)",
      type: "BadRequestError",
      param: null,
      code: 400,
    });
  });
});

describe("/v1/completions without max_tokens", () => {
  it("vLLM, SGLang and OpenAI default max_tokens to 16 (a length stop); llama.cpp and trtllm have no default", async () => {
    const body = { model: "mock-model", prompt: "no limit given", stream: false };
    for (const engine of ENGINES) {
      const r = await once({ engine, eosAfter: 40 }, "/v1/completions", body);
      assert.equal(r.status, 200, engine);
      const c = (r.json!.choices as Json[])[0];
      const usage = r.json!.usage as Json;
      const defaults = engine === "vllm" || engine === "sglang" || engine === "openai";
      assert.deepEqual(
        [usage.completion_tokens, c.finish_reason],
        defaults ? [16, "length"] : [40, "stop"],
        engine,
      );
    }
    // The default counts against the context as an explicit max_tokens would (vLLM's own check).
    const tight = await once({ engine: "vllm", maxModelLen: 18 }, "/v1/completions", {
      model: "mock-model",
      prompt: "three prompt tokens",
    });
    assert.equal(tight.status, 400);
    assert.equal((tight.json!.error as Json).param, "max_tokens");
  });
});

describe("/metrics: running = batch, waiting = queue, at the moment of the scrape", () => {
  const paths: Record<string, [string, string, string]> = {
    vllm: ["/metrics", "vllm:num_requests_running", "vllm:num_requests_waiting"],
    sglang: ["/metrics", "sglang:num_running_reqs", "sglang:num_queue_reqs"],
    llamacpp: ["/metrics", "llamacpp:requests_processing", "llamacpp:requests_deferred"],
    trtllm: ["/prometheus/metrics", "trtllm_num_requests_running", "trtllm_num_requests_waiting"],
  };
  for (const [engine, [path, running, waiting]] of Object.entries(paths)) {
    it(engine, async () => {
      const mock = createMock({ engine: engine as EngineName, maxBatch: 2, stepMs: 10 });
      try {
        const gauges = async () => {
          const text = await (await mock.fetch(new Request(`http://mock${path}`))).text();
          const value = (name: string) =>
            Number(text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m"))?.[1]);
          const state = await (await mock.fetch(new Request("http://mock/state"))).json();
          return [value(running), value(waiting), state.resident, state.admission];
        };
        assert.deepEqual(await gauges(), [0, 0, 0, 0]);
        const responses = await Promise.all([0, 1, 2, 3, 4].map((i) =>
          mock.fetch(
            new Request("http://mock/v1/chat/completions", {
              method: "POST",
              body: JSON.stringify({
                model: "mock-model",
                messages: [{ role: "user", content: `scrape ${i}` }],
                max_tokens: 50,
                stream: true,
              }),
            }),
          )
        ));
        await new Promise((r) => setTimeout(r, 25));
        assert.deepEqual(await gauges(), [2, 3, 2, 3], "two in the batch, three queued");
        if (engine === "trtllm") {
          // The JSON iteration stats say the same, and reading them drains the queue.
          const iters = await (await mock.fetch(new Request("http://mock/metrics"))).json() as Json[];
          assert.ok(iters.length >= 1);
          assert.deepEqual([iters.at(-1)!.numActiveRequests, iters.at(-1)!.numQueuedRequests], [2, 3]);
          assert.deepEqual(await (await mock.fetch(new Request("http://mock/metrics"))).json(), []);
        }
        // Clients that leave free their slots and their places in the queue at once.
        await Promise.all(responses.map((r) => r.body!.cancel()));
        assert.deepEqual(await gauges(), [0, 0, 0, 0]);
      } finally {
        mock.close();
      }
    });
  }
});

describe("speculative decoding: counters and the request log agree with the stream", () => {
  // Only the timing model: --spec-* with --max-batch is a usage error (the simulator replaces it).
  for (const sim of [false]) {
    it("timing model", async () => {
      const lines: string[] = [];
      const opts: Partial<MockOptions> = {
        engine: "vllm",
        ttftMs: 0,
        tpotMs: 0,
        specDepth: 3,
        specAccept: 0.6,
        seed: 5,
        requestLog: true,
        ...(sim ? { maxBatch: 4, stepMs: 1 } : {}),
      };
      const mock = createMock(opts, { requestLog: (l) => lines.push(l) });
      try {
        const sizes: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await post(mock, "/v1/chat/completions", {
            model: "mock-model",
            messages: [{ role: "user", content: `drafts ${i}` }],
            max_tokens: 30,
            stream: true,
            return_token_ids: true,
          });
          const events = splitSse(r.text).map((e) =>
            (choice(e)?.token_ids as number[] | null | undefined)?.length ?? 0
          )
            .filter((n) => n > 0);
          assert.equal(events.reduce((a, b) => a + b, 0), 30);
          assert.ok(events.every((n) => n >= 1 && n <= 4), String(events));
          sizes.push(...events);
          // The request log: gen = tokens streamed, acc = Σ(tokens per event - 1), prop = depth × events.
          const acc = events.reduce((s, n) => s + n - 1, 0);
          assert.match(
            lines[i],
            new RegExp(
              `^ik-request serial=${i + 1} prompt=9 cached=0 gen=30 acc=${acc} prop=${3 * events.length} `,
            ),
          );
        }
        const text = await (await mock.fetch(new Request("http://mock/metrics"))).text();
        const value = (name: string) =>
          Number(text.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m"))?.[1]);
        assert.equal(value("vllm:spec_decode_num_drafts_total"), sizes.length);
        assert.equal(value("vllm:spec_decode_num_draft_tokens_total"), 3 * sizes.length);
        assert.equal(
          value("vllm:spec_decode_num_accepted_tokens_total"),
          sizes.reduce((s, n) => s + n - 1, 0),
        );
        assert.equal(value("vllm:generation_tokens_total"), 90);
        assert.ok(sizes.some((n) => n > 1), "some drafts accepted");
      } finally {
        mock.close();
      }
    });
  }
});

describe("whole answers (stream: false) per personality", () => {
  const ids: Record<EngineName, { chat: RegExp; completions: RegExp }> = {
    vllm: { chat: /^chatcmpl-[0-9a-f]{32}$/, completions: /^cmpl-[0-9a-f]{32}$/ },
    sglang: { chat: /^[0-9a-f]{32}$/, completions: /^[0-9a-f]{32}$/ },
    llamacpp: { chat: /^chatcmpl-[A-Za-z0-9]{32}$/, completions: /^chatcmpl-[A-Za-z0-9]{32}$/ },
    trtllm: { chat: /^chatcmpl-[0-9a-f]{32}$/, completions: /^cmpl-[0-9a-f]{32}$/ },
    openai: { chat: /^chatcmpl-/, completions: /^cmpl-/ },
  };
  for (const engine of ENGINES) {
    it(`${engine}: one chat.completion / text_completion with the streamed text and usage`, async () => {
      for (const kind of ["chat", "completions"] as const) {
        const path = kind === "chat" ? "/v1/chat/completions" : "/v1/completions";
        const base = {
          model: "mock-model",
          ...(kind === "chat" ? { messages: MESSAGES } : { prompt: "exact length please" }),
          max_tokens: 7,
        };
        const mock = createMock({ engine, ttftMs: 0, tpotMs: 0, seed: 3 });
        try {
          const whole = await post(mock, path, { ...base, stream: false });
          const streamed = await post(mock, path, { ...base, stream: true });
          assert.equal(whole.status, 200);
          const j = whole.json!;
          assert.equal(j.object, kind === "chat" ? "chat.completion" : "text_completion", engine);
          assert.match(String(j.id), ids[engine][kind], `${engine} ${kind} id`);
          assert.equal(j.model, "mock-model");
          const c = (j.choices as Json[])[0];
          const text = kind === "chat" ? (c.message as Json).content : c.text;
          assert.equal(c.finish_reason, "length");
          // The same prompt and seed give the same words, streamed or whole.
          let streamedText = "";
          for (const e of splitSse(streamed.text)) {
            const sc = choice(e);
            streamedText += ((sc?.delta as Json | undefined)?.content as string | undefined) ??
              (sc?.text as string | undefined) ?? "";
          }
          assert.equal(text, streamedText, `${engine} ${kind}: whole text = streamed text`);
          const promptTokens = kind === "chat" ? 3 + 4 + 3 : 3;
          const u = j.usage as Json;
          assert.deepEqual(
            [u.prompt_tokens, u.completion_tokens, u.total_tokens],
            [promptTokens, 7, promptTokens + 7],
            `${engine} ${kind} usage`,
          );
        } finally {
          mock.close();
        }
      }
    });
  }
});

describe("/health per personality", () => {
  it('200 when ready (llama.cpp {"status":"ok"}, an empty body elsewhere); 503 during --ready-delay-s', async () => {
    for (const engine of ENGINES) {
      for (const path of engine === "llamacpp" ? ["/health", "/v1/health"] : ["/health"]) {
        const ready = createMock({ engine });
        const loading = createMock({ engine, readyDelayS: 30 });
        try {
          const ok = await ready.fetch(new Request(`http://mock${path}`));
          const no = await loading.fetch(new Request(`http://mock${path}`));
          const [okBody, noBody] = [await ok.text(), await no.text()];
          assert.equal(ok.status, 200, `${engine} ${path}`);
          assert.equal(no.status, 503, `${engine} ${path}`);
          if (engine === "llamacpp") {
            assert.deepEqual(JSON.parse(okBody), { status: "ok" });
            assert.deepEqual(JSON.parse(noBody), {
              error: { code: 503, message: "Loading model", type: "unavailable_error" },
            });
          } else {
            assert.deepEqual([okBody, noBody], ["", ""], engine);
          }
        } finally {
          ready.close();
          loading.close();
        }
      }
    }
  });
});

describe("metric families", () => {
  it("every engine family of the transcript is exported (bar _created, process and HTTP collectors), with its type", async () => {
    const paths: Record<string, string> = {
      vllm: "/metrics",
      sglang: "/metrics",
      llamacpp: "/metrics",
      trtllm: "/prometheus/metrics",
    };
    const families = (text: string) =>
      new Set(
        [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => `${x[1]} ${x[2]}`)
          .filter((f) => !/_created gauge$|^(python|process|http)_/.test(f)),
      );
    for (const [engine, path] of Object.entries(paths)) {
      const mock = createMock({ engine: engine as EngineName, ttftMs: 0, tpotMs: 0 });
      try {
        const r = await post(mock, "/v1/completions", {
          model: "mock-model",
          prompt: "one two three four",
          max_tokens: 5,
        });
        assert.equal(r.status, 200);
        const text = await (await mock.fetch(new Request(`http://mock${path}`))).text();
        const want = families(fixture(`${engine}/metrics.txt`));
        const got = families(text);
        assert.deepEqual([...want].filter((f) => !got.has(f)), [], `${engine}: families missing`);
        if (engine === "vllm") {
          const v = (name: string) => Number(text.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m"))?.[1]);
          assert.equal(v("vllm:request_prompt_tokens_sum"), 4);
          assert.equal(v("vllm:request_generation_tokens_sum"), 5);
          assert.equal(v("vllm:request_generation_tokens_count"), 1);
          assert.equal(v("vllm:request_decode_time_seconds_count"), 1);
        }
      } finally {
        mock.close();
      }
    }
  });
});
