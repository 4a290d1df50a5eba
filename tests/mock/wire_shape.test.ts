/**
 * Wire shape per personality against the engine transcripts (tests/testdata/engines): the order
 * of event kinds, the key set of every kind of event, the first chunk, and where finish_reason
 * and usage arrive. Content is not compared (the mock generates its own words).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMock, type EngineName } from "../../lib/mock/mod.ts";
import { fixture, splitSse, type SseEvent } from "./_helpers.ts";

type Json = Record<string, unknown>;

/** Every key path in a JSON value; array elements merge under `[]`. */
function keyPaths(v: unknown, prefix = ""): string[] {
  if (Array.isArray(v)) return [...new Set(v.flatMap((x) => keyPaths(x, prefix + "[]")))];
  if (v && typeof v === "object") {
    return Object.entries(v).flatMap(([k, x]) => [`${prefix}.${k}`, ...keyPaths(x, `${prefix}.${k}`)]);
  }
  return [];
}

function choice(e: SseEvent): Json | undefined {
  return ((e.json as Json)?.choices as Json[] | undefined)?.[0];
}

/** role, token, finish, usage, error, done, or malformed. */
function kindOf(e: SseEvent): string {
  if (e.data === "[DONE]") return "done";
  const j = e.json as Json | undefined;
  if (!j) return "malformed";
  if ("error" in j) return "error";
  const c = choice(e);
  if (!c) return "usage";
  if (c.finish_reason) return "finish";
  if ((c.delta as Json | undefined)?.role) return "role";
  return "token";
}

function shape(events: SseEvent[]) {
  const kinds = events.map(kindOf);
  const sequence = kinds.filter((k, i) => i === 0 || k !== kinds[i - 1]);
  const keys: Record<string, string[]> = {};
  events.forEach((e, i) => {
    keys[kinds[i]] = [...new Set([...(keys[kinds[i]] ?? []), ...keyPaths(e.json)])].sort();
  });
  return { sequence, keys };
}

interface Case {
  fixture: string;
  engine: EngineName;
  kind: "chat" | "completions";
  body: Json;
  /** Event kinds whose key sets are not compared (the transcript omits a field the source says is there). */
  skipKeys?: string[];
}

const USAGE = { stream_options: { include_usage: true } };
const CASES: Case[] = [
  { fixture: "vllm/chat-stream.sse", engine: "vllm", kind: "chat", body: USAGE },
  {
    fixture: "vllm/chat-stream-return-token-ids.sse",
    engine: "vllm",
    kind: "chat",
    body: { ...USAGE, return_token_ids: true },
  },
  { fixture: "vllm/completions-stream.sse", engine: "vllm", kind: "completions", body: USAGE },
  { fixture: "sglang/chat-stream.sse", engine: "sglang", kind: "chat", body: USAGE },
  { fixture: "sglang/completions-stream.sse", engine: "sglang", kind: "completions", body: USAGE },
  { fixture: "llamacpp/chat-stream.sse", engine: "llamacpp", kind: "chat", body: USAGE },
  // wire-formats.md §3.1: timings go on the last event, which this transcript leaves out.
  {
    fixture: "llamacpp/chat-stream-logprobs.sse",
    engine: "llamacpp",
    kind: "chat",
    body: { logprobs: true, top_logprobs: 2 },
    skipKeys: ["finish"],
  },
  { fixture: "llamacpp/completions-stream.sse", engine: "llamacpp", kind: "completions", body: {} },
  { fixture: "trtllm/chat-stream.sse", engine: "trtllm", kind: "chat", body: USAGE },
  { fixture: "trtllm/chat-stream-no-usage.sse", engine: "trtllm", kind: "chat", body: {} },
  { fixture: "trtllm/completions-stream.sse", engine: "trtllm", kind: "completions", body: USAGE },
  { fixture: "openai/chat-stream.sse", engine: "openai", kind: "chat", body: USAGE },
  { fixture: "openai/completions-stream.sse", engine: "openai", kind: "completions", body: USAGE },
];

/** Whether the finish_reason rides on the chunk with the last token (else a separate chunk). */
const FINISH_ON_TOKEN: Record<EngineName, Record<"chat" | "completions", boolean>> = {
  vllm: { chat: true, completions: true },
  sglang: { chat: false, completions: true },
  llamacpp: { chat: false, completions: false },
  trtllm: { chat: true, completions: true },
  openai: { chat: false, completions: false },
};

async function stream(c: Case, maxTokens = 5): Promise<{ raw: string; events: SseEvent[] }> {
  const mock = createMock({ engine: c.engine, ttftMs: 0, tpotMs: 0 });
  try {
    const base = c.kind === "chat"
      ? { messages: [{ role: "user", content: "Say hello to the shape test" }] }
      : { prompt: "The capital of France is" };
    const res = await mock.fetch(
      new Request(`http://mock/v1/${c.kind === "chat" ? "chat/completions" : "completions"}`, {
        method: "POST",
        body: JSON.stringify({
          model: "mock-model",
          ...base,
          max_tokens: maxTokens,
          stream: true,
          ...c.body,
        }),
      }),
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const raw = await res.text();
    return { raw, events: splitSse(raw) };
  } finally {
    mock.close();
  }
}

describe("stream shape matches each engine's transcript", () => {
  for (const c of CASES) {
    it(`${c.fixture}`, async () => {
      const want = shape(splitSse(fixture(c.fixture)));
      const { raw, events } = await stream(c);
      const got = shape(events);
      assert.deepEqual(got.sequence, want.sequence, "order of event kinds");
      for (const once of ["role", "finish", "usage", "done"]) {
        assert.ok(events.filter((e) => kindOf(e) === once).length <= 1, `at most one ${once} event`);
      }
      const bearing = events.filter((e) => {
        const t = (choice(e)?.delta as Json | undefined)?.content ?? choice(e)?.text;
        return typeof t === "string" && t !== "";
      });
      assert.equal(bearing.length, 5, "one token-bearing event per token by default");
      for (const kind of Object.keys(want.keys)) {
        if (c.skipKeys?.includes(kind)) continue;
        assert.deepEqual(got.keys[kind], want.keys[kind], `key set of ${kind} events`);
      }
      const wantFirst = splitSse(fixture(c.fixture))[0];
      if (kindOf(wantFirst) === "role") {
        assert.deepEqual(choice(events[0])?.delta, choice(wantFirst)?.delta, "role chunk delta");
      }
      // The finish chunk carries the last token's text, or is a chunk of its own.
      const finish = events.find((e) => kindOf(e) === "finish")!;
      const text = (choice(finish)?.delta as Json | undefined)?.content ?? choice(finish)?.text ?? "";
      assert.equal(
        text !== "",
        FINISH_ON_TOKEN[c.engine][c.kind],
        `finish_reason on the last token's chunk: ${FINISH_ON_TOKEN[c.engine][c.kind]}`,
      );
      // Usage is right and agrees with the tokens streamed.
      const usageEvents = events.filter((e) => (e.json as Json | undefined)?.usage);
      if (c.body.stream_options || (c.engine === "llamacpp" && c.kind === "completions")) {
        const last = (usageEvents.at(-1)!.json as { usage: Json }).usage;
        assert.equal(last.completion_tokens, 5);
        assert.equal(last.total_tokens, (last.prompt_tokens as number) + 5);
      } else {
        assert.equal(usageEvents.length, 0, "no usage unless asked");
      }
      if (c.engine === "trtllm" && c.kind === "chat") {
        assert.match(raw, /^data: \{[^\n]*\} \n\ndata: /, "trtllm's first event ends with ' \\n\\n'");
      }
      assert.equal(events.at(-1)?.data, "[DONE]");
    });
  }
});

describe("usage placement quirks", () => {
  it("vLLM: any stream_options object turns usage on; include_usage:false turns it off", async () => {
    const on = await stream({ fixture: "", engine: "vllm", kind: "chat", body: { stream_options: {} } });
    assert.equal(on.events.filter((e) => kindOf(e) === "usage").length, 1);
    const off = await stream({
      fixture: "",
      engine: "vllm",
      kind: "chat",
      body: { stream_options: { include_usage: false } },
    });
    assert.equal(off.events.filter((e) => kindOf(e) === "usage").length, 0);
  });

  it("SGLang and OpenAI need include_usage: true; an empty stream_options is not enough", async () => {
    for (const engine of ["sglang", "openai"] as const) {
      const r = await stream({ fixture: "", engine, kind: "chat", body: { stream_options: {} } });
      assert.equal(r.events.filter((e) => kindOf(e) === "usage").length, 0, engine);
    }
  });

  it("trtllm: usage on every chat chunk (counting up) plus a final choices:[] chunk; ids differ per chunk", async () => {
    const r = await stream({ fixture: "", engine: "trtllm", kind: "chat", body: USAGE }, 4);
    const counts = r.events.filter((e) => e.json).map((e) =>
      ((e.json as Json).usage as Json).completion_tokens
    );
    assert.deepEqual(counts, [0, 1, 2, 3, 4, 4]);
    const ids = r.events.filter((e) => e.json).map((e) => (e.json as Json).id);
    assert.equal(new Set(ids).size, ids.length);
  });

  it("llama.cpp /v1/completions always ends with usage; chat only with include_usage", async () => {
    const comp = await stream({ fixture: "", engine: "llamacpp", kind: "completions", body: {} }, 3);
    const final = comp.events.at(-2)!.json as Json;
    assert.deepEqual(final.usage, { completion_tokens: 3, prompt_tokens: 5, total_tokens: 8 });
    assert.ok(final.timings);
  });
});

describe("token ids", () => {
  it("vLLM return_token_ids: prompt_token_ids on the first chunk, delta token_ids on every token chunk", async () => {
    const r = await stream({
      fixture: "",
      engine: "vllm",
      kind: "chat",
      body: { ...USAGE, return_token_ids: true },
    }, 7);
    const first = r.events[0].json as Json;
    const usage = (r.events.at(-2)!.json as { usage: { prompt_tokens: number } }).usage;
    assert.equal((first.prompt_token_ids as number[]).length, usage.prompt_tokens);
    const ids = r.events.filter((e) => ["token", "finish"].includes(kindOf(e))).flatMap((e) =>
      choice(e)!.token_ids as number[]
    );
    assert.equal(ids.length, 7);
    assert.ok(ids.every((id) => id >= 1000 && id < 1064));
  });

  it("vLLM logprobs with return_tokens_as_token_ids name each token token_id:N (chat and completions)", async () => {
    const body = { logprobs: true, top_logprobs: 0, return_tokens_as_token_ids: true };
    const c = await stream({ fixture: "", engine: "vllm", kind: "chat", body }, 5);
    const chatTokens = c.events.filter((e) => ["token", "finish"].includes(kindOf(e)))
      .flatMap((e) => ((choice(e)!.logprobs as Json).content as Json[]).map((x) => x.token));
    assert.equal(chatTokens.length, 5);
    assert.ok(chatTokens.every((t) => /^token_id:10[0-6]\d$/.test(String(t))), String(chatTokens));
    const comp = await stream({
      fixture: "",
      engine: "vllm",
      kind: "completions",
      body: { logprobs: 0, return_tokens_as_token_ids: true },
    }, 4);
    const lps = comp.events.filter((e) => ["token", "finish"].includes(kindOf(e))).map((e) =>
      choice(e)!.logprobs as Json
    );
    assert.deepEqual(lps.map((l) => (l.tokens as string[]).length), [1, 1, 1, 1]);
    assert.deepEqual(Object.keys(lps[0]).sort(), ["text_offset", "token_logprobs", "tokens", "top_logprobs"]);
    assert.ok((lps[3].text_offset as number[])[0] > 0);
    const plain = await stream({ fixture: "", engine: "vllm", kind: "chat", body: {} }, 2);
    assert.ok(plain.events.every((e) => (choice(e)?.logprobs ?? null) === null));
  });

  it("llama.cpp: ids only through logprobs.content[].id", async () => {
    const r = await stream({ fixture: "", engine: "llamacpp", kind: "chat", body: { logprobs: true } }, 4);
    const ids = r.events.filter((e) => kindOf(e) === "token").flatMap((e) =>
      ((choice(e)!.logprobs as Json).content as Json[]).map((x) => x.id)
    );
    assert.equal(ids.length, 4);
    const plain = await stream({ fixture: "", engine: "llamacpp", kind: "chat", body: {} }, 4);
    assert.ok(plain.events.every((e) => !choice(e)?.logprobs));
  });

  it("trtllm completions: token_ids and empty text with detokenize:false", async () => {
    const r = await stream({
      fixture: "",
      engine: "trtllm",
      kind: "completions",
      body: { detokenize: false },
    }, 3);
    const tokens = r.events.filter((e) => ["token", "finish"].includes(kindOf(e)));
    assert.equal(tokens.length, 3);
    for (const e of tokens) {
      assert.equal(choice(e)!.text, "");
      assert.equal((choice(e)!.token_ids as number[]).length, 1);
    }
  });
});
