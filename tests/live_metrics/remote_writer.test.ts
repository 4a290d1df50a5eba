/**
 * RemoteWriter against an in-process receiver on 127.0.0.1: retries with backoff after failures
 * (and the counts), no retry on a 4xx, bounded attempts, a receiver that never answers (the push
 * deadline and the close deadline hold, counted as not delivered), at most one push in flight with
 * a newer snapshot replacing the queued one, header values and URL credentials never in notes,
 * push never throwing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MetricsRegistry, RemoteWriter, type Snapshot } from "../../lib/live_metrics/mod.ts";
import { freePort } from "../_helpers/ports.ts";
import { decodeRemoteWriteBody } from "./_decode.ts";
import { rwServer } from "./_rw_server.ts";

const TOKEN = "tok-9f8e7d6c5b4a";

function snap(n: number, t = Date.now()): Snapshot {
  const reg = new MetricsRegistry({ constLabels: { run: "rw" } });
  const g = reg.gauge({ name: "ik_test_value", help: "v", labelNames: ["i"] });
  for (let i = 0; i < n; i++) g.set({ i: String(i) }, i * 1.5);
  return reg.snapshot(t);
}

test("fails the first 2 requests (503), then accepts: retried with backoff, counted, body and headers right", async () => {
  const srv = await rwServer((i, req) => i < 2 ? { status: 503, body: `overloaded; you sent ${req.headers.authorization}` } : { status: 204 });
  const rw = new RemoteWriter({ url: srv.url, headers: { Authorization: `Bearer ${TOKEN}`, "X-Scope-OrgID": "tenant-a" }, initialBackoffMs: 50 });
  try {
    const s = snap(20, 1_700_000_000_000);
    const t0 = Date.now();
    rw.push(s);
    assert.equal(rw.stats().inFlight, true, "push returns at once, the send runs on");
    await rw.idle();
    const st = rw.stats();
    assert.equal(st.attempts, 3);
    assert.equal(st.retries, 2);
    assert.equal(st.samplesDelivered, 20);
    assert.equal(st.samplesNotDelivered, 0);
    assert.equal(st.pushesDelivered, 1);
    assert.ok(Date.now() - t0 >= 50 + 100 - 10, "backoff 50 ms then 100 ms");
    assert.match(st.lastError ?? "", /^HTTP 503: overloaded/);
    assert.ok(!st.lastError!.includes(TOKEN), `no header value in the note: ${st.lastError}`);
    const h = srv.requests[2].headers;
    assert.equal(h["content-encoding"], "snappy");
    assert.equal(h["content-type"], "application/x-protobuf");
    assert.equal(h["x-prometheus-remote-write-version"], "0.1.0");
    assert.equal(h["authorization"], `Bearer ${TOKEN}`);
    assert.equal(h["x-scope-orgid"], "tenant-a");
    const d = decodeRemoteWriteBody(srv.requests[2].body);
    assert.equal(d.length, 20);
    const i3 = d.find((x) => x.labels.some((l) => l.name === "i" && l.value === "3"))!;
    assert.deepEqual(i3.samples, [{ value: 4.5, timestamp: 1_700_000_000_000 }]);
  } finally {
    await rw.close();
    await srv.close();
  }
});

test("always failing: bounded attempts, the samples counted as not delivered, one scrubbed line", async () => {
  const srv = await rwServer(() => ({ status: 500, body: `boom\nsecond line ${TOKEN}` }));
  const rw = new RemoteWriter({ url: srv.url, headers: { "X-Api-Token": TOKEN }, maxAttempts: 3, initialBackoffMs: 10 });
  try {
    rw.push(snap(5));
    await rw.idle();
    const st = rw.stats();
    assert.equal(srv.requests.length, 3);
    assert.deepEqual([st.attempts, st.samplesDelivered, st.samplesFailed, st.samplesNotDelivered, st.pushesFailed], [3, 0, 5, 5, 1]);
    assert.match(st.lastError!, /^HTTP 500: boom second line \*\*\*; gave up after 3 attempt\(s\)/);
    assert.ok(!st.lastError!.includes("\n"));
  } finally {
    await rw.close();
    await srv.close();
  }
});

test("a 400 is final (no retry); a 429 is retried", async () => {
  const srv = await rwServer((i) => i === 0 ? { status: 400, body: "out of order sample" } : i === 1 ? { status: 429, headers: { "retry-after": "0" } } : { status: 200 });
  const rw = new RemoteWriter({ url: srv.url, initialBackoffMs: 10 });
  try {
    rw.push(snap(2));
    await rw.idle();
    assert.deepEqual([rw.stats().attempts, rw.stats().samplesFailed], [1, 2]);
    assert.match(rw.stats().lastError!, /HTTP 400: out of order sample; gave up after 1 attempt/);
    rw.push(snap(3));
    await rw.idle();
    assert.deepEqual([rw.stats().attempts, rw.stats().samplesDelivered, rw.stats().samplesFailed], [3, 3, 2]);
  } finally {
    await rw.close();
    await srv.close();
  }
});

test("a receiver that never answers: the push deadline holds and the samples are counted", async () => {
  const srv = await rwServer(() => "hang");
  const rw = new RemoteWriter({ url: srv.url, requestTimeoutMs: 200, pushDeadlineMs: 1000, maxAttempts: 100, initialBackoffMs: 20 });
  try {
    const t0 = Date.now();
    rw.push(snap(7));
    await rw.idle();
    const took = Date.now() - t0;
    assert.ok(took < 3000, `bounded by pushDeadlineMs (took ${took} ms)`);
    const st = rw.stats();
    assert.deepEqual([st.samplesDelivered, st.samplesFailed], [0, 7]);
    assert.ok(st.attempts >= 2 && st.attempts <= 6, `timed-out attempts are retried within the deadline (${st.attempts})`);
    assert.match(st.lastError!, /no answer within \d+ ms; gave up after/);
  } finally {
    await rw.close();
    await srv.close();
  }
});

test("close() on a receiver that never answers: the deadline holds, the final push counted as not delivered", async () => {
  const srv = await rwServer(() => "hang");
  const rw = new RemoteWriter({ url: srv.url, requestTimeoutMs: 30_000, pushDeadlineMs: 60_000 });
  try {
    rw.push(snap(4)); // in flight, hanging
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    const st = await rw.close(snap(6), { deadlineMs: 400 });
    const took = Date.now() - t0;
    assert.ok(took >= 350 && took < 3000, `close waited about its deadline (${took} ms)`);
    assert.deepEqual([st.samplesDelivered, st.samplesFailed, st.samplesNotDelivered, st.closed, st.inFlight], [0, 10, 10, true, false]);
    assert.match(st.lastError!, /close deadline/);
    rw.push(snap(3));
    assert.equal(rw.stats().samplesFailed, 13, "a push after close is counted, not sent");
    assert.match(rw.stats().lastError!, /pushed after close/);
  } finally {
    await srv.close();
  }
});

test("close() delivers the final snapshot when the receiver answers", async () => {
  const srv = await rwServer(() => ({ status: 204 }));
  const rw = new RemoteWriter({ url: srv.url });
  try {
    const st = await rw.close(snap(9), { deadlineMs: 5000 });
    assert.deepEqual([st.samplesDelivered, st.samplesNotDelivered, srv.requests.length], [9, 0, 1]);
  } finally {
    await srv.close();
  }
});

test("at most one push in flight; a newer snapshot replaces the queued one", async () => {
  const srv = await rwServer(() => ({ status: 204, delayMs: 150 }));
  const rw = new RemoteWriter({ url: srv.url });
  try {
    rw.push(snap(1, 1000)); // sent at once
    rw.push(snap(2, 2000)); // queued
    rw.push(snap(3, 3000)); // replaces the queued one
    assert.equal(rw.stats().queued, true);
    await rw.idle();
    const st = rw.stats();
    assert.equal(srv.maxOpen(), 1);
    assert.equal(srv.requests.length, 2);
    assert.deepEqual(srv.requests.map((r) => decodeRemoteWriteBody(r.body)[0].samples[0].timestamp), [1000, 3000]);
    assert.deepEqual([st.samplesDelivered, st.samplesReplaced, st.pushesReplaced, st.samplesNotDelivered], [4, 2, 1, 2]);
  } finally {
    await rw.close();
    await srv.close();
  }
});

test("URL credentials become Basic auth and never reach a note; connection refused is retried and counted", async () => {
  const srv = await rwServer(() => ({ status: 204 }));
  const pw = "pw-Secret-1234";
  try {
    const ok = new RemoteWriter({ url: srv.url.replace("http://", `http://alice:${pw}@`) });
    ok.push(snap(1));
    await ok.close();
    assert.equal(srv.requests[0].headers.authorization, `Basic ${btoa(`alice:${pw}`)}`);
    const port = await freePort();
    const bad = new RemoteWriter({ url: `http://alice:${pw}@127.0.0.1:${port}/api/v1/write`, maxAttempts: 2, initialBackoffMs: 10 });
    bad.push(snap(2));
    await bad.idle();
    const st = await bad.close();
    assert.deepEqual([st.attempts, st.samplesFailed], [2, 2]);
    for (const s of [pw, "alice:", btoa(`alice:${pw}`)]) assert.ok(!st.lastError!.includes(s), st.lastError!);
    assert.equal(bad.scrub(`a ${pw} b Basic ${btoa(`alice:${pw}`)}`), "a *** b Basic ***");
  } finally {
    await srv.close();
  }
});

test("push never throws, an empty snapshot sends nothing, bad options are refused with credentials redacted", async () => {
  const rw = new RemoteWriter({ url: "http://127.0.0.1:9/api/v1/write", maxAttempts: 1 });
  rw.push({ timestampMs: 0, series: [] });
  assert.equal(rw.stats().inFlight, false);
  assert.doesNotThrow(() => rw.push(null as unknown as Snapshot));
  assert.match(rw.stats().lastError!, /^push:/);
  await rw.close();
  assert.throws(() => new RemoteWriter({ url: "ftp://u:secretpw@h/x" }), (e: Error) => /http\(s\)/.test(e.message) && !e.message.includes("secretpw"));
  assert.throws(() => new RemoteWriter({ url: "not a url secretpw" }), /not a URL/);
  assert.throws(() => new RemoteWriter({ url: "http://h/", maxAttempts: 0 }), /maxAttempts/);
});
