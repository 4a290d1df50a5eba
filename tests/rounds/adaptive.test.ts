/** lib/rounds/adaptive: plan settings, its usage errors, whole-period checks and the CI target. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { SeededRng } from "../../lib/stats/mod.ts";
import { adaptiveCheck, adaptivePlan, adaptiveStep, planRounds, type SummaryCell } from "../../lib/rounds/mod.ts";

function cellsFor(speeds: Record<string, number>, rounds: number, noise: number): SummaryCell[] {
  const rng = new SeededRng(3);
  const out: SummaryCell[] = [];
  for (let k = 1; k <= rounds; k++) {
    for (const [label, s] of Object.entries(speeds)) {
      out.push({ round: k, label, status: "ok", metrics: { all: { decode_tok_s: { value: s * (1 + noise * (rng.next() - 0.5)) }, ttft_ms: { value: 1 } } } });
    }
  }
  return out;
}

function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof IkError);
    assert.equal(e.code, 64);
    return e.oneLine();
  }
  assert.fail("no error");
}

describe("adaptivePlan / planRounds", () => {
  test("defaults: at most 12 rounded up to whole periods, minimum the default rounds", () => {
    const { adaptive, rounds } = adaptivePlan(3, null, null, 0.01, "single");
    assert.equal(rounds, 12);
    assert.deepEqual([adaptive.period, adaptive.min_rounds, adaptive.first_check_round, adaptive.max_rounds], [6, 6, 6, 12]);
    assert.match(adaptive.max_rounds_source, /default: 12 rounded up/);
    assert.match(adaptive.rule, /every 6 round\(s\)\) once at least 6 rounds ran.*half-width <= 0\.01 x the ratio.*at most 12 rounds/);
    assert.equal(adaptivePlan(5, null, null, 0.05, "single").rounds, 20);
    const two = adaptivePlan(2, 9, 3, 0.05, "single").adaptive;
    assert.deepEqual([two.first_check_round, two.max_rounds, two.max_rounds_source], [4, 9, "--rounds"]);
  });

  test("usage errors: load mode, target range, min rounds, cannot stop anything", () => {
    assert.match(usage(() => adaptivePlan(2, null, null, 0.01, "load")), /^ik: --ci-target: the adaptive stop is for single mode/);
    assert.match(usage(() => adaptivePlan(2, null, null, 1, "single")), /between 0 and 1/);
    assert.match(usage(() => adaptivePlan(2, null, null, 0, "single")), /between 0 and 1/);
    assert.match(usage(() => adaptivePlan(2, null, 1, 0.1, "single")), /^ik: --min-rounds: 1 is under 2: a ratio's confidence interval needs 2 round pairs/);
    // One engine: its median's interval over rounds needs 3 (ik gives none below 3).
    assert.match(usage(() => adaptivePlan(1, null, 2, 0.1, "single")), /^ik: --min-rounds: 2 is under 3: one engine's interval over rounds needs 3 rounds.*give --min-rounds 3 or more/);
    assert.match(usage(() => adaptivePlan(1, 2, null, 0.1, "single")), /^ik: --rounds: 2 is under 3/);
    assert.equal(adaptivePlan(1, null, 3, 0.1, "single").adaptive.first_check_round, 3);
    assert.match(usage(() => adaptivePlan(3, 6, null, 0.1, "single")),
      /cannot stop anything: the first check comes after round 6 \(whole Williams periods of 6 for 3 engine\(s\), from --min-rounds 6 on\) and --rounds is 6; raise --rounds/);
    assert.match(usage(() => planRounds({ nEngines: 2, minRounds: 4, mode: "single" })), /--min-rounds: applies only with --ci-target/);
    assert.match(usage(() => planRounds({ nEngines: 2, rounds: 0, mode: "single" })), /^ik: --rounds: 0 is not a whole number/);
  });

  test("planRounds without a target: the default rounds and no plan", () => {
    assert.deepEqual(planRounds({ nEngines: 3, mode: "load" }), { rounds: 6, adaptive: null });
    assert.deepEqual(planRounds({ nEngines: 2, rounds: 5, mode: "single" }), { rounds: 5, adaptive: null });
    assert.equal(planRounds({ nEngines: 2, ciTarget: 0.02, mode: "single" }).adaptive?.max_rounds, 12);
  });

  test("checks only at whole periods from the first check, and at the last round (which never stops early)", () => {
    const { adaptive, rounds } = adaptivePlan(2, 9, 3, 0.05, "single");
    const steps = Array.from({ length: rounds }, (_, i) => adaptiveStep(i + 1, adaptive, rounds));
    assert.deepEqual(steps.map((s) => s.check), [false, false, false, true, false, true, false, true, true]);
    assert.deepEqual(steps.map((s) => s.stopIfMet), [false, false, false, true, false, true, false, true, false]);
    const even = adaptivePlan(2, 8, 3, 0.05, "single").adaptive;
    assert.deepEqual(adaptiveStep(8, even, 8), { check: true, stopIfMet: false }, "a whole period that is the last round");
  });
});

describe("adaptiveCheck", () => {
  test("met with small noise; not met with large noise; the best engine is not counted", () => {
    const quiet = adaptiveCheck(cellsFor({ a: 100, b: 80 }, 4, 0.004), ["a", "b"], 4, 0.02);
    assert.equal(quiet.met, true, JSON.stringify(quiet.widths));
    assert.deepEqual(quiet.widths.a, { width: null, basis: "reference engine (the denominator of every ratio)", counted: false });
    assert.equal(quiet.widths.b.basis, "ratio_ci95");
    assert.ok((quiet.widths.b.width as number) < 0.02);
    const loud = adaptiveCheck(cellsFor({ a: 100, b: 80 }, 4, 0.3), ["a", "b"], 4, 0.02);
    assert.equal(loud.met, false);
    assert.ok((loud.widths.b.width as number) > 0.02);
  });

  test("the only engine uses the CI of its median; an engine with no round blocks the stop", () => {
    const one = adaptiveCheck(cellsFor({ a: 100 }, 3, 0.004), ["a"], 3, 0.02);
    assert.deepEqual([one.met, one.widths.a.basis, one.widths.a.counted], [true, "ci95 of the median", true]);
    const cells = cellsFor({ a: 100, b: 80 }, 4, 0.004).map((c) => (c.label === "b" ? { ...c, status: "startup_timeout" } : c));
    const blocked = adaptiveCheck(cells, ["a", "b"], 4, 0.02);
    assert.equal(blocked.met, false);
    assert.deepEqual(blocked.widths.b, { width: null, basis: "no successful round", counted: true });
  });

  test("an engine with failures has no ratio and falls back to its median's CI", () => {
    const cells = cellsFor({ a: 100, b: 120 }, 4, 0.004);
    for (const c of cells) if (c.label === "b") c.metrics!.all.failed_requests = { value: 1, n: 4 };
    const check = adaptiveCheck(cells, ["a", "b"], 4, 0.02);
    assert.equal(check.widths.b.basis, "ci95 of the median");
    assert.equal(check.widths.a.counted, false, "a is best: b is not eligible");
    assert.equal(check.round, 4);
  });
});
