/**
 * The remote write body: the WriteRequest protobuf decoded back with the same library gives every
 * series with its labels sorted by name (`__name__` included) and one sample at the snapshot's
 * timestamp; snappy round-trips (small, empty, over one 64 KiB block, incompressible); the body is
 * snappy of the protobuf; the protocol headers.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  encodeRemoteWriteBody, encodeWriteRequest, LATENCY_BUCKETS_SECONDS, MetricsRegistry, REMOTE_WRITE_HEADERS, snappyCompress, snappyUncompress,
} from "../../lib/live_metrics/mod.ts";
import { decodeRemoteWriteBody, decodeWriteRequest } from "./_decode.ts";
import { liveOptions } from "../../lib/commands/live_options.ts";
import { IkError } from "../../lib/cli/errors.ts";
import { VERSION } from "../../lib/version.ts";

function sampleRegistry(): MetricsRegistry {
  const reg = new MetricsRegistry({ constLabels: { run: "r1", endpoint: "hmac-sha256:ab" } });
  reg.counter({ name: "ik_requests_sent_total", help: "s", labelNames: ["level"] }).inc({ level: "2" }, 7);
  reg.gauge({ name: "ik_requests_in_flight", help: "g" }).labels().set(-2.5);
  const h = reg.histogram({ name: "ik_ttft_seconds", help: "h", labelNames: ["level"], buckets: LATENCY_BUCKETS_SECONDS });
  for (const v of [0.003, 0.2, 0.2, 7, 500]) h.observe({ level: "2" }, v);
  reg.gauge({ name: "ik_model_info", help: "i", labelNames: ["model"] }).set({ model: "Qwen/Qwen3-8B ünïcødé" }, 1);
  return reg;
}

test("WriteRequest bytes decode back to every series, labels sorted with __name__, one sample each", () => {
  const snap = sampleRegistry().snapshot(1_712_345_678_901);
  const decoded = decodeWriteRequest(encodeWriteRequest(snap));
  assert.equal(decoded.length, snap.series.length);
  decoded.forEach((d, i) => {
    assert.deepEqual(d.labels, snap.series[i].labels.map((l) => ({ name: l.name, value: l.value })));
    const names = d.labels.map((l) => l.name);
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.includes("__name__"));
    assert.deepEqual(d.samples, [{ value: snap.series[i].value, timestamp: 1_712_345_678_901 }]);
  });
  const find = (name: string, le?: string) =>
    decoded.find((d) => d.labels.some((l) => l.name === "__name__" && l.value === name) && (le === undefined || d.labels.some((l) => l.name === "le" && l.value === le)))!;
  assert.equal(find("ik_requests_sent_total").samples[0].value, 7);
  assert.equal(find("ik_requests_in_flight").samples[0].value, -2.5);
  assert.equal(find("ik_ttft_seconds_bucket", "0.25").samples[0].value, 3);
  assert.equal(find("ik_ttft_seconds_bucket", "+Inf").samples[0].value, 5);
  assert.equal(find("ik_ttft_seconds_count").samples[0].value, 5);
  assert.equal(find("ik_model_info").labels.find((l) => l.name === "model")!.value, "Qwen/Qwen3-8B ünïcødé");
});

test("the run's last snapshot ends every series with Prometheus's stale marker (bits 0x7ff0000000000002) 1 ms after its sample", () => {
  const snap = sampleRegistry().snapshot(1_712_345_678_901);
  const last = decodeWriteRequest(encodeWriteRequest({ ...snap, last: true }));
  assert.equal(last.length, snap.series.length);
  last.forEach((d, i) => {
    assert.deepEqual(d.samples[0], { value: snap.series[i].value, timestamp: 1_712_345_678_901 });
    assert.equal(d.samples.length, 2);
    assert.equal(d.samples[1].stale, true);
    assert.equal(d.samples[1].timestamp, 1_712_345_678_902);
    assert.ok(Number.isNaN(d.samples[1].value));
  });
  // An ordinary NaN value is not a stale marker, and a snapshot that is not the last has none.
  const reg = new MetricsRegistry();
  reg.gauge({ name: "ik_x", help: "x" }).labels().set(NaN);
  assert.deepEqual(decodeWriteRequest(encodeWriteRequest(reg.snapshot(7)))[0].samples.length, 1);
  assert.equal(decodeWriteRequest(encodeWriteRequest(reg.snapshot(7)))[0].samples[0].stale, undefined);
});

test("a zero value and an empty snapshot encode (zero is sent, not dropped as a proto3 default)", () => {
  const reg = new MetricsRegistry();
  reg.counter({ name: "ik_errors_total", help: "e" });
  const d = decodeWriteRequest(encodeWriteRequest(reg.snapshot(5)));
  assert.deepEqual(d[0].samples, [{ value: 0, timestamp: 5 }]);
  assert.equal(encodeWriteRequest({ timestampMs: 1, series: [] }).length, 0);
});

test("encoded labels are cached only for frozen label arrays (a registry's); a mutable array is re-encoded", () => {
  const labels = [{ name: "__name__", value: "ik_x" }, { name: "a", value: "1" }];
  const snapOf = () => ({ timestampMs: 1, series: [{ labels, value: 2 }] });
  assert.equal(decodeWriteRequest(encodeWriteRequest(snapOf()))[0].labels[1].value, "1");
  labels[1] = { name: "a", value: "2" };
  assert.equal(decodeWriteRequest(encodeWriteRequest(snapOf()))[0].labels[1].value, "2");
  const reg = sampleRegistry();
  const a = reg.snapshot(1), b = reg.snapshot(2);
  assert.equal(a.series[0].labels, b.series[0].labels, "a registry hands out the same frozen label array");
  assert.ok(Object.isFrozen(a.series[0].labels));
});

test("snappy round-trips: small, empty, several 64 KiB blocks, incompressible bytes", () => {
  const text = new TextEncoder().encode("ik_ttft_seconds_bucket{le=\"0.5\"} 3\n".repeat(10_000));
  let seed = 1;
  const noise = Uint8Array.from({ length: 200_000 }, () => (seed = (seed * 48271) % 2147483647) & 0xff);
  for (const input of [new Uint8Array(0), Uint8Array.of(1, 2, 3), text, noise]) {
    const c = snappyCompress(input);
    assert.ok(c instanceof Uint8Array);
    assert.deepEqual(snappyUncompress(c), input);
  }
  assert.ok(snappyCompress(text).length < text.length / 5, "repetitive text compresses");
});

test("the body is snappy(WriteRequest), and decodes back whole", () => {
  const snap = sampleRegistry().snapshot(99);
  const body = encodeRemoteWriteBody(snap);
  assert.deepEqual(snappyUncompress(body), encodeWriteRequest(snap));
  assert.equal(decodeRemoteWriteBody(body).length, snap.series.length);
});

test("the remote write 1.0 protocol headers, the sender named with its version", () => {
  assert.deepEqual({ ...REMOTE_WRITE_HEADERS }, {
    "Content-Encoding": "snappy",
    "Content-Type": "application/x-protobuf",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
    "User-Agent": `ik/${VERSION}`,
  });
});

test("--prometheus-remote-write-header cannot set the protocol's own headers or the User-Agent (64)", () => {
  for (const h of ["Content-Type=text/plain", "content-encoding=gzip", "X-Prometheus-Remote-Write-Version=2.0.0", "User-Agent=foo"]) {
    assert.throws(() => liveOptions({ remoteWrite: "http://127.0.0.1:1/w", remoteWriteHeaders: [h] }), (e: unknown) => e instanceof IkError && e.code === 64 && /set by the remote-write protocol itself/.test(e.message), h);
  }
  const ok = liveOptions({ remoteWrite: "http://127.0.0.1:1/w", remoteWriteHeaders: ["X-Scope-OrgID=t1"] });
  assert.deepEqual(ok.remoteWrite?.headers, { "X-Scope-OrgID": "t1" });
});
