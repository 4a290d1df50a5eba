/** `--extra-body` checks (in-process, both runtimes): prototype keys anywhere and `stream` other than true are refused. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { buildBody } from "../../lib/engines/mod.ts";
import { checkExtraBody } from "../../lib/engines/extra_body.ts";

function refused(text: string, re: RegExp) {
  assert.throws(() => checkExtraBody(text), (e: unknown) => {
    assert.ok(e instanceof IkError);
    assert.equal(e.code, 64);
    assert.match(e.oneLine(), /^ik: --extra-body: /);
    assert.match(e.oneLine(), re);
    return true;
  }, text);
}

test("prototype keys are refused at any depth, naming the key's path", () => {
  refused('{"__proto__":{"polluted":1}}', /'__proto__'/);
  refused('{"a":{"b":[{"__proto__":{}}]}}', /'a\.b\[0\]\.__proto__'/);
  refused('{"constructor":{"prototype":{}}}', /'constructor'/);
  refused('{"x":{"prototype":1}}', /'x\.prototype'/);
});

test("stream must stay true; other fields pass through and override the profile", () => {
  refused('{"stream":false}', /'stream' must stay true/);
  refused('{"stream":null}', /'stream'/);
  assert.deepEqual(checkExtraBody('{"stream":true,"top_p":0.5}'), { stream: true, top_p: 0.5 });
  assert.equal(checkExtraBody(undefined), null);
  const extra = checkExtraBody('{"max_tokens":20,"seed":1}');
  const { body } = buildBody("chat", "vllm", "m", [{ role: "user", content: "hi" }], 4, { extra });
  assert.equal(body.max_tokens, 20);
  assert.equal(Object.getPrototypeOf(body), Object.prototype);
});

test("malformed or non-object JSON is a usage error", () => {
  refused("{bad", /not valid JSON/);
  refused("[1]", /must be a JSON object/);
});
