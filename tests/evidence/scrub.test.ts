/** The one scrubber (lib/evidence/scrub.ts): registered values, URLs, flags in argv and text, JSON keys. */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import {
  clearSecrets, registerSecret, registerSecretEnv, scrubArgv, scrubbedJson, scrubJsonLine, scrubKnown, scrubText, scrubValue,
} from "../../lib/evidence/scrub.ts";
import { redactUrl } from "../../lib/evidence/redact.ts";

const KEY = "sk-CANARY7QxUnitTest";

afterEach(() => clearSecrets());

describe("registered secrets", () => {
  test("the API key's value is removed from any text, also URL-encoded", () => {
    registerSecret(KEY);
    assert.equal(scrubKnown(`echo: Bearer ${KEY} and ${KEY}`), "echo: Bearer *** and ***");
    registerSecret("a b/c+d=secret");
    assert.equal(scrubKnown(`q=${encodeURIComponent("a b/c+d=secret")}`), "q=***");
  });
  test("too-short values are ignored; nothing registered changes nothing", () => {
    registerSecret("abc");
    registerSecret("123456");
    registerSecret("true");
    registerSecret("");
    registerSecret(undefined);
    assert.equal(scrubKnown('abc abc {"n":1234567,"ok":true}'), 'abc abc {"n":1234567,"ok":true}', "numbers and literals would break JSON");
  });
  test("env values are registered only where the NAME looks secret", () => {
    registerSecretEnv({ HF_TOKEN: "hf_envsecret", OPENAI_API_KEY: "sk-envsecret", CUDA_VISIBLE_DEVICES: "0,1,2,3", MODEL_DIR: "/models/x" });
    assert.equal(scrubText("hf_envsecret sk-envsecret 0,1,2,3 /models/x"), "*** *** 0,1,2,3 /models/x");
  });
});

describe("scrubText", () => {
  test("flags given with = or a space, whole-segment rule", () => {
    assert.equal(scrubText("bad value for --api-key=sk-abc: see help"), "bad value for --api-key=***: see help");
    assert.equal(scrubText("ran `x --password hunter22 --max-tokens 8`"), "ran `x --password *** --max-tokens 8`");
    assert.equal(scrubText("--x-token=Y1234 --hf-token=hf_1"), "--x-token=*** --hf-token=***");
    assert.equal(scrubText("--max-tokens=16 --api-key-env SECKEY --tokenizer gpt2"), "--max-tokens=16 --api-key-env SECKEY --tokenizer gpt2");
    assert.equal(scrubText("use --token to sign in"), "use --token to sign in", "prose after a flag name stays");
  });
  test("URLs: userinfo, query and fragment secrets; Bearer credentials", () => {
    assert.equal(scrubText("GET http://u:p@h:1/v1?api_key=s1#access_token=t1&x=1 failed"), "GET http://***@h:1/v1?api_key=***#access_token=***&x=1 failed");
    assert.equal(scrubText("authorization: Bearer abcdef123"), "authorization: Bearer ***");
    assert.equal(scrubText("client_argv holds a Bearer token"), "client_argv holds a Bearer token", "prose stays");
  });
});

describe("redactUrl fragments", () => {
  test("an OAuth-style fragment is redacted like a query", () => {
    assert.equal(redactUrl("http://h/cb#access_token=abc&token_type=bearer"), "http://h/cb#access_token=***&token_type=bearer");
    assert.equal(redactUrl("http://h/v1#section"), "http://h/v1#section");
  });
});

describe("scrubArgv", () => {
  test("secret flags lose their values, everything else is kept", () => {
    assert.deepEqual(
      scrubArgv(["client", "--password", "pw1", "--token", "tok1", "--hf-token=hf_1", "--api-key=k1", "--x-token=Y", "--max-tokens", "8", "--no-auth", "--seed", "1"]),
      ["client", "--password", "***", "--token", "***", "--hf-token=***", "--api-key=***", "--x-token=***", "--max-tokens", "8", "--no-auth", "--seed", "1"],
    );
  });
  test("a secret flag followed by another flag keeps that flag; URLs and known values are scrubbed", () => {
    registerSecret(KEY);
    assert.deepEqual(scrubArgv(["--token", "--verbose", `http://h/?token=${"z".repeat(5)}`, `x${KEY}`]), ["--token", "--verbose", "http://h/?token=***", "x***"]);
  });
});

describe("scrubValue and JSON", () => {
  test("keys by the whole-segment rule, strings as text, argv arrays as argv", () => {
    registerSecret(KEY);
    const doc = {
      extra_body: { api_key: "sk-X", max_tokens: 4, nested: [{ access_token: "t" }] },
      serve: { argv: ["ik", "bench", "serve", "--extra-body", "{}", "--hf-token", "hf_a"] },
      note: `server said Bearer ${KEY}`,
      n: 3,
    };
    assert.deepEqual(scrubValue(doc), {
      extra_body: { api_key: "***", max_tokens: 4, nested: [{ access_token: "***" }] },
      serve: { argv: ["ik", "bench", "serve", "--extra-body", "{}", "--hf-token", "***"] },
      note: "server said Bearer ***",
      n: 3,
    });
    assert.equal(doc.extra_body.api_key, "sk-X", "the input is not changed");
    assert.equal(scrubbedJson({ token: "x" }), '{"token":"***"}');
  });
  test("scrubJsonLine: keys and known values, workload fields untouched", () => {
    registerSecret(KEY);
    const line = scrubJsonLine({ body: { api_key: "sk-X", max_tokens: 4, token_ids: [1, 2] }, text: `a${KEY}b`, list: ["token", "key"] });
    assert.deepEqual(JSON.parse(line), { body: { api_key: "***", max_tokens: 4, token_ids: [1, 2] }, text: "a***b", list: ["token", "key"] });
  });
  test("scrubJsonLine: a secret key inside an object inside arrays (past a long run of numbers) is found", () => {
    const event_ms = Array.from({ length: 300 }, (_, i) => i / 4);
    const line = scrubJsonLine({ event_ms, calls: [null, 3, [{ headers: { password: "pw1", n: 2 } }]] });
    assert.deepEqual(JSON.parse(line), { event_ms, calls: [null, 3, [{ headers: { password: "***", n: 2 } }]] });
  });
});

describe("JSON inside text and argv", () => {
  test("a JSON argument and JSON pairs in prose lose their secret values", () => {
    assert.deepEqual(scrubArgv(["serve", "--extra-body", '{"api_key":"sk-X","max_tokens":4}']), ["serve", "--extra-body", '{"api_key":"***","max_tokens":4}']);
    assert.equal(scrubText('Every request carried --extra-body {"api_key": "sk-X", "top_k": "5"} (flag).'), 'Every request carried --extra-body {"api_key": "***", "top_k": "5"} (flag).');
    assert.equal(scrubText('{"argv":"--extra-body {\\"token\\":\\"t1\\"}"}'), '{"argv":"--extra-body {\\"token\\":\\"***\\"}"}');
    assert.equal(scrubText("{'password': 'pw1', 'max_tokens': 4}"), "{'password': '***', 'max_tokens': 4}");
  });
  test("registerArgvSecrets: the --api-key-env target and secret flag values", async () => {
    const { registerArgvSecrets } = await import("../../lib/evidence/scrub.ts");
    registerArgvSecrets(["probe", "--api-key-env", "SECKEY", "--api-key=sk-argvsecret", "--token", "tok-argvsecret", "--model", "m",
      "--extra-body", '{"api_key":"body-secret1","max_tokens":4096,"nested":{"session_token":"nested-secret"}}'], (n) => n === "SECKEY" ? "sk-envvalue1" : undefined);
    assert.equal(scrubKnown("sk-envvalue1 sk-argvsecret tok-argvsecret m body-secret1 nested-secret 4096"), "*** *** *** m *** *** 4096");
  });
});
