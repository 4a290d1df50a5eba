/**
 * A rounds run stopped short says what ran: whole rounds (an interrupted cell not counted) and the
 * balance of their order, in plan.ran, summary.md's heading and ik report's heading. < 1 s, both runtimes.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ranSoFar } from "../../lib/rounds/run.ts";
import { roundsBlocks } from "../../lib/report/document/rounds_doc.ts";

describe("what a stopped rounds run ran", () => {
  test("whole rounds from cells run round by round; balance of those rounds' order", () => {
    const ok = { interrupted: false }, cut = { interrupted: true };
    assert.deepEqual(ranSoFar([ok, ok, ok, cut], ["a", "b"]), { cells: 4, whole_rounds: 1, balanced: false });
    assert.deepEqual(ranSoFar([ok, ok, ok, ok, cut], ["a", "b"]), { cells: 5, whole_rounds: 2, balanced: true }, "2 engines: period 2");
    assert.deepEqual(ranSoFar([ok, ok, cut], ["a", "b", "c"]), { cells: 3, whole_rounds: 0, balanced: false });
  });

  test("ik report's heading and limitations say STOPPED SHORT, not the plan's rounds and balance", () => {
    const plan = {
      mode: "single", rounds: 4, engines: [{ label: "a" }, { label: "b" }], design: { design: "williams", period: 2, balanced: true },
      prompts: { name: "p", sha256: "0".repeat(64), n: 2 }, interrupted: { after_cells: 3, note: "interrupted" }, ran: { cells: 3, whole_rounds: 1, balanced: false },
    };
    const blocks = roundsBlocks({ kind: "rounds", path: "x", plan, summary: {}, resolved: {}, cells: [], records: new Map(), notes: [] } as never);
    const all = JSON.stringify(blocks);
    assert.match(all, /bench rounds: single mode, STOPPED SHORT: 1 of 4 rounds whole, 2 engines/);
    assert.match(all, /balanced: NO over the 1 whole round\(s\) that ran/);
    assert.match(all, /interrupted after 3 cell\(s\): 1 of 4 rounds ran whole/);
    assert.doesNotMatch(all, /4 rounds, 2 engines/);
  });
});
