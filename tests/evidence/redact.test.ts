/** Redaction (CONTRACTS.md): secret-looking names on whole segments, URLs, the API key's value. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isSecretKey, redactObject, redactUrl, redactUrlsInText, scrubSecret } from "../../lib/evidence/redact.ts";

describe("isSecretKey", () => {
  test("secret-looking names, snake, kebab and camel case", () => {
    for (const k of ["api_key", "apiKey", "APIKEY", "openai_api_key", "hfKey", "key", "token", "access_token", "refreshToken",
      "secret", "client_secret", "password", "Authorization", "auth", "cookie", "x-api-key", "session_token", "per_token_secret", "personal_access_token"]) {
      assert.equal(isSecretKey(k), true, k);
    }
  });
  test("workload fields are never secrets", () => {
    for (const k of ["tokens", "token_ids", "max_tokens", "min_tokens", "prompt_tokens", "completion_tokens", "max_completion_tokens",
      "return_token_ids", "keys", "monkey", "author", "key_id", "tokenizer", "model", "messages",
      "prefill-ms-per-token", "prefill_ms_per_token", "usdPerToken", "joules_per_output_token", "jPerOutputToken"]) {
      assert.equal(isSecretKey(k), false, k);
    }
  });
});

describe("redactUrl", () => {
  test("userinfo and secret query values, valid or not", () => {
    assert.equal(redactUrl("http://user:pass@h:8000/v1?api_key=s3cr3t&x=1"), "http://***@h:8000/v1?api_key=***&x=1");
    assert.equal(redactUrl("htp://user:pass@h/v1"), "htp://***@h/v1");
    assert.equal(redactUrl("http://u:p@h:99999"), "http://***@h:99999");
    assert.equal(redactUrl("user:pass@h:8000"), "***@h:8000");
    assert.equal(redactUrl("http://h:8000/v1?token=abc#frag"), "http://h:8000/v1?token=***#frag");
    assert.equal(redactUrl("http://h:8000/v1?max_tokens=4"), "http://h:8000/v1?max_tokens=4");
    assert.equal(redactUrl("http://h:8000/a@b"), "http://h:8000/a@b", "an @ in the path is not userinfo");
  });
  test("in text", () => {
    const t = "fetch failed for http://a:b@h:1/v1/chat/completions?key=zz: refused";
    assert.equal(redactUrlsInText(t), "fetch failed for http://***@h:1/v1/chat/completions?key=***: refused");
  });
});

describe("scrubSecret and redactObject", () => {
  test("every occurrence of the key's value goes", () => {
    assert.equal(scrubSecret("bad key sk-abcdef, again sk-abcdef", "sk-abcdef"), "bad key ***, again ***");
    assert.equal(scrubSecret("abc", ""), "abc");
    assert.equal(scrubSecret("a b c", "b"), "a b c", "too short to scrub");
  });
  test("secret keys are redacted deeply; workload keys are kept", () => {
    const v = { max_tokens: 4, token_ids: [1, 2], api_key: "x", nested: [{ authToken: "y", tokens: 3 }], auth: null };
    assert.deepEqual(redactObject(v), { max_tokens: 4, token_ids: [1, 2], api_key: "***", nested: [{ authToken: "***", tokens: 3 }], auth: null });
    assert.equal(v.api_key, "x", "the input is not changed");
  });
});
