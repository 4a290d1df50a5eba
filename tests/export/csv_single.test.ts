/** `ik export --format csv` of a single-mode record: each bucket's row says whether the record is complete (an interrupted run's buckets hold only the rounds that finished). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { csvExportFiles } from "../../lib/export/mod.ts";

test("single-mode rows carry complete: false for an interrupted record, true for a whole one", () => {
  const src = (complete: boolean) => ({
    dir: "/x", evidenceId: "serve_benchmark-1", mode: "single", rows: [], levels: [], notes: [],
    record: { complete, data: { label: "a", buckets: { short: { n_requests: 3 }, all: { n_requests: 3 } } } },
  });
  for (const complete of [false, true]) {
    const [head, ...rows] = csvExportFiles(src(complete))[0].text.trimEnd().split("\r\n");
    const at = head.split(",").indexOf("complete");
    assert.ok(at >= 0, head);
    assert.equal(rows.length, 2);
    for (const r of rows) assert.equal(r.split(",")[at], String(complete));
  }
});
