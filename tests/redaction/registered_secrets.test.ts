/**
 * Registered secrets (lib/evidence/scrub.ts): every leaf under a secret key of a JSON argument
 * (arrays, objects, numbers), and an all-digit API key — scrubbed from text and strings, never from
 * the numbers of a JSON document.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { clearSecrets, knownSecrets, registerArgvSecrets, registerJsonSecrets, registerSecret, scrubJsonLine, scrubKnown, scrubText } from "../../lib/evidence/scrub.ts";

afterEach(() => clearSecrets());

describe("--extra-body secrets that are not strings", () => {
  test("arrays and objects under a secret key: every string leaf is registered", () => {
    registerJsonSecrets('{"api_key":["ARRSEC9"],"metadata":{"token":{"value":"NESTSEC9","more":[{"x":"DEEPSEC9"}]}},"max_tokens":8,"note":"plain1"}');
    assert.equal(scrubKnown("echo ARRSEC9 NESTSEC9 DEEPSEC9 plain1 8"), "echo *** *** *** plain1 8");
  });
  test("a number under a secret key is registered as an all-digit secret", () => {
    registerJsonSecrets('{"auth":{"pin":12345678},"seed":87654321}');
    assert.deepEqual([...knownSecrets()], ["12345678"]);
  });
  test("through the command line, as ik registers it", () => {
    registerArgvSecrets(["bench", "serve", "--extra-body", '{"api_key":["ARRSEC9"],"metadata":{"token":{"value":"NESTSEC9"}}}'], () => undefined);
    assert.equal(scrubJsonLine({ text: "content ARRSEC9 / NESTSEC9" }), '{"text":"content *** / ***"}');
  });
});

describe("an all-digit API key", () => {
  test("registered from --api-key-env and scrubbed from messages", () => {
    registerArgvSecrets(["load-trial", "prepare", "--api-key-env", "K"], (n) => n === "K" ? "98765432" : undefined);
    assert.equal(scrubText("HTTP 401 xxxxxxxxxx98765432"), "HTTP 401 xxxxxxxxxx***");
    assert.equal(scrubText("key 98765432."), "key ***.");
  });
  test("inside JSON strings it goes; JSON numbers and longer numbers stay", () => {
    registerSecret("98765432");
    const doc = '{"n":98765432,"m":[98765432, -98765432],"s":"xx98765432","q":"98765432","t":1719876543210,"f":0.98765432,"e":98765432e3}';
    const out = scrubKnown(doc);
    assert.deepEqual(JSON.parse(out), { n: 98765432, m: [98765432, -98765432], s: "xx***", q: "***", t: 1719876543210, f: 0.98765432, e: 98765432e3 });
    assert.equal(scrubJsonLine({ count: 98765432, error: "HTTP 401: 98765432 refused" }), '{"count":98765432,"error":"HTTP 401: *** refused"}');
    assert.equal(scrubKnown("98765432,5\n1,98765432"), "98765432,5\n1,98765432", "CSV fields are numbers");
  });
  test("short all-digit values and JSON literals are not registered", () => {
    registerSecret("12345");
    registerSecret("true");
    registerSecret("1.5e3");
    assert.deepEqual([...knownSecrets()], []);
  });
});
