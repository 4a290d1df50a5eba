/**
 * `ik bench vllm`'s input lengths as vLLM's datasets make them, against a counter that behaves like
 * a BOS tokenizer behind a server's /tokenize (one special token on a bare prompt, a chat template
 * of 7 tokens, BOS included): vLLM's RandomDataset makes `--random-input-len` minus the tokenizer's
 * special tokens of bare text (vllm/benchmarks/datasets.py, RandomDataset.sample: `real_input_len =
 * input_len - num_special`), which a completions server counts as the input length and a chat server
 * counts with its template on top; its file datasets count `len(tokenizer(text).input_ids)`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { randomSet, type VllmCounter, vllmDatasetCounter } from "../../lib/vllm_cli/dataset.ts";

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
});
