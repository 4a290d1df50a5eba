/**
 * Prompts that begin alike are served from a prefix-caching server's cache whatever ik tags
 * (a real llama-server gave a long built-in prompt 964 of its 990 prompt tokens from the cache when
 * the built-in prompts ended with their task): the set's shared starts are found and said; the
 * built-in set has none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import type { Prompt } from "../../lib/prompts/prompt.ts";
import { SHARED_PREFIX_MIN_CHARS, SHARED_PREFIX_SCAN_CHARS, sharedPrefix, sharedPrefixNote } from "../../lib/prompts/shared_prefix.ts";

const p = (id: string, content: string, role = "user"): Prompt => ({ id, bucket: "b", messages: [{ role, content }], maxTokens: 8, kind: "chat", extra: {} });
const story = "A lighthouse keeper writes about ships, storms, supply boats and the small repairs the lamp needs. ".repeat(5);

test("prompts sharing a long start are counted, with the longest; short or no shared starts are not", () => {
  const set = [p("a", story + "Summarise it."), p("b", story + "Rewrite it as a play."), p("c", "Name three colours."), p("d", "Name three rivers.")];
  const s = sharedPrefix(set)!;
  assert.deepEqual([s.prompts, s.of, s.capped], [2, 4, false]);
  assert.equal(s.maxChars, "user\u0000".length + story.length);
  // A longer shared start is scanned only so far (a set of 10^5 long prompts stays cheap): "or more".
  const long = "Another story, repeated until it is long enough to pass the scanned length. ".repeat(40);
  const capped = sharedPrefix([p("a", long + "x"), p("b", long + "y")])!;
  assert.deepEqual([capped.maxChars, capped.capped], [SHARED_PREFIX_SCAN_CHARS, true]);
  assert.match(sharedPrefixNote([p("a", long + "x"), p("b", long + "y")])!, new RegExp(`up to ${SHARED_PREFIX_SCAN_CHARS} or more`));
  assert.equal(sharedPrefix([p("c", "Name three colours."), p("d", "Name three rivers.")]), null);
  // The task first, the shared text after: nothing shared at the start.
  assert.equal(sharedPrefix([p("a", "Summarise it. " + story), p("b", "Rewrite it as a play. " + story)]), null);
  // A system message common to every prompt is a shared start too.
  const sys = { role: "system", content: "You are a helpful assistant who answers in full sentences and cites sources." };
  const withSys = (id: string, q: string): Prompt => ({ ...p(id, q), messages: [sys, { role: "user", content: q }] });
  assert.equal(sharedPrefix([withSys("x", "Hi"), withSys("y", "Bye")])?.prompts, 2);
  // Identical texts under two ids: the whole prompt.
  assert.equal(sharedPrefix([p("a", story), p("b", story)])?.maxChars, "user\u0000".length + story.length + 1);
  assert.equal(sharedPrefix([p("a", story), p("a", story)]), null, "one id counted once");
  assert.ok(SHARED_PREFIX_MIN_CHARS >= 32);
});

test("the record's line names the count and the longest; the built-in set has no shared start", () => {
  const note = sharedPrefixNote([p("a", story + "x"), p("b", story + "y"), p("c", "z")])!;
  assert.match(note, /^prefix cache: 2 of the 3 prompts begin like another prompt of the set for at least 64 characters \(up to \d+\): a server with prefix caching/);
  assert.equal(sharedPrefixNote(loadBuiltinPromptSet().prompts), null);
});
