/** lib/rounds/markdown and format: golden snippets of summary.md and the seed's number format. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatG, formatValue, type ReportPlan, type RoundsSummary, roundsMarkdown, type SummaryRow } from "../../lib/rounds/mod.ts";
import { shellJoin } from "../../lib/rounds/format.ts";
import { shellSplit } from "../../lib/cli/argv_words.ts";
import { scrubArgv } from "../../lib/evidence/mod.ts";

const base: Omit<SummaryRow, "engine" | "median" | "ci95" | "best" | "ratio_to_best" | "ratio_ci95" | "verdict"> = {
  bucket: "all", metric: "decode_tok_s", unit: "tok/s", higher_is_better: true, n: 6, n_pairs: 6, failed_requests: 0, by_round: {}, reference: "a",
};
const summary: RoundsSummary = {
  rows: [
    { ...base, engine: "a", median: 101.234, ci95: [99.5, 103.01], best: "a", ratio_to_best: 1, ratio_ci95: [null, null], verdict: "best" },
    { ...base, engine: "b", median: 87.9, ci95: [86, 89.96], best: "a", ratio_to_best: 0.86956, ratio_ci95: [0.8512, 0.8883], verdict: "worse" },
    { ...base, engine: "c", median: 1234.56, ci95: [1200.4, 1300], best: "a", ratio_to_best: null, ratio_ci95: [null, null], failed_requests: 2, verdict: "never ranked: failed requests" },
  ],
  failures: [{ engine: "c", bucket: "all", failed_requests: 2, requests: 48, rounds: 6 }],
  definitions: {},
};
const plan: ReportPlan = {
  mode: "single", rounds: 6, engines: [{}, {}, {}], design: { design: "williams", period: 6, balanced: true },
  prompts: { name: "tiny", sha256: "0123456789abcdef0123", n: 2 },
  extra_body: { value: { top_k: 20, temperature: 0.6 }, source: "manifest workload.extra_body" },
};
const resolved = {
  a: { status: "RESOLVED", version: "0.11.0", warnings: 0, unknown_settings: [], violations: [] },
  b: { status: "RESOLVED", version: null, warnings: 1, unknown_settings: ["foo"], violations: ["max_num_seqs: expected 256, got 128 [HARD GATE]"] },
  c: { status: "SELF_REPORTED", warnings: 0, unknown_settings: [], violations: [], self_reported: ["max_num_seqs"] },
};
const cells = [
  { round: 1, label: "a", status: "ok" },
  { round: 2, label: "c", status: "exited_early", ready: { last: "process exited with code 1 | boom\nline2" } },
  { round: 3, label: "b", status: "serve_failed", serve: { returncode: 2 } },
];

describe("roundsMarkdown", () => {
  const md = roundsMarkdown(summary, plan, cells, resolved);
  test("header, design and the extra body", () => {
    assert.ok(md.startsWith([
      "# bench rounds: single mode, 6 rounds, 3 engines", "",
      "Order: williams design, period 6, balanced: yes. Prompt set tiny (sha256 0123456789ab..., n=2).", "",
      'Every request carried --extra-body {"temperature": 0.6, "top_k": 20} (manifest workload.extra_body).', "",
      "Medians and CIs are [observed] (client-side timer in `bench serve`); ratios are [derived].", "",
    ].join("\n")), md);
    assert.ok(md.endsWith("\n"));
  });
  test("comparison rows with (best), [FAILURES], [HARD GATE], [SELF-REPORTED CONFIG]", () => {
    assert.ok(md.includes([
      "| engine | bucket | metric | median [observed] | 95% CI | rounds | ratio to reference [derived] | ratio 95% CI | reading |",
      "|---|---|---|---|---|---|---|---|---|",
      "| a (best) | all | decode_tok_s | 101 tok/s | 99.5 - 103 | 6 | 1 | - | best |",
      "| b [HARD GATE] | all | decode_tok_s | 87.9 tok/s | 86 - 90 | 6 | 0.87 | 0.851 - 0.888 | worse |",
      "| c [FAILURES] [SELF-REPORTED CONFIG] | all | decode_tok_s | 1235 tok/s | 1200 - 1300 | 6 | n/a | - | never ranked: failed requests |",
    ].join("\n")), md);
    assert.ok(md.includes("## Failed requests\n\n| engine | bucket | failed | requests | rounds |\n|---|---|---|---|---|\n| c | all | 2 | 48 | 6 |"));
  });
  test("resolved configuration and failed cells, table-safe", () => {
    assert.ok(md.includes("| a | RESOLVED | 0.11.0 | 0 | - | - | - |"), md);
    assert.ok(md.includes("| b | RESOLVED | n/a | 1 | foo | max_num_seqs: expected 256, got 128 [HARD GATE] | - |"));
    assert.ok(md.includes("| c | SELF_REPORTED | n/a | 0 | - | - | max_num_seqs |"));
    assert.ok(md.includes("own `ik_resolved_config` line"));
    assert.ok(md.includes([
      "## Failed cells", "", "| round | engine | status | detail |", "|---|---|---|---|",
      "| 2 | c | exited_early | process exited with code 1 \\| boom\\nline2 |",
      "| 3 | b | serve_failed | 2 |",
    ].join("\n")), md);
  });
  test("adaptive stop, load schedule and an empty run", () => {
    const load = roundsMarkdown({ rows: [], failures: [], definitions: {} }, {
      ...plan, mode: "load", extra_body: null, design: { design: "williams", period: 6, balanced: false },
      adaptive: { max_rounds: 12, rule: "R", met: false }, load_schedule: { shared: true, ref_e2e_ms: 812.345, source: "warm-up of a r1" },
    }, [], {});
    assert.match(load, /balanced: NO\./);
    assert.match(load, /Adaptive stop: ran all 6 rounds; the CI target was NOT met\. Rule: R\./);
    assert.match(load, /Arrival schedule: the same for every engine \(--ref-e2e-ms 812 ms\); warm-up of a r1\./);
    assert.match(load, /median \[derived\]/);
    assert.match(load, /\| \(no successful rounds\) \| \| \| \| \| \| \| \|/);
    assert.ok(!load.includes("## Failed cells") && !load.includes("## Failed requests"));
    const early = roundsMarkdown(summary, { ...plan, adaptive: { max_rounds: 12, rule: "R" }, stopped_early: { round: 6 } }, [], {});
    assert.match(early, /Adaptive stop: stopped early after round 6 of at most 12: the CI target was met\./);
  });
});

describe("formatG / formatValue", () => {
  test("like Python's .3g, whole numbers from 1000", () => {
    const cases: [number | null, string][] = [
      [1.15, "1.15"], [0.5, "0.5"], [100, "100"], [1, "1"], [123.456, "123"], [0.000123456, "0.000123"], [0.00001234, "1.23e-05"],
      [999.6, "1e+03"], [1234.56, "1235"], [-2.5, "-2.5"], [0, "0"], [null, "n/a"], [0.86956, "0.87"],
    ];
    for (const [x, want] of cases) assert.equal(formatValue(x), want, String(x));
    assert.equal(formatG(12345678, 3), "1.23e+07");
  });
});

describe("secrets in the settings", () => {
  test("a nested secret in the extra body is shown as *** (as plan.json stores it)", () => {
    const body = { credentials: { password: "PWVAL7" }, auth: { pw: "NESTSEC8" }, top_k: 20 };
    const md = roundsMarkdown(summary, { ...plan, extra_body: { value: body, source: "--extra-body" } }, [], {});
    assert.ok(!md.includes("PWVAL7") && !md.includes("NESTSEC8"), md.split("\n").find((l) => l.includes("--extra-body")) ?? md);
    assert.match(md, /Every request carried --extra-body \{"auth": "\*\*\*", "credentials": \{"password": "\*\*\*"\}, "top_k": 20\} \(--extra-body\)\./);
  });
  test("shellJoin is the inverse of shellSplit; with scrubArgv it stores --serve-args without their secrets", () => {
    const text = `--resamples 100 --gpu-name 'X Y' --chat-template-kwargs '{"auth":{"pw":"NESTSEC7"}}' --api-key sk-123 --note "it's"`;
    const words = shellSplit(text);
    assert.deepEqual(shellSplit(shellJoin(words)), words);
    const stored = shellJoin(scrubArgv(words));
    assert.ok(!stored.includes("NESTSEC7") && !stored.includes("sk-123"), stored);
    assert.equal(stored, `--resamples 100 --gpu-name 'X Y' --chat-template-kwargs '{"auth":"***"}' --api-key '***' --note 'it'\\''s'`);
  });
});
