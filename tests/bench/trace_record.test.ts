/**
 * What a replay's records say (lib/bench/trace_record.ts): a set that is a seeded sample of its
 * trace is named (arrivals thinned), a time window is not; an interrupted replay counts what it
 * sent against what it planned; a trace with no span has no mean rate and no rate claim; a replay's
 * claim is worded as a replay's (no grid). Pure: about 50 ms.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LevelResult } from "../../lib/bench/load_level.ts";
import { traceData, traceLimitations, traceSourceOf, traceStar, traceSummaryHead } from "../../lib/bench/trace_record.ts";
import { TIME_WINDOW_SELECTION, type TraceFacts, traceFactsOf, traceSchedule } from "../../lib/schedule/trace_schedule.ts";
import type { Prompt } from "../../lib/prompts/prompt.ts";

const facts = (o: Partial<TraceFacts> = {}): TraceFacts => ({ n: 40, rows: 40, dropped: 0, timeScale: 1, maxDurationS: null, spanS: 39, rateRps: 1, ...o });
const level = (o: Partial<LevelResult> & { slo_ok?: boolean | null } = {}): LevelResult =>
  ({ level: 1, name: "trace", sent: 40, not_judged: null, not_achieved: null, windows: [], interrupted_at_s: null, summary: { slo_ok: o.slo_ok === undefined ? true : o.slo_ok }, ...o }) as unknown as LevelResult;
const manifest = (rows: number, chosen: number, numPrompts: number, extra: Record<string, unknown> = {}) =>
  ({ dataset: { name: "mooncake", rows, chosen, num_prompts: numPrompts, filters: [{ filter: "output_length 0", dropped: 2 }, { filter: "blank lines", dropped: 0 }], options: { order: "arrival", ...extra } } });

test("traceSourceOf: a seeded sample of the rows that passed is sampled; every row, or a time window, is not", () => {
  assert.deepEqual(traceSourceOf(manifest(40, 8, 8)), { sourceRows: 40, passedRows: 38, chosenRows: 8, sampled: true });
  assert.equal(traceSourceOf(manifest(40, 38, 0))?.sampled, false, "every row that passed (2 dropped by a filter)");
  assert.equal(traceSourceOf(manifest(40, 6, 6, { selection: TIME_WINDOW_SELECTION }))?.sampled, false, "the first 6 in time order");
  assert.equal(traceSourceOf(null), null);
  assert.equal(traceSourceOf({ name: "hand-made" }), null);
});

test("traceLimitations: a sampled set's thinned arrivals are said; a window's are not", () => {
  const sampled = traceLimitations(facts({ n: 8, source: traceSourceOf(manifest(40, 8, 8)) }), [level({ sent: 8 })], false);
  assert.ok(sampled.some((l) => /^replaying 8 of 38 trace rows .*arrivals thinned, the rate is not the trace's/.test(l)), sampled.join(" | "));
  const window = traceLimitations(facts({ n: 6, source: traceSourceOf(manifest(40, 6, 6, { selection: TIME_WINDOW_SELECTION })) }), [level({ sent: 6 })], false);
  assert.ok(!window.some((l) => /thinned/.test(l)), window.join(" | "));
  assert.match(window[0], /^trace replay: 6 request\(s\) at the trace's own arrival times over 39\.0 s \(mean 1\.00 req\/s/);
});

test("an interrupted replay: sent against planned, in data.trace, the limitations and the summary", () => {
  const lv = [level({ sent: 4, interrupted: true, interrupted_at_s: 3.5 })];
  const d = traceData(facts(), lv);
  assert.equal(d.sent_rows, 4);
  assert.equal(d.planned_rows, 40);
  assert.equal(d.interrupted_at_s, 3.5);
  const lines = traceLimitations(facts(), lv, true);
  assert.match(lines[0], /^trace replay: 4 of 40 request\(s\) at the trace's own arrival times/);
  assert.ok(lines.some((l) => /interrupted 3\.5 s into its schedule after 4 of 40 request\(s\): its per-second windows end at the interrupt/.test(l)), lines.join(" | "));
  assert.equal(traceSummaryHead(facts(), lv, true), "trace replay of 4 of 40 (interrupted) request(s) at the trace's own times (mean 1.00 req/s)");
  // Read back (a merge): the planned count, not the sent one.
  assert.equal(traceFactsOf(d)?.n, 40);
  assert.equal(traceFactsOf({ ...d, planned_rows: undefined, sent_rows: 40 })?.n, 40, "a record before planned_rows");
});

test("a trace with no span: no mean rate, no invented one anywhere, no rate claimed", () => {
  const at = (s: number, i: number): Prompt => ({ id: `r${i}`, bucket: "t", messages: [{ role: "user", content: "x" }], maxTokens: 4, kind: "chat", extra: { arrival_s: s } });
  assert.equal(traceSchedule([at(5, 0)], "t", { timeScale: 1, maxDurationS: null }).meanRateRps, null);
  const t = traceSchedule([1, 1, 1].map(at), "t", { timeScale: 1, maxDurationS: null });
  assert.equal(t.meanRateRps, null);
  assert.equal(traceSchedule([0, 0.5, 1.5, 3, 4.2].map(at), "t", { timeScale: 1, maxDurationS: null }).meanRateRps, 4 / 4.2);
  const f = facts({ n: 3, spanS: 0, rateRps: null });
  const d = traceData(f, [level({ sent: 3 })]);
  assert.equal(d.mean_rate_rps, null);
  assert.deepEqual(traceFactsOf(d)?.rateRps, null, "read back as null, still a replay");
  const lines = traceLimitations(f, [level({ sent: 3 })], false);
  assert.match(lines[0], /^trace replay: 3 request\(s\) at the trace's own arrival times all due at one instant \(no span: no mean rate\)/);
  assert.ok(!lines.join(" ").includes("req/s"), lines.join(" | "));
  assert.ok(!traceSummaryHead(f, [level({ sent: 3 })], false).includes("req/s"));
  const star = traceStar(f, { value: 3, reason: "SLO holds at every level tried: the true N* may be above the grid", lowerBound: false }, level({ level: 3 }));
  assert.equal(star.value, null);
  assert.match(star.reason, /no span\): no rate to claim/);
});

test("traceStar: a replay's claim in a replay's words, never a grid's", () => {
  const grid = { value: 2.5, reason: "SLO holds at every level tried: the true N* may be above the grid", lowerBound: false };
  const held = traceStar(facts({ rateRps: 2.5 }), grid, level({ level: 2.5 }));
  assert.equal(held.value, 2.5);
  assert.match(held.reason, /^trace replay: the SLO held over the whole replay/);
  assert.ok(!/grid\b(?!\))/.test(held.reason.replace("no grid", "")), held.reason);
  const failed = traceStar(facts(), { value: null, reason: "SLO first fails at level 1 (ttft_p95_ms)", lowerBound: false }, level({ slo_ok: false }));
  assert.deepEqual([failed.value, failed.reason], [null, "trace replay: the SLO failed over the replay"]);
  const cut = traceStar(facts(), { value: null, reason: "level 1 was not judged (interrupted) and no level below it held the SLO", lowerBound: false }, level({ slo_ok: null, not_judged: "interrupted" }));
  assert.deepEqual([cut.value, cut.reason], [null, "trace replay not judged (interrupted)"]);
});
