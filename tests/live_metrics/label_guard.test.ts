/**
 * The label guard: secret-looking label names, URL credentials, secret query values, API key
 * shapes, bearer credentials, registered secrets and over-long values are refused (by the guard and
 * by the registry, for family labels and const labels alike), the refusal never quotes the value,
 * and ordinary labels (an HMAC endpoint tag, a model id) pass.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { clearSecrets, registerSecret } from "../../lib/evidence/mod.ts";
import { assertSafeLabel, labelNameProblem, LabelRefusedError, labelValueProblem, MetricsRegistry } from "../../lib/live_metrics/mod.ts";

const TAG = "hmac-sha256:" + "3f".repeat(32);

test("label names that look secret or are reserved are refused", () => {
  for (const n of ["api_key", "apiKey", "token", "access_token", "authorization", "auth", "password", "x_api_key", "cookie"]) {
    assert.match(labelNameProblem(n) ?? "", /secret/, n);
  }
  for (const n of ["__name__", "__x", "le", "quantile", "bad-name", "1x", ""]) assert.ok(labelNameProblem(n), n);
  for (const n of ["endpoint", "model", "level", "max_tokens", "tokens", "kind", "run_id"]) assert.equal(labelNameProblem(n), null, n);
});

test("label values with URL credentials, secret query values, keys or bearer tokens are refused, never quoted", () => {
  const bad = [
    "http://user:pw@10.0.0.1:8000/v1",
    "https://admin@example.com/v1",
    "see http://u:p@h/",
    "http://h:8000/v1?api_key=abcdef",
    "http://h:8000/v1#access_token=abcdef",
    "sk-abcdefghijklmnopqrstuvwx",
    "sk-ant-api03-abcdefghijklmnopqrst",
    "hf_abcdefghijklmnopqrstuvwxyz",
    "ghp_abcdefghijklmnopqrstuvwxyz0123",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlMTIz",
    "Bearer abc123def456",
    "--api-key=whatever",
    '{"token": "zzzz"}',
    "x".repeat(257),
  ];
  for (const v of bad) {
    const why = labelValueProblem("endpoint", v);
    assert.ok(why, `refused: ${v}`);
    assert.ok(!why!.includes(v), "the reason never quotes the value");
    assert.throws(() => assertSafeLabel("endpoint", v), (e: unknown) => e instanceof LabelRefusedError && !e.message.includes(v));
  }
});

test("a registered secret of this run is refused as a label value", () => {
  registerSecret("s3cr3t-value-42");
  try {
    assert.ok(labelValueProblem("model", "prefix s3cr3t-value-42"));
  } finally {
    clearSecrets();
  }
  assert.equal(labelValueProblem("model", "prefix s3cr3t-value-42"), null);
});

test("ordinary label values pass: the HMAC endpoint tag, model ids, levels, plain URLs", () => {
  for (const v of [TAG, "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "2", "poisson:rate=4", "", "conversations", "http://127.0.0.1:8000/v1", "sk-short"]) {
    assert.equal(labelValueProblem("endpoint", v), null, v);
  }
});

test("the registry guards every new label set and its const labels", () => {
  assert.throws(() => new MetricsRegistry({ constLabels: { endpoint: "http://u:p@h/v1" } }), LabelRefusedError);
  assert.throws(() => new MetricsRegistry({ constLabels: { api_key: "x" } }), LabelRefusedError);
  const reg = new MetricsRegistry({ constLabels: { endpoint: TAG } });
  assert.throws(() => reg.counter({ name: "ik_a_total", help: "", labelNames: ["token"] }), LabelRefusedError);
  const c = reg.counter({ name: "ik_sent_total", help: "", labelNames: ["model"] });
  assert.throws(() => c.inc({ model: "sk-abcdefghijklmnopqrstuvwx" }), LabelRefusedError);
  c.inc({ model: "Qwen/Qwen3-8B" });
  assert.ok(!reg.render().includes("sk-abc"));
  assert.equal(reg.snapshot().series.length, 1, "a refused label set leaves no series behind");
});
