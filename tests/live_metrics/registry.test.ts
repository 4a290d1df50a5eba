/**
 * The live metrics registry: the exposition text exactly (a golden text), histogram buckets
 * cumulative in text and snapshot, label escaping (and the scrape parser reading it back), the
 * snapshot's sorted labels with `__name__`, and the name rules.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { LATENCY_BUCKETS_SECONDS, MetricsRegistry, type SeriesSample, TOKEN_GAP_BUCKETS_SECONDS } from "../../lib/live_metrics/mod.ts";
import { parsePrometheusText } from "../../lib/scrape/mod.ts";

const GOLDEN = `# HELP ik_requests_sent_total Requests sent.
# TYPE ik_requests_sent_total counter
ik_requests_sent_total{endpoint="hmac-sha256:ab",level="10",run="r1"} 1
ik_requests_sent_total{endpoint="hmac-sha256:ab",level="2",run="r1"} 3
# HELP ik_requests_in_flight Requests sent and not yet answered.
# TYPE ik_requests_in_flight gauge
ik_requests_in_flight{run="r1"} 4.5
# HELP ik_ttft_seconds Time to first token, seconds.\\nA second line with a \\\\ backslash.
# TYPE ik_ttft_seconds histogram
ik_ttft_seconds_bucket{level="2",run="r1",le="0.25"} 2
ik_ttft_seconds_bucket{level="2",run="r1",le="0.5"} 3
ik_ttft_seconds_bucket{level="2",run="r1",le="1"} 4
ik_ttft_seconds_bucket{level="2",run="r1",le="+Inf"} 5
ik_ttft_seconds_sum{level="2",run="r1"} 3.5
ik_ttft_seconds_count{level="2",run="r1"} 5
# HELP ik_errors_total Requests that failed.
# TYPE ik_errors_total counter
ik_errors_total{run="r1"} 0
`;

function goldenRegistry(): MetricsRegistry {
  const reg = new MetricsRegistry({ constLabels: { run: "r1" } });
  const sent = reg.counter({ name: "ik_requests_sent_total", help: "Requests sent.", labelNames: ["level", "endpoint"] });
  sent.labels({ level: "2", endpoint: "hmac-sha256:ab" }).inc(3);
  sent.inc({ endpoint: "hmac-sha256:ab", level: "10" });
  reg.gauge({ name: "ik_requests_in_flight", help: "Requests sent and not yet answered." }).labels().set(4.5);
  const ttft = reg.histogram({
    name: "ik_ttft_seconds",
    help: "Time to first token, seconds.\nA second line with a \\ backslash.",
    labelNames: ["level"],
    buckets: [0.25, 0.5, 1],
  });
  const l2 = ttft.labels({ level: "2" });
  for (const v of [0.125, 0.25, 0.375, 0.75, 2]) l2.observe(v);
  reg.counter({ name: "ik_errors_total", help: "Requests that failed." });
  return reg;
}

test("render: the exposition text is exactly the golden text", () => {
  assert.equal(goldenRegistry().render(), GOLDEN);
});

test("render: the scrape parser reads every line back, with the types declared", () => {
  const p = parsePrometheusText(goldenRegistry().render());
  assert.equal(p.badLines, 0);
  assert.equal(p.samples.length, 10);
  assert.deepEqual(p.types, { ik_requests_sent_total: "counter", ik_requests_in_flight: "gauge", ik_ttft_seconds: "histogram", ik_errors_total: "counter" });
});

test("histogram buckets are cumulative (text and snapshot), +Inf equals _count, _sum adds up", () => {
  const reg = new MetricsRegistry();
  const h = reg.histogram({ name: "ik_e2e_seconds", help: "e2e", buckets: LATENCY_BUCKETS_SECONDS });
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const obs: number[] = [];
  for (let i = 0; i < 500; i++) obs.push(rnd() < 0.05 ? 200 + rnd() : rnd() ** 3 * 130);
  obs.push(0.005, 120, 0); // on the bounds themselves: le is inclusive
  const child = h.labels();
  for (const v of obs) child.observe(v);
  child.observe(NaN); // ignored

  const want = [...LATENCY_BUCKETS_SECONDS, Infinity].map((le) => obs.filter((v) => v <= le).length);
  const p = parsePrometheusText(reg.render());
  const buckets = p.samples.filter((s) => s.name === "ik_e2e_seconds_bucket");
  assert.deepEqual(buckets.map((s) => s.labels.le), [...LATENCY_BUCKETS_SECONDS.map(String), "+Inf"]);
  assert.deepEqual(buckets.map((s) => s.value), want);
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i].value >= buckets[i - 1].value, "non-decreasing");
  assert.equal(p.samples.find((s) => s.name === "ik_e2e_seconds_count")!.value, obs.length);
  const sum = p.samples.find((s) => s.name === "ik_e2e_seconds_sum")!.value;
  assert.ok(Math.abs(sum - obs.reduce((a, b) => a + b, 0)) < 1e-9);

  const snap = reg.snapshot(1234);
  const sb = snap.series.filter((s) => s.labels.some((l) => l.name === "__name__" && l.value === "ik_e2e_seconds_bucket"));
  assert.deepEqual(sb.map((s) => s.value), want);
  assert.equal(snap.series.length, LATENCY_BUCKETS_SECONDS.length + 3);
  assert.equal(reg.seriesCount(), snap.series.length);
});

test("the documented bucket lists are increasing, and span 5 ms–120 s and 1 ms–2 s", () => {
  for (const b of [LATENCY_BUCKETS_SECONDS, TOKEN_GAP_BUCKETS_SECONDS]) for (let i = 1; i < b.length; i++) assert.ok(b[i] > b[i - 1]);
  assert.deepEqual([LATENCY_BUCKETS_SECONDS[0], LATENCY_BUCKETS_SECONDS.at(-1)], [0.005, 120]);
  assert.deepEqual([TOKEN_GAP_BUCKETS_SECONDS[0], TOKEN_GAP_BUCKETS_SECONDS.at(-1)], [0.001, 2]);
  const reg = new MetricsRegistry();
  assert.throws(() => reg.histogram({ name: "ik_a_seconds", help: "", buckets: [1, 1] }), /strictly increasing/);
  assert.throws(() => reg.histogram({ name: "ik_b_seconds", help: "", buckets: [1, Infinity] }), /finite/);
  assert.throws(() => reg.histogram({ name: "ik_c_seconds", help: "", buckets: [] }), /at least one/);
});

test("label values are escaped (backslash, quote, newline) and read back unchanged", () => {
  const reg = new MetricsRegistry();
  const g = reg.gauge({ name: "ik_odd_labels", help: "x", labelNames: ["model"] });
  const odd = 'a"b\\c\nd e=f,g{h}';
  g.set({ model: odd }, 1);
  assert.equal(reg.render().split("\n")[2], 'ik_odd_labels{model="a\\"b\\\\c\\nd e=f,g{h}"} 1');
  assert.equal(parsePrometheusText(reg.render()).samples[0].labels.model, odd);
});

test("values: +Inf, -Inf, NaN and integers as Prometheus writes them; bad increments are ignored", () => {
  const reg = new MetricsRegistry();
  const g = reg.gauge({ name: "ik_v", help: "v", labelNames: ["k"] });
  g.set({ k: "a" }, Infinity);
  g.set({ k: "b" }, -Infinity);
  g.set({ k: "c" }, NaN);
  g.set({ k: "d" }, 1e21);
  const c = reg.counter({ name: "ik_c_total", help: "c" }).labels();
  c.inc(-1);
  c.inc(NaN);
  c.inc(2);
  const lines = reg.render().split("\n");
  assert.deepEqual(lines.slice(2, 6), ['ik_v{k="a"} +Inf', 'ik_v{k="b"} -Inf', 'ik_v{k="c"} NaN', 'ik_v{k="d"} 1e+21']);
  assert.equal(lines[8], "ik_c_total 2");
});

test("snapshot: labels sorted by name (byte order) with __name__, shared label arrays, values at that instant", () => {
  const reg = new MetricsRegistry({ constLabels: { Zone: "z", run: "r" } });
  const c = reg.counter({ name: "ik_tokens_total", help: "t", labelNames: ["kind", "a"] });
  const child = c.labels({ kind: "output", a: "1" });
  child.inc(5);
  const h = reg.histogram({ name: "ik_tpot_seconds", help: "t", labelNames: ["level"], buckets: TOKEN_GAP_BUCKETS_SECONDS });
  h.observe({ level: "1" }, 0.02);
  const s1 = reg.snapshot(1_700_000_000_123);
  child.inc();
  const s2 = reg.snapshot();
  assert.equal(s1.timestampMs, 1_700_000_000_123);
  for (const s of s1.series as SeriesSample[]) {
    const names = s.labels.map((l) => l.name);
    assert.deepEqual(names, [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    assert.ok(names.includes("__name__"));
  }
  assert.deepEqual(s1.series[0].labels.map((l) => `${l.name}=${l.value}`), ["Zone=z", "__name__=ik_tokens_total", "a=1", "kind=output", "run=r"]);
  assert.equal(s1.series[0].value, 5);
  assert.equal(s2.series[0].value, 6, "a later snapshot sees the new value; the earlier one keeps its own");
  assert.equal(s1.series.length, 1 + TOKEN_GAP_BUCKETS_SECONDS.length + 3);
  const le = s1.series[1].labels.map((l) => l.name);
  assert.deepEqual(le, ["Zone", "__name__", "le", "level", "run"]);
});

test("names and labels: ik_ prefix, counters end in _total, no clashes, exact label sets", () => {
  const reg = new MetricsRegistry();
  assert.throws(() => reg.counter({ name: "requests_total", help: "" }), /ik_/);
  assert.throws(() => reg.counter({ name: "ik_requests", help: "" }), /_total/);
  assert.throws(() => reg.gauge({ name: "ik_x_total", help: "" }), /_total/);
  reg.histogram({ name: "ik_ttft_seconds", help: "", buckets: [1] });
  assert.throws(() => reg.gauge({ name: "ik_ttft_seconds_count", help: "" }), /already registered/);
  assert.throws(() => reg.histogram({ name: "ik_ttft_seconds", help: "", buckets: [1] }), /already registered/);
  const c = reg.counter({ name: "ik_sent_total", help: "", labelNames: ["level"] });
  assert.throws(() => c.labels({}), /missing/);
  assert.throws(() => c.labels({ level: "1", other: "x" }), /unknown label/);
  assert.throws(() => reg.counter({ name: "ik_dup_total", help: "", labelNames: ["a", "a"] }), /twice/);
  assert.equal(c.labels({ level: "1" }), c.labels({ level: "1" }), "a label set's child is made once");
});

test("a gauge unset until known has no sample until ik knows its value (no made-up 0), then the value", () => {
  const r = new MetricsRegistry();
  const g = r.gauge({ name: "ik_server_requests_running", help: "The server's own running gauge", labelNames: [], unsetUntilKnown: true });
  const plain = r.gauge({ name: "ik_in_flight", help: "Requests in flight", labelNames: [] });
  const before = r.render();
  assert.match(before, /# TYPE ik_server_requests_running gauge/);
  assert.doesNotMatch(before, /^ik_server_requests_running /m);
  assert.match(before, /^ik_in_flight 0$/m, "a gauge ik always knows starts at 0");
  g.set({}, 3);
  assert.match(r.render(), /^ik_server_requests_running 3$/m);
  void plain;
});
