/**
 * The mock's prefix cache (MOCK.md "Prefix cache", `--prefix-cache-tokens N`): the LRU of
 * 16-token blocks on its own; through the in-process mock, the request log's cached=, TTFT
 * (the mock's own first_ms) shortened by prefill × cached in the timing model and in the
 * simulator's admitted step, the usage fields of each personality, multi-turn reuse and salts;
 * and bad flag values (exit 64). About 3 s.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "@optique/core/parser";
import { IkError } from "../../lib/cli/errors.ts";
import { mockOptionsFromFlags } from "../../lib/commands/mock.ts";
import { mockCommand } from "../../lib/commands/mock_flags.ts";
import { createMock, type Mock, type MockOptions } from "../../lib/mock/mod.ts";
import { resolveMockOptions } from "../../lib/mock/options.ts";
import { BLOCK_TOKENS, blockKeys, PrefixCache } from "../../lib/mock/prefix_cache.ts";
import { promptPieces } from "../../lib/mock/request.ts";
import { chatPromptPieces, chatPromptTokens } from "../../lib/mock/tokens.ts";
import { ikSourceArgv, runArgv } from "../_helpers/ik.ts";
import { splitSse, type SseEvent } from "./_helpers.ts";

/** `n` distinct pseudo-tokens, `tag` making them differ between prompts. */
function words(n: number, tag = "w"): string[] {
  return Array.from({ length: n }, (_, i) => `${tag}${i}`);
}

/** `n` distinct words as text. */
function text(n: number, tag = "w"): string {
  return words(n, tag).join(" ");
}

describe("PrefixCache and blockKeys", () => {
  it("only whole blocks get keys: a 40-token prompt caches 32, a 15-token one nothing", () => {
    assert.equal(BLOCK_TOKENS, 16);
    assert.equal(blockKeys(words(40)).length, 2);
    assert.equal(blockKeys(words(15)).length, 0);
    const cache = new PrefixCache(4096);
    assert.equal(cache.use(blockKeys(words(40))), 0);
    assert.equal(cache.heldTokens, 32);
    assert.equal(cache.use(blockKeys(words(40))), 32);
    assert.equal(cache.use(blockKeys(words(15))), 0);
    // 47 tokens sharing the 40: still the 2 whole blocks, not 40 and not the partial third.
    assert.equal(cache.use(blockKeys([...words(40), ...words(7, "x")])), 32);
  });

  it("a block's key covers its whole prefix: the same 16 tokens after a different start share nothing", () => {
    const a = blockKeys([...words(16, "a"), ...words(16)]);
    const b = blockKeys([...words(16, "b"), ...words(16)]);
    assert.notEqual(a[1], b[1]);
    const c = blockKeys([...words(16, "a"), ...words(16, "c")]);
    assert.equal(a[0], c[0]);
    assert.notEqual(a[1], c[1]);
    // Token boundaries count: "ab c" is not "a bc".
    const split = (s: string) => [...s.split(" "), ...words(14)];
    assert.notEqual(blockKeys(split("ab c"))[0], blockKeys(split("a bc"))[0]);
    const cache = new PrefixCache(4096);
    cache.use(a);
    assert.equal(cache.lookup(b), 0, "block 2 of b equals a's in content, but not in prefix");
  });

  it("the longest prefix of whole blocks held", () => {
    const cache = new PrefixCache(4096);
    cache.use(blockKeys(words(64)));
    assert.equal(cache.lookup(blockKeys([...words(48), ...words(16, "z")])), 48);
    assert.equal(cache.lookup(blockKeys([...words(20), ...words(60, "z")])), 16);
    assert.equal(cache.lookup(blockKeys(words(64))), 64);
    assert.equal(cache.lookup(blockKeys(words(100))), 64);
    assert.equal(cache.lookup(blockKeys(words(64, "z"))), 0);
  });

  it("holds at most N tokens, evicting the least recently used (a prompt's tail before its head)", () => {
    const cache = new PrefixCache(64); // 4 blocks
    const A = blockKeys(words(32, "a"));
    const B = blockKeys(words(32, "b"));
    const C = blockKeys(words(16, "c"));
    const D = blockKeys(words(16, "d"));
    cache.use(A);
    cache.use(B);
    assert.equal(cache.heldTokens, 64);
    cache.use(C); // evicts A's second block, the oldest
    assert.equal(cache.heldTokens, 64);
    assert.deepEqual([A, B, C].map((k) => cache.lookup(k)), [16, 32, 16]);
    cache.use(D); // then A's first
    assert.deepEqual([A, B, C, D].map((k) => cache.lookup(k)), [0, 32, 16, 16]);
    assert.equal(cache.heldTokens, 64);
  });

  it("a hit refreshes: the refreshed prompt outlives one used after it", () => {
    const cache = new PrefixCache(64);
    const A = blockKeys(words(32, "a"));
    const B = blockKeys(words(32, "b"));
    cache.use(A);
    cache.use(B);
    assert.equal(cache.use(A), 32); // A is now the most recent
    cache.use(blockKeys(words(32, "c")));
    assert.equal(cache.lookup(A), 32);
    assert.equal(cache.lookup(B), 0);
  });

  it("a prompt longer than the cache keeps its first blocks", () => {
    const cache = new PrefixCache(32);
    const long = blockKeys(words(80));
    assert.equal(cache.use(long), 0);
    assert.equal(cache.heldTokens, 32);
    assert.equal(cache.use(long), 32);
  });

  it("N = 0 (and N under one block) holds nothing", () => {
    for (const n of [0, 15]) {
      const cache = new PrefixCache(n);
      const k = blockKeys(words(48));
      assert.equal(cache.use(k), 0);
      assert.equal(cache.use(k), 0);
      assert.equal(cache.heldTokens, 0);
    }
  });

  it("the chat prompt's tokens are exactly as many as prompt_tokens counts, overheads included", () => {
    const shapes = [
      [{ role: "user", content: "hello there" }],
      [{ role: "system", content: "  be  brief " }, { role: "user", content: "" }],
      [{
        content: [{ type: "text", text: "part one" }, { type: "image_url" }, { type: "text", text: "two" }],
      }],
      [{ role: "odd role", content: "x" }, { role: "assistant", content: "y z" }],
    ];
    for (const messages of shapes) {
      const pieces = chatPromptPieces(messages);
      assert.equal(pieces.length, chatPromptTokens(messages), JSON.stringify(messages));
      for (const p of pieces) assert.match(p, /^\S+$/);
    }
    // The history's assistant turn begins as the generation prompt does.
    const one = chatPromptPieces([{ role: "user", content: "q" }]);
    const two = chatPromptPieces([{ role: "user", content: "q" }, { role: "assistant", content: "a" }]);
    assert.deepEqual(two.slice(0, one.length), one);
    const ids = promptPieces({ kind: "completions", body: { prompt: [5, 6, 7] } } as never);
    assert.deepEqual(ids, ["5", "6", "7"]);
  });
});

const LINE =
  /^ik-request serial=(\d+) prompt=(\d+) cached=(\d+) gen=\d+ acc=\d+ prop=\d+ first_ms=(-|\d+\.\d{3}) last_ms=/;

interface Logged {
  prompt: number;
  cached: number;
  first: number;
}

function logged(opts: Partial<MockOptions>): { mock: Mock; lines: string[] } {
  const lines: string[] = [];
  return { mock: createMock({ ...opts, requestLog: true }, { requestLog: (l) => lines.push(l) }), lines };
}

function entry(line: string): Logged {
  const m = line.match(LINE);
  assert.ok(m, `not a request-log line: ${line}`);
  return { prompt: +m[2], cached: +m[3], first: Number(m[4]) };
}

type Msg = { role: string; content: string };

async function post(mock: Mock, messages: Msg[], extra: Record<string, unknown>): Promise<Response> {
  const res = await mock.fetch(
    new Request("http://mock/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-model", messages, max_tokens: 2, ...extra }),
    }),
  );
  assert.equal(res.status, 200);
  return res;
}

/** A whole chat answer's body. */
async function chat(mock: Mock, messages: Msg[], extra: Record<string, unknown> = {}): Promise<any> {
  return await (await post(mock, messages, extra)).json();
}

/** The last chunk with a usage of a streamed chat answer (usage turned on by `streamOptions`). */
async function streamedUsageChunk(mock: Mock, messages: Msg[], streamOptions: object): Promise<any> {
  const res = await post(mock, messages, { stream: true, stream_options: streamOptions });
  const events: SseEvent[] = splitSse(await res.text());
  const chunk = events.filter((e) => (e.json as { usage?: unknown } | undefined)?.usage).at(-1);
  assert.ok(chunk, "a chunk with usage");
  return chunk.json;
}

async function complete(mock: Mock, prompt: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await mock.fetch(
    new Request("http://mock/v1/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-model", prompt, max_tokens: 2, ...extra }),
    }),
  );
  assert.equal(res.status, 200);
  return await res.json();
}

/** Whole blocks in `n` tokens, in tokens. */
const wholeBlocks = (n: number) => n - (n % BLOCK_TOKENS);

describe("the mock with --prefix-cache-tokens (timing model)", () => {
  it("the same prompt twice: cached = its whole blocks, TTFT (first_ms) shorter by prefill × cached", async () => {
    const prefill = 2;
    const { mock, lines } = logged({
      prefixCacheTokens: 4096,
      ttftMs: 20,
      prefillMsPerToken: prefill,
      tpotMs: 1,
    });
    try {
      const messages = [{ role: "user", content: text(197) }];
      const prompt = 197 + 4 + 3; // 204 tokens: 12 whole blocks
      const cached = wholeBlocks(prompt);
      assert.equal(cached, 192);
      const a = await chat(mock, messages);
      const b = await chat(mock, messages);
      const [la, lb] = lines.map(entry);
      assert.deepEqual([la.prompt, la.cached, lb.prompt, lb.cached], [prompt, 0, prompt, cached]);
      assert.equal(a.usage.prompt_tokens_details.cached_tokens, 0);
      assert.equal(b.usage.prompt_tokens_details.cached_tokens, cached);
      assert.equal(b.usage.prompt_tokens, prompt);
      // Planned: 20 + 2 × 204 = 428 ms, then 20 + 2 × 12 = 44 ms. Deadlines are never early; a
      // busy host makes them late, by about as much for both. Without the cache the two match.
      assert.ok(la.first >= 20 + prefill * prompt - 1, `first_ms ${la.first}`);
      assert.ok(lb.first >= 20 + prefill * (prompt - cached) - 1, `first_ms ${lb.first}`);
      const saved = la.first - lb.first;
      assert.ok(
        Math.abs(saved - prefill * cached) <= 100,
        `saved ${saved.toFixed(1)} ms, want ≈ ${prefill * cached}`,
      );
    } finally {
      mock.close();
    }
  });

  it("multi-turn: the history's leading whole blocks are cached, the assistant header included", async () => {
    const { mock, lines } = logged({ prefixCacheTokens: 4096, ttftMs: 0, tpotMs: 0 });
    try {
      const turn1: Msg[] = [{ role: "system", content: text(30, "s") }, {
        role: "user",
        content: text(40, "u"),
      }];
      const a = await chat(mock, turn1);
      const answer: string = a.choices[0].message.content;
      const turn2: Msg[] = [...turn1, { role: "assistant", content: answer }, {
        role: "user",
        content: text(20, "v"),
      }];
      await chat(mock, turn2);
      // Turn 1: (30 + 4) + (40 + 4) + 3 = 81 tokens, 5 whole blocks (80). Turn 2 begins with the
      // same 78 tokens of the two messages and then `<|im_start|> assistant <|im_sep|>`, as turn
      // 1's generation prompt ended: all 81 shared, so the 5 blocks.
      const [l1, l2] = lines.map(entry);
      assert.equal(l1.prompt, 81);
      assert.equal(l2.prompt, 78 + (answer.trim().split(/\s+/).length + 4) + (20 + 4) + 3);
      assert.deepEqual([l1.cached, l2.cached], [0, 80]);
      // A third turn reuses all of turn 2's whole blocks.
      const turn3: Msg[] = [...turn2, { role: "assistant", content: "ok" }, {
        role: "user",
        content: "more",
      }];
      await chat(mock, turn3);
      assert.equal(entry(lines[2]).cached, wholeBlocks(l2.prompt));
    } finally {
      mock.close();
    }
  });

  it("a salt at the start shares no block; a salt after a shared prefix keeps the prefix's blocks", async () => {
    const { mock, lines } = logged({ prefixCacheTokens: 4096, ttftMs: 0, tpotMs: 0 });
    try {
      const body = text(60);
      await chat(mock, [{ role: "user", content: body }]); // 67 tokens, 4 whole blocks
      await chat(mock, [{ role: "user", content: body }]);
      await chat(mock, [{ role: "user", content: `[ik-r1] ${body}` }]);
      // A shared system prompt of 44 tokens, then `<|im_start|> user <|im_sep|>` (47), then the salt.
      const system = { role: "system", content: text(40, "s") };
      await chat(mock, [system, { role: "user", content: `[ik-r1] ${body}` }]);
      await chat(mock, [system, { role: "user", content: `[ik-r2] ${body}` }]);
      // Completions: 40 shared words, then the salt.
      await complete(mock, `${text(40, "p")} [ik-r1] ${body}`);
      await complete(mock, `${text(40, "p")} [ik-r2] ${body}`);
      await complete(mock, `[ik-r3] ${text(40, "p")} [ik-r2] ${body}`);
      assert.deepEqual(lines.map((l) => entry(l).cached), [0, 64, 0, 0, 32, 0, 32, 0]);
    } finally {
      mock.close();
    }
  });

  it("usage carries it where the engine reports it: vllm, sglang cached_tokens; llamacpp timings.cache_n", async () => {
    const messages = [{ role: "user", content: text(40) }]; // 47 tokens, 32 cached on a repeat
    for (const engine of ["vllm", "sglang", "trtllm", "openai"] as const) {
      const mock = createMock({ engine, prefixCacheTokens: 4096, ttftMs: 0, tpotMs: 0 });
      try {
        await chat(mock, messages);
        const streamed = (await streamedUsageChunk(mock, messages, { include_usage: true })).usage;
        const whole = (await chat(mock, messages)).usage;
        assert.equal(streamed.prompt_tokens_details.cached_tokens, 32, engine);
        assert.equal(whole.prompt_tokens_details.cached_tokens, 32, engine);
        assert.equal(whole.prompt_tokens, 47, engine);
      } finally {
        mock.close();
      }
    }
    const sglang = createMock({ engine: "sglang", prefixCacheTokens: 4096, ttftMs: 0, tpotMs: 0 });
    try {
      await complete(sglang, text(40));
      assert.deepEqual((await complete(sglang, text(40))).usage.prompt_tokens_details, { cached_tokens: 32 });
    } finally {
      sglang.close();
    }
    const llama = createMock({ engine: "llamacpp", prefixCacheTokens: 4096, ttftMs: 0, tpotMs: 0 });
    try {
      await chat(llama, messages);
      const t = (await chat(llama, messages)).timings;
      assert.deepEqual([t.cache_n, t.prompt_n], [32, 15]);
      const s = await streamedUsageChunk(llama, messages, { include_usage: true });
      assert.deepEqual([s.timings.cache_n, s.timings.prompt_n, s.usage.prompt_tokens], [32, 15, 47]);
      assert.equal(s.usage.prompt_tokens_details, undefined, "the b6123 shape the mock speaks has none");
    } finally {
      llama.close();
    }
  });

  it("the engines' cache metrics count it: vllm hits/queries, sglang cached tokens and hit rate, trtllm hit rate", async () => {
    const messages = [{ role: "user", content: text(40) }]; // 47 tokens, 32 cached on a repeat
    const sample = (body: string, name: string) => {
      const line = body.split("\n").find((l) => l.startsWith(name + "{") || l.startsWith(name + " "));
      assert.ok(line, `${name} in the exposition`);
      return Number(line.slice(line.lastIndexOf(" ") + 1));
    };
    const cases = [
      { engine: "vllm", path: "/metrics", want: { "vllm:prefix_cache_hits_total": 32, "vllm:prefix_cache_queries_total": 94 } },
      { engine: "sglang", path: "/metrics", want: { "sglang:cached_tokens_total": 32, "sglang:cache_hit_rate": 32 / 94 } },
      { engine: "trtllm", path: "/prometheus/metrics", want: { "trtllm_kv_cache_hit_rate": 32 / 94 } },
    ] as const;
    for (const { engine, path, want } of cases) {
      const mock = createMock({ engine, prefixCacheTokens: 4096, ttftMs: 0, tpotMs: 0 });
      try {
        await chat(mock, messages);
        await chat(mock, messages);
        const body = await (await mock.fetch(new Request(`http://mock${path}`))).text();
        for (const [name, value] of Object.entries(want)) assert.ok(Math.abs(sample(body, name) - value) < 1e-9, `${engine} ${name}`);
      } finally {
        mock.close();
      }
    }
  });

  it("off (the default): cached=0 on a repeat, full prefill, and no cached-token fields added", async () => {
    const { mock, lines } = logged({ engine: "vllm", ttftMs: 0, prefillMsPerToken: 1, tpotMs: 0 });
    try {
      const messages = [{ role: "user", content: text(60) }];
      await chat(mock, messages);
      const whole = await chat(mock, messages);
      const u = (await streamedUsageChunk(mock, messages, {})).usage;
      assert.deepEqual(lines.map((l) => entry(l).cached), [0, 0, 0]);
      for (const l of lines) assert.ok(entry(l).first >= 67 - 1, l);
      assert.equal(whole.usage.prompt_tokens_details, null);
      assert.equal("prompt_tokens_details" in u, false);
    } finally {
      mock.close();
    }
    const llama = createMock({ engine: "llamacpp", ttftMs: 0, tpotMs: 0 });
    try {
      await chat(llama, [{ role: "user", content: text(60) }]);
      const t = (await chat(llama, [{ role: "user", content: text(60) }])).timings;
      assert.deepEqual([t.cache_n, t.prompt_n], [0, 67]);
    } finally {
      llama.close();
    }
  });
});

describe("the simulator with --prefix-cache-tokens", () => {
  it("the admitted step's prefill counts only the uncached tokens", async () => {
    const { mock, lines } = logged({
      maxBatch: 2,
      stepMs: 10,
      prefillMsPerToken: 1,
      prefixCacheTokens: 4096,
    });
    try {
      const messages = [{ role: "user", content: text(197) }]; // 204 tokens, 192 cached on a repeat
      await chat(mock, messages, { max_tokens: 1 });
      await chat(mock, messages, { max_tokens: 1 });
      const [a, b] = lines.map(entry);
      assert.deepEqual([a.cached, b.cached], [0, 192]);
      // The first token ends the admitting step: 10 + 204 ms, then 10 + 12 ms.
      assert.ok(a.first >= 214 - 1, `first_ms ${a.first}`);
      assert.ok(b.first >= 22 - 1 && b.first < 22 + 100, `first_ms ${b.first}, want ≈ 22 (214 uncached)`);
      assert.ok(Math.abs(a.first - b.first - 192) <= 100, `saved ${(a.first - b.first).toFixed(1)} ms`);
    } finally {
      mock.close();
    }
  });
});

describe("--prefix-cache-tokens flag", () => {
  it("parses to prefixCacheTokens, default 0", () => {
    const flags = (args: string[]) => {
      const r = parse(mockCommand(), ["mock", ...args]);
      if (!r.success) throw new Error(`parse failed: ${JSON.stringify(r.error)}`);
      return mockOptionsFromFlags(r.value);
    };
    assert.equal(flags([]).prefixCacheTokens, 0);
    assert.equal(flags(["--prefix-cache-tokens", "4096"]).prefixCacheTokens, 4096);
    assert.equal(flags(["--max-batch", "2", "--prefix-cache-tokens", "16"]).prefixCacheTokens, 16);
    assert.equal(parse(mockCommand(), ["mock", "--prefix-cache-tokens", "-5"]).success, false);
  });

  it("a bad value in the settings is a usage error naming the flag", () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 60]) {
      assert.throws(
        () => resolveMockOptions({ prefixCacheTokens: bad }),
        (e) => e instanceof IkError && e.code === 64 && /--prefix-cache-tokens/.test(e.message + e.where),
      );
    }
  });

  it("bad values on the command line: exit 64, one line naming the flag", async () => {
    for (const bad of ["-1", "1.5", "lots"]) {
      const r = await runArgv(ikSourceArgv(), ["mock", "--port", "0", "--prefix-cache-tokens", bad], {
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 64, `${bad}: ${r.stderr}`);
      const out = r.stderr.trim().split("\n");
      assert.equal(out.length, 1, r.stderr);
      assert.match(out[0], /^ik: .*--prefix-cache-tokens/);
    }
  });
});
