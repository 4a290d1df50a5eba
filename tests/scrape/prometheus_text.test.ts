/** The tolerant Prometheus text parser: labels, escapes, special values, timestamps, garbage, caps. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePrometheusText, parsePromNumber } from "../../lib/scrape/mod.ts";

test("HELP/TYPE, labels, escaped quotes, backslashes and newlines in label values", () => {
  const p = parsePrometheusText([
    '# HELP a_total Some help with \\ and "quotes"',
    "# TYPE a_total counter",
    'a_total{path="C:\\\\dir",msg="say \\"hi\\"",nl="x\\ny",brace="}{,="} 5',
    "# a free comment",
    "",
    "   ",
    "b 1.25e+06",
  ].join("\n"));
  assert.equal(p.badLines, 0);
  assert.deepEqual(p.types, { a_total: "counter" });
  assert.deepEqual(p.samples, [
    { name: "a_total", labels: { path: "C:\\dir", msg: 'say "hi"', nl: "x\ny", brace: "}{,=" }, value: 5 },
    { name: "b", labels: {}, value: 1.25e6 },
  ]);
});

test("+Inf, -Inf, NaN, timestamps, trailing comma, CRLF, tabs, histogram lines", () => {
  const p = parsePrometheusText(
    [
      "# TYPE h histogram",
      'h_bucket{le="0.1"} 3',
      'h_bucket{le="+Inf",} 7 1700000000000',
      "h_sum 2.5\r",
      "h_count\t7",
      "g NaN",
      "n -Inf -5",
      "p +Inf",
    ].join("\n"),
  );
  assert.equal(p.badLines, 0, p.firstBad ?? "");
  const v = Object.fromEntries(p.samples.map((s) => [s.name + JSON.stringify(s.labels), s]));
  assert.equal(v['h_bucket{"le":"0.1"}'].value, 3);
  assert.equal(v['h_bucket{"le":"+Inf"}'].value, 7);
  assert.equal(v['h_bucket{"le":"+Inf"}'].timestamp, 1700000000000);
  assert.equal(v["h_sum{}"].value, 2.5);
  assert.equal(v["h_count{}"].value, 7);
  assert.ok(Number.isNaN(v["g{}"].value));
  assert.equal(v["n{}"].value, -Infinity);
  assert.equal(v["n{}"].timestamp, -5);
  assert.equal(v["p{}"].value, Infinity);
  assert.equal(p.types.h, "histogram");
});

test("OpenMetrics bits: exemplars dropped, # EOF ends, quoted UTF-8 names", () => {
  const p = parsePrometheusText(
    'c_total 3 # {trace_id="abc"} 1 1.5\n{"my.metric",a="b"} 2\n# EOF\nafter_eof 1\n',
  );
  assert.equal(p.badLines, 0, p.firstBad ?? "");
  assert.deepEqual(p.samples.map((s) => [s.name, s.value]), [["c_total", 3], ["my.metric", 2]]);
  assert.deepEqual(p.samples[1].labels, { a: "b" });
});

test("garbage never throws: what parsed comes back, the rest is counted", () => {
  const junk = [
    "good 1",
    "<html><body>502 Bad Gateway</body></html>",
    'x{a="unterminated} 1',
    "y{a=b} 1",
    "z",
    "w one",
    "v 1 2 3",
    "u{} 1_000",
    "\u0000\u0001",
    'good2{a="1"} 2',
  ].join("\n");
  const p = parsePrometheusText(junk);
  assert.deepEqual(p.samples.map((s) => s.name), ["good", "good2"]);
  assert.equal(p.badLines, 8);
  assert.equal(p.firstBad, "<html><body>502 Bad Gateway</body></html>");
  for (const bad of [undefined, null, 42, {}] as unknown[]) {
    assert.deepEqual(parsePrometheusText(bad as string), {
      samples: [],
      types: {},
      badLines: 0,
      truncated: false,
    });
  }
});

test("input over the cap is cut at the last whole line and flagged", () => {
  const line = "metric_with_a_name 1\n";
  const text = line.repeat(1000);
  const p = parsePrometheusText(text, { maxChars: line.length * 10 + 5 });
  assert.equal(p.truncated, true);
  assert.equal(p.samples.length, 10);
  assert.equal(p.badLines, 0);
  const q = parsePrometheusText(text, { maxSamples: 7 });
  assert.equal(q.truncated, true);
  assert.equal(q.samples.length, 7);
  assert.equal(parsePrometheusText(text).truncated, false);
});

test("parsePromNumber", () => {
  assert.equal(parsePromNumber("1e3"), 1000);
  assert.equal(parsePromNumber("-0.5"), -0.5);
  assert.equal(parsePromNumber(".5"), 0.5);
  assert.equal(parsePromNumber("Inf"), Infinity);
  assert.equal(parsePromNumber(""), null);
  assert.equal(parsePromNumber("0x10"), null);
  assert.equal(parsePromNumber("abc"), null);
});
