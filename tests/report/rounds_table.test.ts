/**
 * The report of a `bench rounds` run says what the run's own summary.md says (lib/rounds/markdown.ts):
 * each row's reading is summary.json's verdict (worse, no clear difference, too few rounds, never
 * ranked: [HARD GATE]) with its note on differing N*, an N* at the top of the grid shows as `≥ X`,
 * and a [HARD GATE] engine is marked so, never as one with failures. In load mode with a `--rates`
 * grid the curve marks each engine's N* (`rate_star_rps`) and the TTFT CDF is drawn there.
 * Pure, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { docCharts, type RecordBundle, type RoundsInput } from "../../lib/report/document/mod.ts";
import { buildReport } from "../../lib/report/document/mod.ts";
import { renderMarkdown } from "../../lib/report/markdown/mod.ts";
import { roundsMarkdown } from "../../lib/rounds/markdown.ts";
import { type SummaryCell, summarize } from "../../lib/rounds/summary.ts";

type Obj = Record<string, any>;

/** A load-mode cell: N* (req/s, `bound` at the top of the grid) and TTFT p95 there. */
function loadCell(round: number, label: string, star: number, ttft: number, bound = false, status = "ok"): SummaryCell {
  return {
    round, label, status, detail: status === "ok" ? null : "max_num_seqs: expected 128, resolved 256",
    metrics: { all: {
      rate_star_rps: { value: star, unit: "req/s", lower_bound: bound },
      ttft_ms_p95_at_n_star: { value: ttft, unit: "ms" },
      failed_requests: { value: 0, unit: "requests", n: 10 },
    } },
  };
}

const planOf = (mode: string, rounds: number, labels: string[]) => ({
  mode, rounds, engines: labels.map((label) => ({ label, name: "vllm" })), design: { design: "williams", period: 2, balanced: true },
  prompts: { name: "p", sha256: "a".repeat(64), n: 6 }, settings: {},
});

function roundsInput(mode: string, rounds: number, labels: string[], cells: SummaryCell[], records = new Map<string, RecordBundle>(), resolved: Obj = {}): RoundsInput {
  return { kind: "rounds", path: "/x/rounds", plan: planOf(mode, rounds, labels), summary: summarize(cells, labels, { mode: mode as "load" }) as unknown as Obj, resolved, cells: cells as unknown as Obj[], records, notes: [] };
}

/** Per table row of the report: [metric, engine cell, median cell, …, reading]. */
function reportRows(input: RoundsInput): string[][] {
  const doc = buildReport(input);
  return doc.blocks.flatMap((b) => (b.kind === "table" && b.head[0] === "metric" ? b.rows : []));
}

describe("rounds report table = the run's summary.md", () => {
  // fast: N* 16 at the top of the grid; same: as fast (no clear difference); slow: clearly worse; gated: [HARD GATE], 0 failures.
  const labels = ["fast", "same", "slow", "gated"];
  const cells: SummaryCell[] = [];
  for (const r of [1, 2, 3]) {
    cells.push(loadCell(r, "fast", 16, 5 + r / 10, true), loadCell(r, "same", 16, 5 + (r === 2 ? 0.3 : -0.2), true));
    cells.push(loadCell(r, "slow", 8, 9 + r / 10), loadCell(r, "gated", 16, 3, false, "hard_gate"));
  }
  const resolved = { gated: { status: "RESOLVED", warnings: 0, unknown_settings: [], violations: ["max_num_seqs: expected 128, resolved 256"] } };
  const input = roundsInput("load", 3, labels, cells, new Map(), resolved);
  const summaryRows = (input.summary.rows as Obj[]);
  const rows = reportRows(input);
  const md = roundsMarkdown(input.summary as never, input.plan as never, [], resolved as never);

  test("every row reads as summary.json's verdict (and N* note), and as summary.md's reading column", () => {
    assert.equal(rows.length, summaryRows.length);
    for (const s of summaryRows) {
      const r = rows.find((x) => x[0] === s.metric && x[1].split(" ")[0] === s.engine)!;
      const want = [s.verdict, s.n_star_note].filter(Boolean).join("; ");
      assert.equal(r.at(-1), want, `${s.engine} ${s.metric}`);
      const line = md.split("\n").find((l) => l.startsWith(`| ${s.engine}`) && l.includes(`| ${s.metric} |`))!;
      assert.ok(line.endsWith(`| ${want} |`), `${line} vs ${want}`);
    }
    const readings = new Set(rows.map((r) => r.at(-1)));
    assert.ok(readings.has("worse"), [...readings].join(" | "));
    assert.ok([...readings].some((x) => /^no clear difference/.test(x!)), [...readings].join(" | "));
    assert.ok(readings.has("never ranked: [HARD GATE]"));
    assert.ok([...readings].some((x) => /at different N\*: slow 8, (fast|same) ≥ 16/.test(x!)), [...readings].join(" | "));
  });

  test("an N* at the top of the grid shows as ≥ X, as summary.md has it; a measured N* without", () => {
    const star = (engine: string) => rows.find((x) => x[0] === "rate_star_rps" && x[1].startsWith(engine))![2];
    assert.match(star("fast"), /^≥ 16 .*req\/s$/);
    assert.match(star("slow"), /^8 .*req\/s$/);
    assert.match(md, /\| fast \(reference\) \| all \| rate_star_rps \| ≥ 16 req\/s \|/);
  });

  test("a [HARD GATE] engine with 0 failed requests is marked [HARD GATE], never FAILURES", () => {
    const gated = rows.filter((x) => x[1].startsWith("gated"));
    assert.ok(gated.length > 0);
    for (const r of gated) {
      assert.match(r[1], /^gated \[HARD GATE\]$/);
      assert.doesNotMatch(r.join(" "), /FAILURES/);
    }
  });

  test("two rounds: the non-reference engine reads 'too few rounds', as summary.md", () => {
    const two = roundsInput("single", 2, ["a", "b"], [1, 2].flatMap((r) => ["a", "b"].map((label) => ({
      round: r, label, status: "ok", metrics: { all: { ttft_ms: { value: label === "a" ? 10 + r : 20 + r, unit: "ms" } } },
    }))));
    const r = reportRows(two);
    assert.deepEqual(r.map((x) => [x[1], x.at(-1)]), [["a (reference)", "too few rounds vs b"], ["b", "too few rounds"]]);
  });
});

describe("load-mode rounds: N* of a --rates grid on the curve and the CDF", () => {
  const levels = [4, 8, 16].map((rate, i) => ({
    level: rate, name: `r${rate}`, target_rate_rps: rate,
    summary: { output_tok_s_per_gpu: 90 * (i + 1), slo_ok: true, ttft_ms: { p95: 4 + i }, tpot_ms: { p95: 2 }, e2e_ms: { p95: 50 } },
  }));
  const measured = { evidence_id: "serve_benchmark-20261207T211317Z-dd9f8d6a", kind: "serve_benchmark", identity: { workload: { mode: "load" } }, data: { levels, level_kind: "rate" } };
  const rows = levels.flatMap((l) => [1, 2, 3].map((k) => ({ level: l.name, ok: true, ttft_ms: l.level + k })));
  const capacity = { evidence_id: "capacity-20261207T211321Z-db5f992f", kind: "capacity", data: { measurement: measured.evidence_id, level_kind: "rate", rate_star_rps: 16, slo: { ttft_p95_ms: 60 } } };
  const bundle: RecordBundle = { id: capacity.evidence_id, record: capacity, rows: null, measured: { record: measured, rows }, notes: [] };
  const cells = [1, 2, 3].map((r) => loadCell(r, "fast", 16, 5, true));
  const input = roundsInput("load", 3, ["fast"], cells, new Map([["fast", bundle]]));

  test("the curve marks N* = r16 (rate_star_rps), and the TTFT CDF is drawn at r16, not at the first level", () => {
    const doc = buildReport(input);
    const charts = docCharts(doc);
    const curve = charts.find((c) => c.kind === "curve")!;
    assert.deepEqual(curve.marks, [{ x: 270, y: 6, label: "N* = r16" }]);
    const cdf = charts.find((c) => c.kind === "cdf")!;
    assert.deepEqual(cdf.series.map((s) => [s.name, s.n]), [["fast @ r16", 3]]);
    assert.deepEqual(cdf.series[0].points.map((p) => p.x), [17, 18, 19]);
    assert.match(renderMarkdown(doc), /N\\\* = r16/);
  });
});
