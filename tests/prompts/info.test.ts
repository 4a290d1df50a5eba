/**
 * `ik prompts info`'s buckets: the least and most max_tokens the prompts carry, and how many carry
 * none (the command's default applies to them), so a bucket that mixes the two does not read as if
 * every prompt had a max_tokens. In process, both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { describePromptSet, maxTokensText } from "../../lib/commands/prompts.ts";
import { parsePromptSetText, type PromptSet } from "../../lib/prompts/mod.ts";

const line = (id: string, bucket: string, maxTokens?: number) =>
  JSON.stringify({ id, bucket, messages: [{ role: "user", content: "hi" }], ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}) });
const setOf = (...lines: string[]): PromptSet => {
  const text = lines.join("\n") + "\n";
  return { name: "t", path: "t.jsonl", sha256: "0", prompts: parsePromptSetText(text, "t.jsonl"), manifest: null };
};

test("a bucket where some prompts carry no max_tokens says how many use the default, in text and JSON", () => {
  const d = describePromptSet(setOf(line("a", "short", 4), line("b", "short"), line("c", "long", 8), line("d", "long", 16), line("e", "none"), line("f", "none")));
  assert.deepEqual(d.buckets.short, { n: 2, max_tokens: [4, 4], max_tokens_default: 1 });
  assert.equal(maxTokensText(d.buckets.short), "4 (default for 1 of 2)");
  assert.deepEqual(d.buckets.long, { n: 2, max_tokens: [8, 16], max_tokens_default: 0 });
  assert.equal(maxTokensText(d.buckets.long), "8-16");
  assert.deepEqual(d.buckets.none, { n: 2, max_tokens: [null, null], max_tokens_default: 2 });
  assert.equal(maxTokensText(d.buckets.none), "default");
});
