/** lib/rounds/cell_checks and verdict: the cell verdicts and ratio readings of issue 18 (pure, both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { checkServedModel, engineExitedDetail, hardGateDetail, maxFailFrom, readRatio, referenceVerdict, tooManyFailures } from "../../lib/rounds/mod.ts";

describe("checkServedModel", () => {
  test("model.id must be served; without one the first served model; an engine that lists nothing is trusted", () => {
    assert.deepEqual(checkServedModel("m", ["m", "n"]), { model: "m", status: null, detail: null });
    assert.deepEqual(checkServedModel("m", ["n", "m"]), { model: "m", status: null, detail: null }, "model.id wins over the first listed");
    const miss = checkServedModel("Qwen/Qwen3-8B", ["qwen3-8b", "other"]);
    assert.equal(miss.status, "model_missing");
    assert.equal(miss.model, null);
    assert.equal(miss.detail, `the manifest's model.id "Qwen/Qwen3-8B" is not served; the engine serves "qwen3-8b", "other"`);
    assert.match(checkServedModel("x", Array.from({ length: 10 }, (_, i) => `m${i}`)).detail as string, /"m7" and 2 more$/);
    assert.deepEqual(checkServedModel("m", []), { model: "m", status: null, detail: null });
    assert.deepEqual(checkServedModel(null, ["a"]), { model: "a", status: null, detail: null });
    assert.equal(checkServedModel(null, []).status, "serve_failed");
  });
});

describe("engine exit, failures, hard gate", () => {
  const metrics = { all: { failed_requests: { value: 10, n: 12 } } };
  test("engineExitedDetail names the exit and the failures", () => {
    assert.equal(engineExitedDetail({ code: 1, signal: null }, "during the measurement", metrics), "the engine exited with code 1 during the measurement; 10 of 12 requests failed: this round of it is not comparable");
    assert.match(engineExitedDetail({ code: null, signal: "SIGKILL" }, "during the measurement", {}), /was killed by SIGKILL during the measurement: /);
  });
  test("--slo-max-fail from --serve-args; more failures than it are too many", () => {
    assert.equal(maxFailFrom(["--max-tokens", "4"]), null);
    assert.equal(maxFailFrom(["--slo-max-fail", "2"]), 2);
    assert.equal(maxFailFrom(["--slo-max-fail=0"]), 0);
    assert.throws(() => maxFailFrom(["--slo-max-fail", "x"]), (e) => e instanceof IkError && e.code === 64);
    assert.equal(tooManyFailures(metrics, null), null);
    assert.equal(tooManyFailures(metrics, 10), null);
    assert.equal(tooManyFailures(metrics, 9), "10 of 12 requests failed, more than --slo-max-fail 9");
  });
  test("hardGateDetail lists every violation", () => {
    assert.match(hardGateDetail(["[HARD GATE] a: expected 1, resolved 2", "[HARD GATE] b: expected true, resolved false"]), /^\[HARD GATE\] a: .*; \[HARD GATE\] b: .*: the engine did not run as the manifest expects/);
  });
});

describe("readRatio / referenceVerdict", () => {
  test("a CI that holds 1 is no clear difference; under 3 pairs too few rounds; the side decides worse or better", () => {
    assert.equal(readRatio([0.3, 4.71], false, 6), "no clear difference");
    assert.equal(readRatio([1.1, 1.3], false, 6), "worse");
    assert.equal(readRatio([1.1, 1.3], true, 6), "better");
    assert.equal(readRatio([0.7, 0.9], true, 6), "worse");
    assert.equal(readRatio([0.7, 0.9], true, 2), "too few rounds");
    assert.equal(readRatio([null, null], true, 6), "n/a");
    assert.equal(readRatio([0.7, 0.9], null, 6), "n/a");
  });
  test("best only when every other engine reads worse", () => {
    assert.deepEqual(referenceVerdict([["b", "worse"], ["c", "worse"]]), { best: true, verdict: "best" });
    assert.deepEqual(referenceVerdict([["b", "worse"], ["c", "no clear difference"]]), { best: false, verdict: "no clear difference vs c" });
    assert.deepEqual(referenceVerdict([["b", "too few rounds"]]), { best: false, verdict: "too few rounds vs b" });
    assert.equal(referenceVerdict([]).best, false);
    // The reference is the best median over all its rounds; an engine that missed rounds can read
    // better over the rounds both ran: the reference's row says so, never "no clear difference".
    assert.deepEqual(referenceVerdict([["a", "better"]]), { best: false, verdict: "not best: a better over the rounds both ran" });
    assert.deepEqual(referenceVerdict([["a", "better"], ["c", "no clear difference"], ["d", "worse"]]), {
      best: false,
      verdict: "not best: a better over the rounds both ran; no clear difference vs c",
    });
  });
});
