/**
 * The live-metrics flags and redaction (lib/commands/live_options.ts): only secret-looking header
 * values are registered as secrets (an `X-Scope-OrgID=tiny` must not erase the model name "tiny"
 * from every record), and a `--label` the live metrics would refuse is a usage error (64) naming
 * --label, raised before anything runs.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { Buffer } from "node:buffer";
import { IkError } from "../../lib/cli/errors.ts";
import { clearSecrets, scrubKnown } from "../../lib/evidence/scrub.ts";
import { liveOptions } from "../../lib/commands/live_options.ts";

afterEach(() => clearSecrets());

const RW = "http://127.0.0.1:9/api/v1/write";

describe("--prometheus-remote-write-header", () => {
  test("a tenant header's value is not a secret; the model name 'tiny' survives", () => {
    const o = liveOptions({ remoteWrite: RW, remoteWriteHeaders: ["X-Scope-OrgID=tiny", "X-Request-Source=benchmarks"] });
    assert.deepEqual(o.remoteWrite?.headers, { "X-Scope-OrgID": "tiny", "X-Request-Source": "benchmarks" });
    assert.equal(scrubKnown('{"model":"tiny","source":"benchmarks"}'), '{"model":"tiny","source":"benchmarks"}');
  });
  test("secret-looking headers are registered: the whole value, the credential, a Basic password", () => {
    const basic = Buffer.from("user1:pa55word9").toString("base64");
    liveOptions({
      remoteWrite: RW,
      remoteWriteHeaders: ["Authorization=Bearer SECRETHDR1", `Proxy-Authorization=Basic ${basic}`, "X-Api-Key=KEYHDR22", "Cookie=sid=COOKIEVAL1",
        "X-Auth-Token=TOKHDR33", "X-Client-Secret=CSVAL44"],
    });
    assert.equal(scrubKnown(`SECRETHDR1 ${basic} pa55word9 KEYHDR22 sid=COOKIEVAL1 TOKHDR33 CSVAL44`), "*** *** *** *** *** *** ***");
  });
});

describe("--label with live metrics", () => {
  for (const label of ["hf_abcdefghijklmnopqrstuvwxyz", "sk-abcdefghijklmnopqrstu"]) {
    test(`${label.slice(0, 3)}…: a usage error naming --label, never the value`, () => {
      for (const flags of [{ metricsListen: "127.0.0.1:0" }, { remoteWrite: RW }]) {
        assert.throws(() => liveOptions({ ...flags, label }), (e: unknown) => {
          assert.ok(e instanceof IkError);
          assert.equal(e.code, 64);
          assert.match(e.oneLine(), /^ik: --label: the value looks like an API key or token/);
          assert.ok(!e.oneLine().includes(label), e.oneLine());
          return true;
        });
      }
    });
  }
  test("an ordinary label is fine; without live metrics the label is not checked here", () => {
    assert.equal(liveOptions({ metricsListen: "127.0.0.1:0", label: "vllm-h100" }).listen !== null, true);
    assert.equal(liveOptions({ label: "hf_abcdefghijklmnopqrstuvwxyz" }).listen, null);
  });
});
