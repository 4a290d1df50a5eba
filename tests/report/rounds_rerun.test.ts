/**
 * A bench rounds dir that also holds an earlier run's cell files (a rerun into the same folder by
 * an older ik, or files copied in): the report counts only this run's cells, those summary.json
 * lists, and without a summary only the cell files this run started. In process, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { buildReport, loadReportInput } from "../../lib/report/document/mod.ts";
import { renderMarkdown } from "../../lib/report/markdown/mod.ts";

let dir: string;
const started = "2026-03-04T05:06:07.000Z";
const t = Date.parse(started) / 1000;
const plan = { mode: "single", rounds: 1, started, engines: [{ label: "a", name: "vllm" }, { label: "b", name: "sglang" }], design: { design: "williams", period: 2, balanced: true } };
const cell = (label: string, position: number, status: string, tStart: number) => ({ round: 1, position, label, status, detail: status === "ok" ? null : "stale failure from the earlier run", t_start: tStart });

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-rerun-"));
  for (const name of ["with_summary", "no_summary"]) {
    const rd = join(dir, name, "rounds");
    await mkdir(rd, { recursive: true });
    await writeFile(join(rd, "plan.json"), JSON.stringify(plan));
    await writeFile(join(rd, "a.r1.json"), JSON.stringify(cell("a", 0, "ok", t + 1)));
    await writeFile(join(rd, "b.r1.json"), JSON.stringify(cell("b", 1, "ok", t + 5)));
    // The earlier run had an engine this one does not, and it failed.
    await writeFile(join(rd, "old.r1.json"), JSON.stringify(cell("old", 0, "exited_early", t - 600)));
  }
  const briefs = ["a", "b"].map((l, i) => ({ round: 1, position: i, label: l, status: "ok", detail: null, file: `rounds/${l}.r1.json` }));
  await writeFile(join(dir, "with_summary", "rounds", "summary.json"), JSON.stringify({ plan, summary: {}, resolved_config: {}, cells: briefs }));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("with summary.json: exactly the cells it lists, an earlier run's cell file is not counted", async () => {
  const input = await loadReportInput(join(dir, "with_summary"), join(dir, "runs"), dir);
  assert.equal(input.kind, "rounds");
  if (input.kind !== "rounds") return;
  assert.deepEqual(input.cells.map((c) => c.label), ["a", "b"]);
  const md = renderMarkdown(buildReport(input));
  assert.match(md, /2 cells, 0 not ok/);
  assert.doesNotMatch(md, /stale failure|Failed cells/);
});

test("without summary.json: the cell files older than the plan's start are left out, with a note", async () => {
  const input = await loadReportInput(join(dir, "no_summary"), join(dir, "runs"), dir);
  if (input.kind !== "rounds") throw new Error(input.kind);
  assert.deepEqual(input.cells.map((c) => c.label), ["a", "b"]);
  assert.ok(input.notes.some((n) => /1 cell file\(s\) older than this run's start/.test(n)), input.notes.join("\n"));
  assert.match(renderMarkdown(buildReport(input)), /2 cells, 0 not ok/);
});
