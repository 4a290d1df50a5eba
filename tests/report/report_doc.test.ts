/**
 * lib/report/document, markdown and html without a browser: Markdown and HTML escaping of hostile
 * record text, CDF thinning, N* and the SLO line on the curves, a points output dir read
 * tolerantly, and the page's no-network shape. Both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { renderHtml } from "../../lib/report/html/mod.ts";
import {
  buildReport,
  cdfSeries,
  curveCharts,
  type CurveLevel,
  docCharts,
  loadReportInput,
  nStarOf,
  type ReportDoc,
} from "../../lib/report/document/mod.ts";
import { singleRecordBlocks } from "../../lib/report/document/record_doc.ts";
import { mdInline, mdText, renderMarkdown } from "../../lib/report/markdown/mod.ts";

describe("Markdown escaping", () => {
  test("markup characters are escaped, snake_case stays readable, controls become visible", () => {
    assert.equal(mdInline("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
    assert.equal(mdInline("a|b *c* [l](u) `x`"), "a\\|b \\*c\\* \\[l\\](u) \\`x\\`");
    assert.equal(mdInline("ttft_p95_ms _em_"), "ttft_p95_ms \\_em\\_");
    // The visible escape's backslash is itself escaped, so Markdown shows "\e" and "\n".
    assert.equal(mdInline("red\u001b[31m\nnext"), "red\\\\e\\[31m\\\\nnext");
    assert.equal(mdText("# not a heading"), "\\# not a heading");
    assert.equal(mdText("1. not a list"), "1\\. not a list");
    assert.equal(mdText("7.72"), "7.72");
  });

  test("a hostile summary cannot open a table cell or a tag in the rendered report", () => {
    const doc: ReportDoc = { title: "t", blocks: [{ kind: "table", head: ["a", "b"], rows: [["x | y", "<script>"]] }] };
    const md = renderMarkdown(doc);
    assert.match(md, /\| x \\\| y \| \\<script\\> \|/);
  });
});

describe("CDF series", () => {
  test("thinned to the cap, first and last kept, y ascending to 1, n counts every finite value", () => {
    const vals = Array.from({ length: 1000 }, (_, i) => 1000 - i).concat([NaN, Infinity as number]);
    const s = cdfSeries("x", [...vals, null, "7"])!;
    assert.equal(s.n, 1000);
    assert.equal(s.points.length, 400);
    assert.deepEqual(s.points[0], { x: 1, y: 0.001 });
    assert.deepEqual(s.points.at(-1), { x: 1000, y: 1 });
    for (let i = 1; i < s.points.length; i++) assert.ok(s.points[i].y > s.points[i - 1].y && s.points[i].x > s.points[i - 1].x);
    assert.equal(cdfSeries("x", [null, NaN]), null);
    assert.equal(cdfSeries("x", [3, 1, 2])!.points.length, 3);
  });
});

describe("curves", () => {
  const lv = (level: number, x: number, ttft: number, ok: boolean): CurveLevel => ({ level, name: `c${level}`, x, ttft, tpot: ttft / 10, e2e: ttft * 3, sloOk: ok });
  const levels = [lv(1, 10, 50, true), lv(2, 20, 60, true), lv(4, 30, 300, false), lv(8, 35, 90, true)];

  test("N* is the highest level where the SLO holds there and at every lower level", () => {
    assert.equal(nStarOf(levels), 2);
    assert.equal(nStarOf([lv(1, 1, 1, false), lv(2, 2, 2, true)]), null);
    // Levels in the order an auto-search measured them (c4 failed before c3 was tried): sorted first.
    assert.equal(nStarOf([lv(1, 10, 50, true), lv(2, 20, 60, true), lv(4, 30, 300, false), lv(3, 25, 80, true)]), 3);
    // A level that held its SLO at a load it did not reach, or that was not judged, makes no claim.
    assert.equal(nStarOf([lv(1, 10, 50, true), { ...lv(2, 12, 60, true), notAchieved: "offered 12 of 20 req/s" }, lv(4, 30, 70, true)]), 1);
    assert.equal(nStarOf([lv(1, 10, 50, true), lv(2, 20, 60, true), { ...lv(4, 30, 70, true), notJudged: "interrupted" }]), 2);
    // Named levels (bench points, already in rate order) keep their order.
    const pt = (id: string, ok: boolean): CurveLevel => ({ level: id, name: id, x: null, ttft: null, tpot: null, e2e: null, sloOk: ok });
    assert.equal(nStarOf([pt("b", true), pt("a", true), pt("c", false)]), "a");
  });

  test("TTFT chart always, TPOT only with its SLO; SLO line at the target; N* marked at its level", () => {
    const charts = curveCharts([{ name: "e", levels, nStar: 2 }], { ttftP95Ms: 200, tpotP95Ms: null }, "tok/s");
    assert.equal(charts.length, 1);
    const c = charts[0];
    assert.deepEqual(c.hlines, [{ y: 200, label: "SLO TTFT p95 <= 200 ms" }]);
    assert.deepEqual(c.marks, [{ x: 20, y: 60, label: "N* = c2" }]);
    assert.deepEqual(c.series[0].points.map((p) => p.label), ["c1", "c2", "c4", "c8"]);
    const two = curveCharts([{ name: "a", levels, nStar: 2 }, { name: "b", levels: levels.slice(0, 2), nStar: null }], { ttftP95Ms: 200, tpotP95Ms: 8 }, "tok/s");
    assert.equal(two.length, 2);
    assert.deepEqual(two[1].hlines, [{ y: 8, label: "SLO TPOT p95 <= 8 ms" }]);
    assert.deepEqual(two[1].marks, [{ x: 20, y: 6, label: "N* = c2 (a)" }]);
  });
});

describe("points output dir (read tolerantly)", () => {
  let dir: string;
  const summary = (rate: number, passed: boolean, p95: number) => ({
    kind: "load_trial", passed, attainment: passed ? 0.99 : 0.4, attainment_target: 0.95, valid: true, rate_rps: rate, achieved_rate_rps: rate * 1.01,
    slo: { ttft_s: 0.2, tpot_s: 0.05 }, percentiles: { ttft_ms: { n: 3, p50: p95 - 5, p95 }, tpot_ms: { n: 3, p95: 10 } },
  });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-report-points-"));
    const ids = ["rate-1", "rate-2", "rate-4"];
    await writeFile(join(dir, "manifest.json"), JSON.stringify({
      schema: 1, kind: "bench_points", model: "m", plan_sha256: "f".repeat(64), plan_file: "plan.json",
      plan: { schema: 1, points: [...ids, "rate-8"].map((id) => ({ id, workload: { file: "w.json", rate_rps: Number(id.slice(5)), requests: 3 } })) },
      outcome: { status: "stopped", reason: "point rate-4: attainment or scheduling failed; inspect summary.json" },
    }));
    for (const [i, id] of ids.entries()) {
      await mkdir(join(dir, id, "client"), { recursive: true });
      const rate = Number(id.slice(5));
      const passed = i < 2;
      await writeFile(join(dir, id, "result.json"), JSON.stringify({ id, workload: { rate_rps: rate, requests: 3 }, status: passed ? "ok" : "attainment_failed", stop_reason: passed ? null : "attainment or scheduling failed", client: { exit_code: passed ? 0 : 2 }, drain_initial: { drained: true, seconds: 0.1 }, drain_final: { drained: true, seconds: 0.4 } }));
      await writeFile(join(dir, id, "client", "summary.json"), JSON.stringify(summary(rate, passed, passed ? 60 + i : 250)));
      await writeFile(join(dir, id, "client", "requests.jsonl"), [40, 50, 60].map((t) => JSON.stringify({ ok: true, ttft_ms: t + i })).join("\n") + "\n");
    }
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("per point table, the curve with the SLO line at 200 ms and N* = rate-2, the CDF, the limitations", async () => {
    const input = await loadReportInput(dir, join(dir, "nostore"), "/");
    assert.equal(input.kind, "points");
    const doc = buildReport(input);
    const charts = docCharts(doc);
    assert.deepEqual(charts.map((c) => c.kind), ["curve", "curve", "cdf"]);
    assert.deepEqual(charts[0].hlines, [{ y: 200, label: "SLO TTFT p95 <= 200 ms" }]);
    assert.equal(charts[0].marks![0].label, "N* = rate-2");
    assert.ok(Math.abs(charts[0].marks![0].x - 2.02) < 1e-9);
    assert.deepEqual(charts[2].series.map((s) => s.n), [3, 3, 3]);
    const md = renderMarkdown(doc);
    assert.match(md, /\| rate-4 \| 4\/4\.04 \| 3 \| attainment_failed \| 2 \| 0\.4 \(0\.95\) \| yes \| 245\/250 \|/);
    assert.match(md, /N\\\* = rate-2: the highest rate/);
    assert.match(md, /- rate-8: not run \(no result\.json\)/);
    assert.match(md, /\| rate-8 \| 8\/- \| 3 \| no result\.json \|/);
    assert.match(md, /- rate-4: attainment_failed: attainment or scheduling failed/);
  });

  test("something that is no report input is refused with exit 65", async () => {
    await mkdir(join(dir, "empty"), { recursive: true });
    await assert.rejects(loadReportInput(join(dir, "empty"), dir, "/"), (e: unknown) => e instanceof IkError && e.code === 65 && /not a record, a bench rounds/.test(e.message));
    await assert.rejects(loadReportInput(join(dir, "nope"), dir, "/"), (e: unknown) => e instanceof IkError && e.code === 65);
  });
});

describe("HTML page", () => {
  const hostile = "</script><script>document.documentElement.setAttribute('data-pwned','1')</script><img src=x onerror=alert(1)>";
  const doc: ReportDoc = {
    title: hostile,
    blocks: [
      { kind: "para", text: hostile },
      { kind: "table", head: ["h"], rows: [[hostile]] },
      { kind: "chart", chart: { kind: "curve", title: hostile, x: { label: "x" }, y: { label: hostile }, series: [{ name: hostile, points: [{ x: 1, y: 2, label: hostile }] }], hlines: [{ y: 3, label: hostile }], marks: [] } },
    ],
  };
  const html = renderHtml(doc, "gen");

  test("record text cannot close the script, add a tag or load anything", () => {
    assert.equal(html.match(/<script/g)!.length, 2);
    assert.equal(html.match(/<\/script>/g)!.length, 2);
    assert.doesNotMatch(html, /<img/);
    assert.doesNotMatch(html, /<[^>]*\s(src|href|srcset|action)=/i);
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'/);
    assert.match(html, /&lt;\/script&gt;&lt;script&gt;/);
  });

  test("each chart has a figure whose expected point count the script checks against", () => {
    assert.match(html, /<figure class="chart" id="chart-0" data-kind="curve" data-expected-points="1">/);
    assert.match(html, /<html lang="en" data-rendered="pending">/);
    const data = JSON.parse(html.match(/<script type="application\/json" id="ik-chart-data">([^<]*)<\/script>/)![1]);
    assert.equal(data[0].series[0].name, hostile);
    assert.match(data[0].series[0].color, /^#[0-9a-f]{6}$/);
  });
});

describe("single-mode record tables", () => {
  test("the count beside 'failed' is the ok count, and its column says so (a 15 | 5 read as 33 % failed, not 25 %)", () => {
    const record = {
      kind: "serve_benchmark", identity: { workload: { mode: "single" } },
      data: { buckets: { short: { n_requests: 15 } }, rounds: [{ index: 0, n_requests: 15, n_failed: 5 }] },
    };
    const rows = [...Array(15)].map(() => ({ bucket: "short", ok: true })).concat([...Array(5)].map(() => ({ bucket: "short", ok: false })));
    const tables = singleRecordBlocks(record, rows).filter((b) => b.kind === "table") as { head: string[]; rows: string[][] }[];
    const perBucket = tables.find((t) => t.head[0] === "bucket")!, perRound = tables.find((t) => t.head[0] === "round")!;
    assert.deepEqual(perBucket.head.slice(0, 3), ["bucket", "ok", "failed"]);
    assert.deepEqual(perBucket.rows[0].slice(0, 3), ["short", "15", "5"]);
    assert.deepEqual(perRound.head.slice(0, 3), ["round", "ok", "failed"]);
  });
});
