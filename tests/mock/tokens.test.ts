/** The pseudo-tokenizer, prompt-token formulas and the output generator (MOCK.md "Tokens"). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  chatPromptTokens,
  completionPromptTokens,
  countTokens,
  createMock,
  FIRST_WORD_ID,
  OutputGenerator,
  WORDS,
} from "../../lib/mock/mod.ts";
import { hashString } from "../../lib/mock/prng.ts";
import { isRegExpSpace, promptTokenIds } from "../../lib/mock/tokens.ts";
import { SeededRng } from "../../lib/stats/prng.ts";
import { chatBody, splitSse, streamedText } from "./_helpers.ts";

describe("pseudo-tokenizer", () => {
  it("counts maximal runs of non-whitespace", () => {
    assert.equal(countTokens(""), 0);
    assert.equal(countTokens("   \n\t "), 0);
    assert.equal(countTokens("hello"), 1);
    assert.equal(countTokens("  hello,   world!\nnew\tline "), 4);
    assert.equal(countTokens("a-b_c.d"), 1);
  });

  it("chat prompt tokens = Σ(tokens(content) + 4) + 3", () => {
    assert.equal(chatPromptTokens([{ role: "user", content: "one two three" }]), 3 + 4 + 3);
    assert.equal(
      chatPromptTokens([{ role: "system", content: "be brief" }, { role: "user", content: "hi there you" }]),
      (2 + 4) + (3 + 4) + 3,
    );
    assert.equal(
      chatPromptTokens([{
        role: "user",
        content: [{ type: "text", text: "part one" }, { type: "text", text: "two" }],
      }]),
      3 + 4 + 3,
    );
    assert.equal(chatPromptTokens([{ role: "assistant", content: null }]), 0 + 4 + 3);
  });

  it("completions prompt tokens = tokens(prompt)", () => {
    assert.equal(completionPromptTokens("The capital of France is"), 5);
  });

  it("the hand scan splits exactly where /\\S+/g does, on every whitespace a regular expression knows and none other", () => {
    // The reference: the regular expression the scan replaced, and each word's FNV-1a hash.
    // FNV-1a itself, pinned (the standard 32-bit values of "" and "hello"): the ids stay what they were.
    assert.equal(hashString(""), 0x811c9dc5);
    assert.equal(hashString("hello"), 0x4f9f2cab);
    const words = (t: string) => t.match(/\S+/g) ?? [];
    const idsOf = (t: string, n: number) => Array.from({ length: n }, (_, i) => i < words(t).length ? 5000 + (hashString(words(t)[i]) % 30000) : 100 + (i % 7));
    for (let c = 0; c <= 0xffff; c++) assert.equal(isRegExpSpace(c), /\s/.test(String.fromCharCode(c)), `U+${c.toString(16)}`);
    const alphabet = ["a", "Z", "9", ",", "é", "日", "\u{1F600}", "\ud800", " ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u0085", "\u1680", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"];
    const rng = new SeededRng(7);
    for (let k = 0; k < 400; k++) {
      const len = Math.floor(rng.next() * 40);
      let t = "";
      for (let i = 0; i < len; i++) t += alphabet[Math.floor(rng.next() * alphabet.length)];
      const n = words(t).length;
      assert.equal(countTokens(t), n, JSON.stringify(t));
      for (const count of [0, Math.max(0, n - 2), n, n + 5]) assert.deepEqual(promptTokenIds(t, count), idsOf(t, count), JSON.stringify([t, count]));
    }
  });
});

describe("output generator", () => {
  it("picks one of 64 words with a leading space; id = 1000 + index", () => {
    assert.equal(WORDS.length, 64);
    assert.equal(new Set(WORDS).size, 64);
    const g = new OutputGenerator("some prompt", 0);
    for (let k = 0; k < 50; k++) {
      const t = g.token(k);
      assert.match(t.text, /^ \S+$/);
      assert.equal(WORDS[t.id - FIRST_WORD_ID], t.text.slice(1));
    }
  });

  it("is a function of (prompt, k, seed): same inputs repeat, any change differs", () => {
    const text = (prompt: string, seed: number) =>
      new OutputGenerator(prompt, seed).range(0, 24).map((t) => t.text).join("");
    assert.equal(text("what is a token?", 7), text("what is a token?", 7));
    assert.notEqual(text("what is a token?", 7), text("what is a token? [salt 1]", 7));
    assert.notEqual(text("what is a token?", 7), text("what is a token?", 8));
    // Varied words, not one repeated.
    assert.ok(new Set(new OutputGenerator("x", 0).range(0, 32).map((t) => t.id)).size > 10);
  });
});

describe("generation, not replay", () => {
  async function chat(mock: ReturnType<typeof createMock>, content: string, maxTokens: number) {
    const res = await mock.fetch(
      new Request("http://mock/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify(
          chatBody(content, { max_tokens: maxTokens, stream_options: { include_usage: true } }),
        ),
      }),
    );
    const events = splitSse(await res.text());
    const usage =
      (events.at(-2)?.json as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    return { text: streamedText(events), usage };
  }

  it("a different prompt or max_tokens changes content and counts; the same prompt and seed repeat", async () => {
    const mock = createMock({ engine: "vllm", ttftMs: 0, tpotMs: 0, seed: 11 });
    try {
      const a = await chat(mock, "tell me about rivers", 12);
      const again = await chat(mock, "tell me about rivers", 12);
      const salted = await chat(mock, "tell me about rivers [7f3a]", 12);
      const longer = await chat(mock, "tell me about rivers", 20);
      assert.equal(again.text, a.text);
      assert.deepEqual(again.usage, a.usage);
      assert.notEqual(salted.text, a.text);
      assert.equal(salted.usage.prompt_tokens, a.usage.prompt_tokens + 1);
      assert.equal(a.usage.completion_tokens, 12);
      assert.equal(longer.usage.completion_tokens, 20);
      assert.ok(longer.text.startsWith(a.text), "a longer answer continues the same words");
      assert.equal(countTokens(a.text), 12, "one word per token, so the text has completion_tokens words");
      assert.equal(a.usage.prompt_tokens, chatPromptTokens([{ content: "tell me about rivers" }]));
    } finally {
      mock.close();
    }
    const other = createMock({ engine: "vllm", ttftMs: 0, tpotMs: 0, seed: 12 });
    try {
      const b = await chat(other, "tell me about rivers", 12);
      const mockSame = createMock({ engine: "vllm", ttftMs: 0, tpotMs: 0, seed: 11 });
      const c = await chat(mockSame, "tell me about rivers", 12);
      mockSame.close();
      assert.notEqual(b.text, c.text, "--seed changes the words");
    } finally {
      other.close();
    }
  });
});
