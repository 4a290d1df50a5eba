/**
 * Limitations from how tokens arrived (both runtimes, < 1 s): events that pack several tokens
 * without ids (TPOT assumes k_first = 1), and requests whose tokens all arrived at once (no TPOT).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CountTally, countLimitations, type CountRow, tallyLimitations } from "../../lib/bench/count_limitations.ts";

const row = (id: string, n: number, events: number, assumed: boolean | null): CountRow => ({
  id, ok: true, n_tokens: n, token_count_method: assumed ? "usage" : "ids", count_mismatch: null, tokens_per_event_max: assumed ? null : 1,
  n_token_events: events, k_first_assumed: assumed,
});
const packedLine = (lims: string[]) => lims.find((l) => /more tokens than token events/.test(l));

test("usage over the token events + 1 with no ids is named, with the first example; ids, EOS's one extra and one event are not", () => {
  const lims = countLimitations([row("a", 16, 6, true), row("b", 12, 3, true), row("c", 8, 7, true), row("d", 9, 9, false), row("e", 5, 1, true)],
    ["ignore_eos"], new Map(), "auto", "sglang");
  const line = packedLine(lims);
  assert.ok(line, lims.join("\n"));
  assert.match(line, /^2 request\(s\) have more tokens than token events and no ids \(e\.g\. a: 16 tokens in 6 events\)/);
  assert.match(line, /TPOT and decode tok\/s assume the first event held one, so they read low/);
  assert.equal(packedLine(countLimitations([row("c", 8, 7, true), row("d", 9, 3, false)], ["ignore_eos"], new Map(), "auto", "vllm")), undefined);
});

test("the count survives a merge of tallies (load mode's shards)", () => {
  const a = new CountTally(), b = new CountTally();
  a.add(row("x", 16, 6, true), 16);
  b.add(row("y", 16, 6, true), 16);
  b.add(row("z", 16, 16, true), 16);
  a.merge(b);
  assert.match(packedLine(tallyLimitations(a, ["ignore_eos"], "auto", "sglang")) ?? "", /^2 request\(s\)/);
});

test("ok requests of 2+ tokens without a TPOT (all tokens at once: a buffering proxy) are named; 1-token and failed ones are not", () => {
  const timed = (id: string, tpot: number | null, n = 8, ok = true): CountRow => ({ ...row(id, n, n, false), ok, tpot_ms: tpot });
  const lims = countLimitations([timed("a", 2.5), timed("b", null), timed("c", null, 1), timed("d", null, 8, false), timed("e", null, 4)],
    ["ignore_eos"], new Map(), "auto", "vllm");
  const line = lims.find((l) => /have no TPOT/.test(l));
  assert.ok(line, lims.join("\n"));
  assert.match(line, /^2 request\(s\) have no TPOT: all their tokens reached ik at once \(e\.g\. b: 8 tokens in 8 events, in one read\)/);
  assert.match(line, /proxy_buffering/);
  assert.equal(countLimitations([timed("a", 2.5), timed("c", null, 1)], ["ignore_eos"], new Map(), "auto", "vllm").find((l) => /have no TPOT/.test(l)), undefined);
  // One event holding every token: said so, not "one read".
  const one = countLimitations([{ ...timed("f", null, 6), n_token_events: 1 }], ["ignore_eos"], new Map(), "auto", "vllm").find((l) => /have no TPOT/.test(l));
  assert.match(one ?? "", /\(e\.g\. f: 6 tokens in one event\)/);
});
