/**
 * Buckets of the same lengths get different prompts (the bucket's name is in the seed): `ik prompts
 * synth --bucket a:50:16,b:50:16` is two sets of prompts, not one set twice; the same arguments
 * still give the same bytes. In process, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { parseSynthBucket, pseudoTokens, synthPromptSet } from "../../lib/prompts/synth.ts";
import { synthExact } from "../../lib/prompts/synth_exact.ts";

const buckets = [parseSynthBucket("a:50:16"), parseSynthBucket("b:50:16")];

function texts(jsonl: string): Map<string, string> {
  return new Map(parsePromptSetText(jsonl, "s.jsonl").map((p) => [p.id, String(p.messages[0].content)]));
}

test("synthPromptSet: buckets a and b of the same lengths have different texts; seeded bytes", () => {
  const t = texts(synthPromptSet(buckets, 2, 0));
  for (const i of [0, 1]) assert.notEqual(t.get(`a-${i}`), t.get(`b-${i}`), `a-${i} / b-${i}`);
  assert.equal(new Set(t.values()).size, 4);
  assert.equal(synthPromptSet(buckets, 2, 0), synthPromptSet(buckets, 2, 0));
});

test("synthExact (prompts synth with a counter, a prefix and a spread): buckets a and b differ; seeded bytes", async () => {
  const counter = { method: "words", request: (s: string) => Promise.resolve(pseudoTokens(s)) };
  for (const [prefixLen, spread] of [[0, { kind: "fixed" }], [8, { kind: "range", ratio: 0.5 }]] as const) {
    const make = () => synthExact({ buckets, perBucket: 2, seed: 0, counter, prefixLen, spread });
    const made = await make();
    const t = texts(made.text);
    for (const i of [0, 1]) assert.notEqual(t.get(`a-${i}`), t.get(`b-${i}`), `prefix ${prefixLen}: a-${i} / b-${i}`);
    assert.equal(made.text, (await make()).text);
  }
});
