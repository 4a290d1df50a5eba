/**
 * The name rules on text (lib/evidence/scrub_pairs.ts through scrubText): what engines, proxies and
 * shells print — SGLang's ServerArgs repr, vLLM's non-default args, HTTP headers, logfmt, YAML, JSON
 * pairs whose value is an object or an array — and the prose and workload fields they must leave.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { scrubText } from "../../lib/evidence/scrub.ts";
import { closingBracket, MAX_BRACKET_SCAN } from "../../lib/evidence/scrub_pairs.ts";

describe("engine and proxy text", () => {
  test("SGLang's ServerArgs(...): quoted kwargs lose their values, None and workload kwargs stay", () => {
    const line = "server_args=ServerArgs(model_path='m', api_key='sk-SG1', admin_api_key=None, hf_token=\"hf_SG2\", " +
      "max_tokens=16, bucket_time_to_first_token=[0.1, 0.2], tokenizer_mode='auto')";
    assert.equal(scrubText(line), "server_args=ServerArgs(model_path='m', api_key='***', admin_api_key=None, hf_token=\"***\", " +
      "max_tokens=16, bucket_time_to_first_token=[0.1, 0.2], tokenizer_mode='auto')");
  });
  test("vLLM's non-default args: a list value becomes one '***' (still a Python literal)", () => {
    assert.equal(scrubText("non-default args: {'api_key': ['VL1secret'], 'model': 'm', 'max_num_batched_tokens': 8}"),
      "non-default args: {'api_key': '***', 'model': 'm', 'max_num_batched_tokens': 8}");
  });
  test("HTTP headers: x-api-key, Authorization: Basic (scheme kept), Cookie (the whole line)", () => {
    assert.equal(scrubText("x-api-key: abc123XYZ\nAuthorization: Basic dXNlcjpwYXNz\nCookie: a=b; session=xyz\nHost: h"),
      "x-api-key: ***\nAuthorization: Basic ***\nCookie: ***\nHost: h");
    assert.equal(scrubText("proxy said Basic dXNlcjpwYXNz="), "proxy said Basic ***");
  });
  test("logfmt, shell environment, YAML, a Prometheus label", () => {
    assert.equal(scrubText('level=info api_key=LF1secret token=abc msg="ok" max_tokens=5'), 'level=info api_key=*** token=*** msg="ok" max_tokens=5');
    assert.equal(scrubText("export HF_TOKEN=hf_xyz OPENAI_API_KEY=sk-abc"), "export HF_TOKEN=*** OPENAI_API_KEY=***");
    assert.equal(scrubText("password: hunter"), "password: ***");
    assert.equal(scrubText("2026-01-01 INFO password: hunter"), "2026-01-01 INFO password: ***");
    assert.equal(scrubText('vllm:x{model_name="tiny",auth="Bearer sk-LB1"} 0'), 'vllm:x{model_name="tiny",auth="***"} 0');
    assert.equal(scrubText("authorization=bearer SECRETZ9"), "authorization=bearer ***");
  });
  test("a JSON pair whose value is an object or an array, plain or escaped inside a JSON string", () => {
    assert.equal(scrubText('said {"auth":{"pw":"S1"},"n":1}'), 'said {"auth":"***","n":1}');
    const doc = JSON.stringify({ body: JSON.stringify({ api_key: ["ARR1"], metadata: { token: { value: "NEST1" } }, max_tokens: 4 }) });
    const out = scrubText(doc);
    assert.doesNotMatch(out, /ARR1|NEST1/);
    assert.deepEqual(JSON.parse(JSON.parse(out).body), { api_key: "***", metadata: { token: "***" }, max_tokens: 4 }, "still JSON");
    assert.equal(scrubText('cut off: {"auth": {"pw": "S1'), 'cut off: {"auth": "***"', "a value that never closes goes to its line's end");
  });
});

describe("what stays", () => {
  test("workload fields: tokens, token_ids, max_tokens, min_tokens, *_tokens, *_per_token", () => {
    const s = 'min_tokens=4, tokens: 12, max_tokens: 16, token_ids: [1, 2] {"token_ids":[1,2],"tokens":[3],"prompt_tokens":5} ' +
      "prefill_ms_per_token: 0.05, joules_per_output_token=3.1";
    assert.equal(scrubText(s), s);
  });
  test("prose", () => {
    for (const s of ["time to first token: 0.3 s", "the key: see docs", "Basic usage", "a Bearer token", "a key=value list",
      "use --token to sign in", "needs K=V (e.g. Authorization=Bearer ...)", "Requires auth: yes", "api_key=None, token: null",
      "first token: 12 ms; key: <your key>", "http://h:8000/v1/models: 200", "set key: $API_KEY",
      "The mock emits no hidden EOS token: usage.completion_tokens equals the count", "sorted(levels, key=lambda x: x[0])",
      "each --metadata KEY=VALUE as a string"]) {
      assert.equal(scrubText(s), s, s);
    }
  });
  test("a numbers-only list under a secret-looking name is data", () => {
    assert.equal(scrubText("'bucket_time_to_first_token': [0.1, 0.5, 1.0]"), "'bucket_time_to_first_token': [0.1, 0.5, 1.0]");
  });
  test("the bracket scan is bounded", () => {
    const open = "[" + "1,".repeat(MAX_BRACKET_SCAN) + "1]";
    assert.equal(closingBracket(open, 0), -1);
    assert.equal(closingBracket('["a]", {"b": (1)}]x', 0), 18);
  });
});

describe("names that are secret-looking only by their last segment", () => {
  test("a tokenizer's pad_token object, stop_token list and llama.cpp's next_token list stay; credential names still go", () => {
    const keep = [
      `config: {"pad_token": {"content": "<pad>", "lstrip": false}, "stop_token": ["</s>", "<|im_end|>"]}`,
      `{"id":0,"next_token":[{"has_next_token":true,"has_new_line":false,"n_remain":-1,"n_decoded":7}]}`,
      `eos_token='</s>' pad_token=<pad>`,
      `cache key: prefix`,
    ];
    for (const line of keep) assert.equal(scrubText(line), line);
    assert.equal(scrubText(`{'api_key': ['VLLMSECRET1'], "auth": {"pw": "S3"}}`), `{'api_key': '***', "auth": "***"}`);
    assert.equal(scrubText(`ServerArgs(api_key='SGLSECRET1', hf_token='hf_abc')`), `ServerArgs(api_key='***', hf_token='***')`);
    // A weak name with a credential-like value still goes.
    assert.equal(scrubText(`session key=ab12cd34ef56`), `session key=***`);
  });
});
