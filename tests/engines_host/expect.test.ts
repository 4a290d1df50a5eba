/** checkExpect: hard-gate violations, unverified keys, normalisation, engine-own key names. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { checkExpect, formatViolation, normaliseExpectValue } from "../../lib/engines_host/expect.ts";
import { parseResolvedConfig } from "../../lib/engines_host/resolved_config.ts";
import { scrubbedJson } from "../../lib/evidence/mod.ts";
import { ROOT } from "../_helpers/ik.ts";

const log = (e: string) => readFileSync(join(ROOT, "tests", "testdata", "engines", e, "startup.log"), "utf8");

test("matching expect on the vLLM fixture: ok and RESOLVED", () => {
  const r = parseResolvedConfig(log("vllm"), "vllm");
  const c = checkExpect({ max_num_seqs: 256, enable_prefix_caching: true, quantization: null }, r);
  assert.deepEqual(c.violations, []);
  assert.deepEqual(c.unverified, []);
  assert.equal(c.ok, true);
  assert.equal(c.canBeResolved, true);
  assert.equal(c.status, "RESOLVED");
});

test("a different value is a [HARD GATE] violation", () => {
  const r = parseResolvedConfig(log("vllm"), "vllm");
  const c = checkExpect({ max_num_seqs: 128, enable_prefix_caching: false }, r);
  assert.equal(c.ok, false);
  assert.deepEqual(c.violations.map((v) => [v.setting, v.expected, v.actual]), [
    ["max_num_seqs", 128, 256],
    ["enable_prefix_caching", false, true],
  ]);
  assert.equal(c.violations[0].message, "[HARD GATE] max_num_seqs: expected 128, resolved 256");
  assert.ok(c.violations.every((v) => v.message.startsWith("[HARD GATE] ")));
  assert.equal(formatViolation({ setting: "k", expected: "a", actual: null }), '[HARD GATE] k: expected "a", resolved null');
});

test("an absent key is unverified and the status cannot be RESOLVED; each engine's own names", () => {
  const sg = parseResolvedConfig(log("sglang"), "sglang");
  const c = checkExpect({ max_num_seqs: 4096 }, sg);
  assert.deepEqual(c.unverified, ["max_num_seqs"]);
  assert.equal(c.ok, true, "unverified is not a violation");
  assert.equal(c.canBeResolved, false);
  assert.equal(c.status, "UNPROVEN");
  assert.match(c.hints.max_num_seqs, /max_running_requests/);
  assert.equal(checkExpect({ max_running_requests: 4096 }, sg).canBeResolved, true);
  const ll = parseResolvedConfig(log("llamacpp"), "llamacpp");
  const l = checkExpect({ n_slots: 4, n_ctx_slot: 4096 }, ll);
  assert.equal(l.canBeResolved, true);
  assert.deepEqual(checkExpect({ n_slots: 8 }, ll).violations.map((v) => v.actual), [4]);
  const un = checkExpect({ max_num_seqs: 1 }, parseResolvedConfig("", "vllm"));
  assert.deepEqual(un.unverified, ["max_num_seqs"]);
  assert.equal(un.status, "UNPROVEN");
});

test("SELF_REPORTED stays SELF_REPORTED, its values still checked", () => {
  const r = parseResolvedConfig('ik_resolved_config {"max_num_seqs": 8}', "mock-engine");
  const c = checkExpect({ max_num_seqs: 8 }, r);
  assert.equal(c.ok, true);
  assert.equal(c.canBeResolved, false);
  assert.equal(c.status, "SELF_REPORTED");
  assert.equal(checkExpect({ max_num_seqs: 9 }, r).ok, false);
});

test("normalisation: Python constants, numbers as numbers, numeric strings, trimming, nesting", () => {
  const resolved = {
    status: "RESOLVED" as const,
    config: {
      a: "True", b: "None", n: 256, f: 0.9, s: " fcfs ", t: "256", u: "256 tokens",
      nested: { method: "ngram", k: [1, "2"] },
    },
  };
  const c = checkExpect({
    a: true, b: null, n: "256", f: "0.90", s: "fcfs", t: 256, "nested.method": "ngram", nested: { k: [1, 2], method: "ngram" },
  }, resolved);
  assert.deepEqual(c.violations, []);
  assert.equal(c.canBeResolved, true);
  const bad = checkExpect({ u: 256, n: "0x100", a: "yes", s: "FCFS", n2: 1 }, resolved);
  assert.deepEqual(bad.violations.map((v) => v.setting), ["u", "n", "a", "s"]);
  assert.deepEqual(bad.unverified, ["n2"]);
  assert.equal(normaliseExpectValue("False"), false);
  assert.equal(normaliseExpectValue(" 1e3 "), 1000);
  assert.equal(normaliseExpectValue(""), "");
  assert.deepEqual(checkExpect(null as unknown as Record<string, unknown>, resolved).unverified, []);
});

test("a violation stored through the scrubber (resolved_config/*.json) keeps the setting's name", () => {
  const r = parseResolvedConfig(log("vllm"), "vllm");
  const stored = JSON.parse(scrubbedJson({ expect_check: checkExpect({ max_num_seqs: 128 }, r) }));
  assert.deepEqual(stored.expect_check.violations, [
    { setting: "max_num_seqs", expected: 128, actual: 256, message: "[HARD GATE] max_num_seqs: expected 128, resolved 256" },
  ]);
});
