/**
 * What `ik report` does with records it cannot fully read, in process from a temporary store:
 * - a capacity record whose measured record is missing: the report says the levels are in that
 *   record, which could not be read (naming it), and shows the capacity record's own curve
 *   (per-level table, latency–throughput chart with N*), never "No level was measured";
 * - a record of a schema this ik does not know (made by a newer ik): refused, 65, one line naming
 *   the file, when named; named among the skipped records of a store root, and in the notes when
 *   it is a found capacity record, never read silently.
 * Both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { buildReport, docCharts, loadReportInput } from "../../lib/report/document/mod.ts";
import { renderMarkdown } from "../../lib/report/markdown/mod.ts";

const CAP = "capacity-20261207T210758Z-0393d913";
const MEAS = "serve_benchmark-20261207T210753Z-82797316";
const NEWER = "serve_benchmark-20261207T210657Z-124fbe3c";
let root: string, root2: string;

const curve = [2, 4, 8].map((rate, i) => ({
  level: rate, name: `r${rate}`, slo_ok: true, not_judged: null, not_achieved: null, target_rate_rps: rate, offered_rate_rps: rate * 1.1,
  ttft_p95_ms: 22 + i, tpot_p95_ms: 2 + i / 10, e2e_p95_ms: 80 + i, ttft_p95_ms_failure_adjusted: { value: 22 + i, censored: false },
  output_tok_s_per_gpu: 100 * (i + 1), goodput_rps: rate, achieved_rps: rate, mean_inflight: 0.5, n_failed: 0, client_limited: null,
}));
const capacity = (extra: Record<string, unknown> = {}) => ({
  evidence_id: CAP, kind: "capacity", schema: 2, complete: true, summary: "L: max rate = 8 req/s", artifacts: [], limitations: [],
  data: { measurement: MEAS, label: "L", level_kind: "rate", rate_star_rps: 8, slo: { ttft_p95_ms: 500, tpot_p95_ms: 10 }, curve },
  ...extra,
});

async function put(store: string, id: string, record: unknown): Promise<void> {
  await mkdir(join(store, id), { recursive: true });
  await writeFile(join(store, id, "evidence.json"), JSON.stringify(record));
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), "ik-report-read-"));
  await put(root, CAP, capacity());
  await put(root, NEWER, { evidence_id: NEWER, kind: "serve_benchmark", schema: 99, complete: true, artifacts: [], identity: { workload: { mode: "single" } } });
  // A load measurement whose capacity record (found, not named) is of a newer schema.
  root2 = join(root, "second");
  await put(root2, MEAS, { evidence_id: MEAS, kind: "serve_benchmark", schema: 2, complete: true, artifacts: [], identity: { workload: { mode: "load" } }, data: { levels: [] } });
  await put(root2, CAP, capacity({ schema: 99 }));
});
after(() => rm(root, { recursive: true, force: true }));

describe("a capacity record without its measured record", () => {
  test("names the record the levels are in and shows the capacity record's own curve, N* marked", async () => {
    const input = await loadReportInput(CAP, root, "/");
    const doc = buildReport(input);
    const md = renderMarkdown(doc);
    assert.doesNotMatch(md, /No level was measured/);
    assert.match(md, new RegExp(`The levels were measured in ${MEAS}, which could not be read \\(see the limitations\\): the figures below are the capacity record's own curve`));
    assert.match(md, /\| r8 \| 8\/8\.8 \| 0 \| 24 \| 24 \| 2\.2 \| 82 \| 300 \| 8 \| 0\.5 \| ok \|/);
    assert.match(md, new RegExp(`the measured record ${MEAS} could not be read`));
    const charts = docCharts(doc);
    assert.equal(charts[0].kind, "curve");
    assert.deepEqual(charts[0].series[0].points.map((p) => [p.x, p.y, p.label]), [[100, 22, "r2"], [200, 23, "r4"], [300, 24, "r8"]]);
    assert.deepEqual(charts[0].marks, [{ x: 300, y: 24, label: "N* = r8" }]);
  });

  test("a lower bound reads '≥'; a partial merge's scaled bound is stated, its nominal level marked on the curve", async () => {
    const partial = join(root, "partial");
    await put(partial, CAP, capacity({ data: { ...capacity().data, rate_star_rps: 7.2, rate_star_rps_nominal: 8, rate_star_rps_bound: "lower", n_star_lower_bound: true } }));
    const doc = buildReport(await loadReportInput(CAP, partial, "/"));
    assert.match(renderMarkdown(doc), /^- \*\*N\\\*:\*\* ≥ 7\.2$/m);
    assert.deepEqual(docCharts(doc)[0].marks, [{ x: 300, y: 24, label: "N* = r8" }]);
    const top = join(root, "top");
    await put(top, CAP, capacity({ data: { ...capacity().data, n_star_lower_bound: true } }));
    assert.match(renderMarkdown(buildReport(await loadReportInput(CAP, top, "/"))), /^- \*\*N\\\*:\*\* ≥ 8$/m);
    assert.doesNotMatch(renderMarkdown(buildReport(await loadReportInput(CAP, root, "/"))), /≥ 8/);
  });

  test("with no curve either, it says so, naming the record", async () => {
    const bare = join(root, "bare");
    await put(bare, CAP, capacity({ data: { measurement: MEAS, rate_star_rps: 8 } }));
    const md = renderMarkdown(buildReport(await loadReportInput(CAP, bare, "/")));
    assert.match(md, new RegExp(`The levels were measured in ${MEAS}, which could not be read \\(see the limitations\\): the capacity record holds no curve of its own to show`));
  });
});

describe("a record of a newer schema", () => {
  test("named: refused, 65, one line naming the file and the schema", async () => {
    for (const ref of [NEWER, join(root, NEWER)]) {
      await assert.rejects(loadReportInput(ref, root, "/"), (e: unknown) => {
        assert.ok(e instanceof IkError && e.code === 65, String(e));
        assert.match(e.oneLine(), new RegExp(`^ik: report \\S+: ${join(root, NEWER, "evidence.json")}: record schema 99, which this ik does not know .*; made by a newer ik\\? use that version$`));
        return true;
      });
    }
  });

  test("in a store root: listed as skipped, with the reason", async () => {
    const md = renderMarkdown(buildReport(await loadReportInput(root, root, "/")));
    assert.match(md, new RegExp(`- ${NEWER}: .*record schema 99, which this ik does not know`));
  });

  test("found as a load measurement's capacity record: not used, and the notes say why", async () => {
    const input = await loadReportInput(MEAS, root2, "/");
    assert.equal(input.kind === "record" && input.bundle.capacity, null);
    const md = renderMarkdown(buildReport(input));
    assert.match(md, new RegExp(`the capacity record ${CAP} could not be read: .*record schema 99`));
  });
});
