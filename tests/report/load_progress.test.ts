/** Live progress of a load level: one line rewritten in place on a TTY, plain lines at most every 5 s otherwise. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { progressLine, progressPrinter } from "../../lib/report/terminal/load_progress.ts";

const view = { name: "r8", planned: 40, sent: 12, inFlight: 3, failed: 1, ttftP95Ms: 42.25, sendLagP99Ms: 0.5 };

test("the line names level, sent/target, in flight, failures, running p95 TTFT and send lag", () => {
  assert.equal(progressLine(view), "load r8: sent 12/40, in flight 3, failed 1, p95 TTFT 42.3 ms, send lag p99 0.50 ms");
  assert.match(progressLine({ ...view, planned: null, ttftP95Ms: null }), /sent 12, .* p95 TTFT - ms/);
});

test("TTY: rewritten in place and cleared at the end; not a TTY: plain lines, throttled", () => {
  const tty: string[] = [];
  const p = progressPrinter((t) => tty.push(t), true);
  p.update(view);
  p.update({ ...view, sent: 13 });
  p.done();
  assert.equal(tty.length, 3);
  assert.ok(tty[0].startsWith("\r\x1b[2K") && !tty[0].endsWith("\n"));
  assert.equal(tty[2], "\r\x1b[2K");
  const plain: string[] = [];
  const q = progressPrinter((t) => plain.push(t), false, 60_000);
  q.update(view);
  q.update({ ...view, sent: 13 });
  q.done();
  assert.deepEqual(plain, [progressLine(view) + "\n"]);
});
