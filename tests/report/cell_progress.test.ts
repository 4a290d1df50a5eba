/**
 * A rounds cell's own progress, forwarded (issue 23 §3): piped, the child's progress lines with the
 * cell's name; on a terminal one updating line, cleared before the next regular line; the child's
 * errors are not forwarded. In process, both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { cellProgressLine, isProgressLine } from "../../lib/report/terminal/cell_progress.ts";

test("piped: the cell's progress lines, prefixed; errors stay in its log", () => {
  const out: string[] = [];
  const p = cellProgressLine((t) => out.push(t), false);
  p.show("vllm r1", "bench serve: warm-up 1/2");
  p.show("vllm r1", "load r4: sent 12/40, in flight 3, failed 0, p95 TTFT 52.0 ms, send lag p99 0.80 ms");
  p.show("vllm r1", "ik: bench serve: cannot reach the server");
  p.end("bench rounds: round 1/2 · vllm: ok\n");
  assert.deepEqual(out, ["  vllm r1: warm-up 1/2\n", "  vllm r1: load r4: sent 12/40, in flight 3, failed 0, p95 TTFT 52.0 ms, send lag p99 0.80 ms\n", "bench rounds: round 1/2 · vllm: ok\n"]);
  assert.equal(isProgressLine("ik: bench serve: x"), false);
});

test("terminal: one line updated in place, cleared before the next regular line", () => {
  const out: string[] = [];
  const p = cellProgressLine((t) => out.push(t), true);
  p.show("a r2", "bench serve: round 1/5: 8/8 ok");
  p.show("a r2", "bench serve: round 2/5: 8/8 ok");
  p.end("bench rounds: round 2/2 · a: ok\n");
  assert.deepEqual(out, ["\r\x1b[K  a r2: round 1/5: 8/8 ok", "\r\x1b[K  a r2: round 2/5: 8/8 ok", "\r\x1b[K", "bench rounds: round 2/2 · a: ok\n"]);
  // A hostile line cannot move the cursor: escapes are shown, not run.
  const o2: string[] = [];
  cellProgressLine((t) => o2.push(t), false).show("x", "bench serve: \x1b[2Jboom");
  assert.ok(!o2[0].includes("\x1b[2J"), o2[0]);
});
