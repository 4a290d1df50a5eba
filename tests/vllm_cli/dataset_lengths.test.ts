/**
 * `ik bench vllm`'s input lengths as vLLM's datasets make them, against a counter that behaves like
 * a BOS tokenizer behind a server's /tokenize (one special token on a bare prompt, a chat template
 * of 7 tokens, BOS included): vLLM's RandomDataset makes `--random-input-len` minus the tokenizer's
 * special tokens of bare text (vllm/benchmarks/datasets.py, RandomDataset.sample: `real_input_len =
 * input_len - num_special`), which a completions server counts as the input length and a chat server
 * counts with its template on top; its file datasets count `len(tokenizer(text).input_ids)`.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { promptSetFor, randomSet, type VllmCounter, vllmDatasetCounter } from "../../lib/vllm_cli/dataset.ts";
import { SONNET_BASE_PROMPT } from "../../lib/datasets/sonnet.ts";

const words = (t: string) => (t.trim() ? t.trim().split(/\s+/).length : 0);
/** A BOS tokenizer: a bare prompt counts one more; a chat request 7 more (template with BOS). */
function bosCounter(api: "chat" | "completions"): VllmCounter {
  return {
    method: "server_tokenize:test",
    request: (t) => Promise.resolve(words(t) + (api === "chat" ? 7 : 1)),
    remote: { countPrompt: (t) => Promise.resolve(words(t) + 1), countText: (t) => Promise.resolve(words(t)) },
  };
}
const spec = { inputLen: 16, outputLen: 4, rangeRatio: 0, prefixLen: 0, numPrompts: 5, seed: 1 };
const textOf = (p: { messages: readonly { content?: unknown }[] }) => String(p.messages[0].content);

describe("bench vllm input lengths", () => {
  test("random: the message text is --random-input-len less the special token, for chat and completions alike", async () => {
    for (const api of ["chat", "completions"] as const) {
      const { set } = await randomSet(spec, bosCounter(api), api);
      assert.equal(set.prompts.length, 5);
      for (const p of set.prompts) assert.equal(words(textOf(p)), 15, `${api}: ${textOf(p)}`);
    }
  });

  test("random with a prefix: prefix + (input less specials) of text on chat", async () => {
    const { set } = await randomSet({ ...spec, prefixLen: 6 }, bosCounter("chat"), "chat");
    for (const p of set.prompts) assert.equal(words(textOf(p)), 21, textOf(p));
  });

  test("random without the server's tokenizer (words): the input length as words, as before", async () => {
    const plain: VllmCounter = { method: "words", request: (t) => Promise.resolve(words(t)) };
    const { set } = await randomSet(spec, plain, "chat");
    for (const p of set.prompts) assert.equal(words(textOf(p)), 16);
  });

  test("file datasets: a text's length is len(tokenizer(text).input_ids), specials included; requests as the server counts them", async () => {
    const c = vllmDatasetCounter(bosCounter("chat"));
    assert.equal(await c.text("a b c"), 4);
    assert.equal(await c.request("a b c"), 10);
    const plain = vllmDatasetCounter({ method: "words", request: (t) => Promise.resolve(words(t) + 2) });
    assert.equal(await plain.text("a b c"), 3, "without a server: the request's count less an empty one's");
  });

  /** promptSetFor on a file, against the BOS counter behind a chat server. */
  async function fileSet(name: "sharegpt" | "sonnet", text: string, numPrompts: number, file: Record<string, number> = {}) {
    const dir = await mkdtemp(join(tmpdir(), "ik-vllm-ds-"));
    try {
      const path = join(dir, name === "sharegpt" ? "sg.json" : "sonnet.txt");
      await writeFile(path, text);
      const random = { ...spec, numPrompts };
      return await promptSetFor({ datasetName: name, datasetPath: path, api: "chat", random, counter: () => Promise.resolve(bosCounter("chat")), file });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const pair = (q: string, a: string) => ({ conversations: [{ from: "human", value: q }, { from: "gpt", value: a }] });

  test("sharegpt: max_tokens is the answer's len(tokenizer(text).input_ids), BOS included, and the 4-token filter counts it too", async () => {
    // vLLM: "a b c" is 4 tokens with its BOS, so it passes the min_len 4 filter; the answer of 7 words is 8 tokens.
    const sg = JSON.stringify([pair("a b c", "x y z"), pair("one two three four five", "p q r s t u v")]);
    const { set } = await fileSet("sharegpt", sg, 2);
    const byText = new Map(set.prompts.map((p) => [textOf(p), p]));
    assert.equal(byText.size, 2, "both pairs pass vLLM's filters: " + [...byText.keys()].join(" | "));
    assert.equal(byText.get("a b c")?.maxTokens, 4);
    assert.equal(byText.get("one two three four five")?.maxTokens, 8);
    assert.equal(byText.get("a b c")?.extra.input_tokens, 10, "input_tokens: the chat request as the server counts it");
  });

  test("sonnet: the line average is vLLM's per-line len(tokenizer(line).input_ids), BOS included", async () => {
    // Lines of 4 words: 5 tokens each as vLLM counts them. The instruction's request counts 11 words + 7 = 18;
    // --sonnet-input-len 40 leaves 22 tokens: round(22 / 5) = 4 lines (not round(22 / 4) = 6).
    const lines = Array.from({ length: 12 }, (_, i) => `w${i} x${i} y${i} z${i}`).join("\n") + "\n";
    const { set } = await fileSet("sonnet", lines, 2, { sonnetInputLen: 40, sonnetPrefixLen: 0, sonnetOutputLen: 3 });
    assert.equal(set.prompts.length, 2);
    for (const p of set.prompts) {
      assert.ok(textOf(p).startsWith(SONNET_BASE_PROMPT), textOf(p));
      assert.equal(textOf(p).slice(SONNET_BASE_PROMPT.length).split("\n").filter(Boolean).length, 4, textOf(p));
      assert.equal(p.maxTokens, 3);
    }
  });
});
