/**
 * RemoteWriter against a REAL Prometheus (Debian's 2.x, `--web.enable-remote-write-receiver`),
 * started here on a free loopback port with a throwaway TSDB: what was pushed is what PromQL
 * returns (counters, gauges, every histogram bucket, `_sum`, `_count`, odd label values, 2,000
 * series in one push, a second snapshot later), and when Prometheus is killed mid-way the
 * samples pushed meanwhile are counted as not delivered, and Prometheus itself shows the gap after
 * a restart. Skipped, with the reason, where /usr/bin/prometheus is absent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { LATENCY_BUCKETS_SECONDS, MetricsRegistry, RemoteWriter } from "../../lib/live_metrics/mod.ts";
import { prometheusSkip, startPrometheus } from "./_prometheus.ts";

const SKIP = prometheusSkip();
// The runners print no skip reason: say it once here.
if (SKIP) console.error(`tests/live_metrics/prometheus_real: skipped: ${SKIP}`);
const TAG = "hmac-sha256:" + "ab".repeat(32);
const ODD = 'Qwen/Qwen3-8B "quoted" back\\slash ünï';

function registry() {
  const reg = new MetricsRegistry({ constLabels: { endpoint: TAG, run: "e2e" } });
  const sent = reg.counter({ name: "ik_requests_sent_total", help: "Requests sent.", labelNames: ["level"] });
  const inflight = reg.gauge({ name: "ik_requests_in_flight", help: "In flight." });
  const ttft = reg.histogram({ name: "ik_ttft_seconds", help: "TTFT.", labelNames: ["level"], buckets: LATENCY_BUCKETS_SECONDS });
  const info = reg.gauge({ name: "ik_model_info", help: "Model.", labelNames: ["model"] });
  const bulk = reg.gauge({ name: "ik_bulk_value", help: "Many series.", labelNames: ["i"] });
  return { reg, sent, inflight, ttft, info, bulk };
}

test("real Prometheus: pushed series read back by PromQL with the values pushed", { skip: SKIP, timeout: 90_000 }, async () => {
  const prom = await startPrometheus();
  const rw = new RemoteWriter({ url: prom.writeUrl, headers: { Authorization: "Bearer unused-by-prometheus" }, requestTimeoutMs: 10_000 });
  try {
    const m = registry();
    m.sent.inc({ level: "1" }, 41);
    m.sent.inc({ level: "2" }, 7);
    m.inflight.labels().set(3.25);
    const obs = [0.004, 0.03, 0.2, 0.2, 0.9, 4, 15, 250];
    for (const v of obs) m.ttft.observe({ level: "1" }, v);
    m.info.set({ model: ODD }, 1);
    for (let i = 0; i < 2000; i++) m.bulk.set({ i: String(i) }, i);
    const t1 = Date.now() - 2000;
    const s1 = m.reg.snapshot(t1);
    assert.equal(s1.series.length, 2 + 1 + (LATENCY_BUCKETS_SECONDS.length + 3) + 1 + 2000);
    rw.push(s1);
    await rw.idle();
    assert.deepEqual([rw.stats().samplesDelivered, rw.stats().samplesNotDelivered], [s1.series.length, 0], `${rw.stats().lastError} / ${prom.log()}`);

    const one = async (q: string, t: number) => {
      const r = await prom.query(q, t);
      assert.equal(r.length, 1, `${q}: ${JSON.stringify(r)}`);
      return r[0];
    };
    assert.equal((await one('ik_requests_sent_total{level="1"}', t1)).value, 41);
    assert.equal((await one('ik_requests_sent_total{level="2"}', t1)).value, 7);
    const g = await one("ik_requests_in_flight", t1);
    assert.equal(g.value, 3.25);
    assert.deepEqual(g.metric, { __name__: "ik_requests_in_flight", endpoint: TAG, run: "e2e" });
    const buckets = await prom.query('ik_ttft_seconds_bucket{level="1"}', t1);
    assert.equal(buckets.length, LATENCY_BUCKETS_SECONDS.length + 1);
    for (const le of [...LATENCY_BUCKETS_SECONDS, Infinity]) {
      const b = buckets.find((x) => x.metric.le === (le === Infinity ? "+Inf" : String(le)));
      assert.ok(b, `bucket le=${le}`);
      assert.equal(b!.value, obs.filter((v) => v <= le).length, `le=${le}`);
    }
    assert.equal((await one('ik_ttft_seconds_count{level="1"}', t1)).value, obs.length);
    assert.ok(Math.abs((await one('ik_ttft_seconds_sum{level="1"}', t1)).value - obs.reduce((a, b) => a + b, 0)) < 1e-9);
    assert.equal((await one("ik_model_info", t1)).metric.model, ODD);
    assert.equal((await one("count(ik_bulk_value)", t1)).value, 2000);
    assert.equal((await one("sum(ik_bulk_value)", t1)).value, (1999 * 2000) / 2);
    assert.equal((await one('ik_bulk_value{i="1234"}', t1)).value, 1234);

    // A later snapshot: the new values at its time, the old ones still at theirs.
    m.sent.inc({ level: "1" }, 9);
    const t2 = t1 + 1000;
    const st = await rw.close(m.reg.snapshot(t2), { deadlineMs: 10_000 });
    assert.equal(st.samplesDelivered, 2 * s1.series.length);
    assert.equal((await one('ik_requests_sent_total{level="1"}', t2)).value, 50);
    assert.equal((await one('ik_requests_sent_total{level="1"}', t1)).value, 41);
    assert.equal((await one('increase(ik_requests_sent_total{level="1"}[5s])', t2)).value > 0, true);
  } finally {
    await rw.close(undefined, { deadlineMs: 1000 });
    await prom.stop();
  }
});

test("real Prometheus killed mid-way: the loss is counted, and shows as a gap after a restart", { skip: SKIP, timeout: 90_000 }, async () => {
  const prom = await startPrometheus();
  const rw = new RemoteWriter({ url: prom.writeUrl, maxAttempts: 3, initialBackoffMs: 50, requestTimeoutMs: 2000, pushDeadlineMs: 5000 });
  try {
    const m = registry();
    const c = m.sent.labels({ level: "1" });
    const t0 = Date.now() - 10_000;
    c.inc(1);
    const a = m.reg.snapshot(t0);
    rw.push(a);
    await rw.idle();
    assert.equal(rw.stats().samplesDelivered, a.series.length, rw.stats().lastError ?? "");

    await prom.kill();
    c.inc(1);
    const b = m.reg.snapshot(t0 + 1000);
    rw.push(b);
    await rw.idle();
    let st = rw.stats();
    assert.deepEqual([st.samplesDelivered, st.samplesFailed, st.pushesFailed, st.attempts], [a.series.length, b.series.length, 1, 4]);
    assert.match(st.lastError!, /gave up after 3 attempt\(s\)/);

    await prom.restart();
    c.inc(1);
    const d = m.reg.snapshot(t0 + 2000);
    st = await rw.close(d, { deadlineMs: 10_000 });
    assert.deepEqual([st.samplesDelivered, st.samplesNotDelivered], [a.series.length + d.series.length, b.series.length], st.lastError ?? "");
    const at = async (t: number) => (await prom.query('ik_requests_sent_total{level="1"}', t))[0]?.value;
    assert.equal(await at(t0), 1, "A survived the kill (WAL)");
    assert.equal(await at(t0 + 1000), 1, "B was lost: at its time Prometheus still has A's value");
    assert.equal(await at(t0 + 2000), 3, "D arrived after the restart");
  } finally {
    await rw.close(undefined, { deadlineMs: 1000 });
    await prom.stop();
  }
});
