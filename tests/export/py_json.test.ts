/**
 * Python's json.dumps, as vLLM's result files are written: the expected strings below are what
 * CPython 3 printed for the same data (`json.dumps(...)`, `repr(float(x))`).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pyFloatRepr, pyJson, pyJsonString, vllmFloatKey, vllmJson } from "../../lib/export/py_json.ts";

describe("pyJson", () => {
  test("floats in Python's repr: whole ones with .0, exponents below 1e-4 and from 1e16", () => {
    const xs = [20, 0.5, 0.001, 1e-5, 1.5e-5, 0, -4, 1e21, 123.456, -0, 1e16, 9999999999999998, 0.0001, 0.1 + 0.2, 1 / 3, 2.5e-7, 123456789.123];
    assert.equal(
      xs.map(pyFloatRepr).join(" "),
      "20.0 0.5 0.001 1e-05 1.5e-05 0.0 -4.0 1e+21 123.456 -0.0 1e+16 9999999999999998.0 0.0001 0.30000000000000004 0.3333333333333333 2.5e-07 123456789.123",
    );
  });

  test("every float reads back to itself", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let i = 0; i < 5000; i++) {
      const x = (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20);
      assert.equal(Number(pyFloatRepr(x)), x, String(x));
    }
  });

  test("separators, ensure_ascii escapes, floats by key (nested arrays too), ints elsewhere", () => {
    const v = { request_rate: 20, completed: 3, ttfts: [0, 0.5], itls: [[0.001, 2], []], label: null, ok: true, t: "caf\u00e9 \u{1F600} \x7f\x01\n\"\\ ", e: 1e-7, big: 1e21, n: -4, gone: undefined };
    assert.equal(
      pyJson(v, (k) => k !== "completed"),
      '{"request_rate": 20.0, "completed": 3, "ttfts": [0.0, 0.5], "itls": [[0.001, 2.0], []], "label": null, "ok": true, "t": "caf\\u00e9 \\ud83d\\ude00 \\u007f\\u0001\\n\\"\\\\ ", "e": 1e-07, "big": 1e+21, "n": -4.0}',
    );
    assert.equal(pyJsonString("\b\f\r\t\u2028"), '"\\b\\f\\r\\t\\u2028"');
    assert.equal(pyJson({ x: NaN, y: [Infinity] }, () => true), '{"x": null, "y": [null]}');
  });

  test("the same data as JSON.stringify, whatever the text", () => {
    const texts = ["plain", "\u0000\u001f", "emoji \u{1F680}", "\ud800 lone", "é", "\\\"", ""];
    const v = { generated_texts: texts, errors: texts.map((t) => `E ${t}`), input_lens: [1, 2], ttfts: [0.25, 1e-9], nested: { mean_ttft_ms: 5 } };
    assert.deepEqual(JSON.parse(vllmJson(v)), JSON.parse(JSON.stringify(v)));
    assert.ok(/^[\x20-\x7e]*$/.test(vllmJson(v)), "only printable ASCII");
  });

  test("vLLM's float keys", () => {
    for (const k of ["request_rate", "burstiness", "duration", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput", "ttfts", "itls", "latencies", "start_times", "queue_times", "max_output_tokens_per_s", "rtfx", "p99.9_ttft_ms", "std_e2el_ms"]) assert.ok(vllmFloatKey(k), k);
    for (const k of ["completed", "failed", "num_prompts", "max_concurrency", "total_input_tokens", "total_output_tokens", "input_lens", "output_lens", "max_concurrent_requests"]) assert.ok(!vllmFloatKey(k), k);
  });
});
