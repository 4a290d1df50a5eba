/** lib/metrics: level summaries (with failure-adjusted percentiles), SLO checks, N*, cost, bucket tables. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { shortestF32 } from "../../lib/metrics/column.ts";
import { bucketMetrics, CHUNK_VALUES, Column, type SloCheck, failureAdjusted, LevelAccumulator, type LevelRow, meetsSlo, nStar, roundRows, sloChecks, usdPer1mTokens } from "../../lib/metrics/mod.ts";

function row(i: number, over: Partial<LevelRow> = {}): LevelRow {
  return { ok: true, error_kind: null, ttft_ms: 100 + i, tpot_ms: 10, e2e_ms: 500 + i, n_tokens: 50, send_lag_ms: 0.1, t_send_ns: i * 1e8, t_end_ns: i * 1e8 + 5e8, ...over };
}

describe("LevelAccumulator", () => {
  test("the send lag less each row's CPU wait (never below zero), over the rows that have one; null where none has", () => {
    const lv = new LevelAccumulator();
    // Lags 1..100 ms; rows 1..30 waited 0.5 ms each for a CPU, rows 31..99 longer than their lag, row 100 had no reading.
    for (let i = 1; i <= 100; i++) lv.add(row(i, { send_lag_ms: i, send_cpu_wait_ms: i <= 30 ? 0.5 : i < 100 ? i + 1 : null }));
    const s = lv.summary();
    assert.equal(s.send_lag_ms.p99, 99);
    const w = s.send_lag_without_cpu_wait_ms;
    assert.ok(w);
    assert.equal(w.n, 99, "the row without a reading is left out");
    // 69 zeros (rows 31..99, never below zero) then 0.5..29.5: the median is the 50th of 99.
    assert.equal(w.p50, 0);
    assert.equal(w.p99, 29.5);
    const none = new LevelAccumulator();
    none.add(row(1, { send_lag_ms: 3 }));
    none.add(row(2, { send_lag_ms: 4, send_cpu_wait_ms: null }));
    assert.equal(none.summary().send_lag_without_cpu_wait_ms, null, "no reading at all: no figure");
  });
  test("window from first send to last end; rps, tok/s, Little's law, failures by kind", () => {
    const lv = new LevelAccumulator({ ttftP95Ms: 200 });
    for (let i = 0; i < 10; i++) lv.add(row(i), [10, 10, 12]);
    lv.add(row(10, { ok: false, error_kind: "http", ttft_ms: null, e2e_ms: null, tpot_ms: null, n_tokens: null }));
    const s = lv.summary(2);
    assert.equal(s.n_requests, 11);
    assert.equal(s.n_failed, 1);
    assert.deepEqual(s.failures_by_kind, { http: 1 });
    assert.ok(Math.abs(s.window_s - 1.5) < 1e-9); // 0 .. 10*0.1+0.5
    assert.ok(Math.abs(s.achieved_rps! - 10 / 1.5) < 1e-9);
    assert.ok(Math.abs(s.output_tok_s! - 500 / 1.5) < 1e-9);
    assert.ok(Math.abs(s.output_tok_s_per_gpu! - 500 / 1.5 / 2) < 1e-9);
    assert.ok(Math.abs(s.mean_inflight! - 11 * 0.5 / 1.5) < 1e-9);
    assert.equal(s.ttft_ms.p50, 104);
    assert.equal(s.ttft_ms.p99, 109);
    assert.equal(s.itl_ms.n, 30);
    assert.equal(s.itl_ms.p95, 12);
    assert.ok(Math.abs(s.goodput_rps! - 10 / 1.5) < 1e-9);
    assert.equal(s.slo_ok, false, "one failure over max_fail 0");
    assert.equal(s.slo_checks.ttft_p95_ms.ok, true);
  });

  test("failure-adjusted percentiles count failures as infinitely slow", () => {
    const lv = new LevelAccumulator();
    for (let i = 0; i < 5; i++) lv.add(row(i));
    for (let i = 0; i < 5; i++) lv.add(row(i, { ok: false, error_kind: "http", ttft_ms: null, e2e_ms: null }));
    const s = lv.summary(1);
    assert.equal(s.ttft_ms.p50, 102, "the seed's percentile over ok requests only");
    assert.deepEqual(s.ttft_ms_failure_adjusted.p50, { value: 104, censored: false });
    assert.deepEqual(s.ttft_ms_failure_adjusted.p95, { value: null, censored: true });
    const c = new Column();
    assert.deepEqual(failureAdjusted(c, 0).p50, { value: null, censored: false });
  });
});

describe("SLO, N* and cost", () => {
  test("per-request attainment includes e2e; checks only with a target", () => {
    assert.equal(meetsSlo({ ok: true, ttft_ms: 10, tpot_ms: null, e2e_ms: 900 }, { ttftP95Ms: 20, tpotP95Ms: 5 }), true);
    assert.equal(meetsSlo({ ok: true, ttft_ms: 10, tpot_ms: 1, e2e_ms: 900 }, { e2eP95Ms: 800 }), false);
    assert.deepEqual(sloChecks({ ttftP95: 1, tpotP95: 1, e2eP95: 1, nFailed: 3, nOk: 1 }, {}), {});
  });
  test("N* is the highest level passing there and at every lower one", () => {
    const lv = (level: number, ok: boolean | null) => ({ level, sloOk: ok, checks: (ok === false ? { ttft_p95_ms: { value: 9, target: 1, ok: false } } : {}) as Record<string, SloCheck> });
    assert.deepEqual(nStar([lv(4, true), lv(1, true), lv(2, false), lv(8, true)]), { value: 1, reason: "SLO first fails at level 2 (ttft_p95_ms)", lowerBound: false });
    assert.equal(nStar([lv(1, true), lv(2, true)]).value, 2);
    assert.match(nStar([lv(1, true), lv(2, true)]).reason, /above the grid/);
    // Held at every level: the top is a lower bound (the summary's ">=", rounds' "≥").
    assert.equal(nStar([lv(1, true), lv(2, true)]).lowerBound, true);
    assert.deepEqual(nStar([lv(1, null)]), { value: null, reason: "no SLO given", lowerBound: false });
    assert.equal(nStar([lv(1, false)]).value, null);
  });
  test("a level not judged (interrupted, nothing sent) is never a failure: N* stops below it as a lower bound", () => {
    const failing = { ttft_p95_ms: { value: 9, target: 1, ok: false }, failed: { value: 12, target: 0, ok: false } } as Record<string, SloCheck>;
    const held = { ttft_p95_ms: { value: 1, target: 2, ok: true } } as Record<string, SloCheck>;
    const lv = (level: number, sloOk: boolean | null, notJudged: string | null = null) => ({ level, sloOk, checks: sloOk === false || notJudged ? failing : held, notJudged });
    assert.deepEqual(nStar([lv(1, true), lv(2, true), lv(4, null, "interrupted")]), {
      value: 2,
      reason: "level 4 was not judged (interrupted): N* is at least 2",
      lowerBound: true,
    });
    const first = nStar([lv(1, null, "nothing sent"), lv(2, true)]);
    assert.equal(first.value, null);
    assert.equal(first.lowerBound, false);
    assert.match(first.reason, /level 1 was not judged \(nothing sent\) and no level below it held/);
    assert.doesNotMatch(first.reason, /fails/, "never a failure that was not measured");
    assert.deepEqual(nStar([lv(1, true), lv(2, false), lv(4, null, "interrupted")]).lowerBound, false, "a real failure below wins");
  });
  test("$ per 1M output tokens", () => {
    assert.ok(Math.abs(usdPer1mTokens(1000, 3.6, 2)! - 2) < 1e-12); // 7.2 $/h over 3.6M tok/h
    assert.equal(usdPer1mTokens(null, 3, 1), null);
    assert.equal(usdPer1mTokens(100, null, 1), null);
  });
});

describe("bucketMetrics and roundRows", () => {
  test("median and p95 per bucket and all, CI over rounds, nulls for unmeasured metrics", () => {
    const rows = [];
    for (let r = 0; r < 3; r++) {
      for (let i = 0; i < 4; i++) {
        rows.push({ ok: true, bucket: i < 2 ? "short" : "long", round: r, ttft_ms: 10 * (r + 1) + i, tpot_ms: null, decode_tok_s: 50 + r, e2e_ms: 100 });
      }
    }
    rows.push({ ok: false, bucket: "short", round: 0, ttft_ms: null, tpot_ms: null, decode_tok_s: null, e2e_ms: null });
    const { metrics, table } = bucketMetrics(rows, ["short", "long"], { resamples: 300 });
    assert.equal(table.all.n_requests, 12);
    const all = table.all.ttft_ms as { median: number; rounds: number; ci95_median: [number, number] };
    assert.equal(all.median, 21);
    assert.equal(all.rounds, 3);
    assert.ok(all.ci95_median[0] < 21 && 21 < all.ci95_median[1]);
    assert.equal(table.short.tpot_ms, null);
    assert.ok(metrics.some((m) => m.name === "tpot_ms" && m.value === null && m.n === 0 && m.subject === "long"));
    const rr = roundRows(rows, new Map([[0, [0, 1] as const], [1, [1, 2] as const]]));
    assert.equal(rr.length, 2);
    assert.deepEqual([rr[0].n_requests, rr[0].n_failed, rr[0].ttft_ms], [4, 1, 11]);
  });
});

test("bucketMetrics: p99 and requests/s where a bucket has at least 20 ok requests, not below", async () => {
  const { bucketMetrics: bm, P99_MIN_REQUESTS: min } = await import("../../lib/metrics/bucket.ts");
  const row = (i: number, bucket: string) => ({ ok: true, bucket, round: i % 4, ttft_ms: 10 + i, tpot_ms: 2, decode_tok_s: 500, e2e_ms: 100 });
  const rows = [...Array.from({ length: 30 }, (_, i) => row(i, "big")), ...Array.from({ length: min - 1 }, (_, i) => row(i, "small"))];
  const { metrics, table } = bm(rows, ["big", "small"], { resamples: 200, seed: 1 });
  const ttftBig = table.big.ttft_ms as { p99?: number | null; p95: number | null };
  // Nearest rank over 10..39: p99 is the 30th value (39), p95 the 29th (38).
  assert.equal(ttftBig.p99, 39);
  assert.equal(ttftBig.p95, 38);
  assert.ok(metrics.some((m) => m.name === "ttft_ms" && m.stat === "p99" && m.subject === "big" && m.value === 39));
  assert.equal(table.big.requests_per_s, 10, "30 requests of 100 ms each, one at a time: 10 req/s");
  assert.equal((table.small.ttft_ms as { p99?: number }).p99, undefined, "19 requests: no p99");
  assert.equal(table.small.requests_per_s, undefined);
  assert.ok(!metrics.some((m) => m.stat === "p99" && m.subject === "small"));
  assert.ok(metrics.some((m) => m.name === "requests_per_s" && m.subject === "all"));
});

test("renderSingleRecord: p95/p99 and req/s where the bucket has them, '-' where not", async () => {
  const { renderSingleRecord } = await import("../../lib/report/terminal/serve_table.ts");
  const fig = (median: number, p95: number, p99?: number) => ({ median, p95, ci95_median: null, ci95_p95: null, n: 30, rounds: 3, ...(p99 === undefined ? {} : { p99 }) });
  const rec = {
    evidence_id: "serve_benchmark-x", summary: "s", limitations: [], missing: [], complete: true,
    data: { buckets: { big: { n_requests: 30, ttft_ms: fig(20, 38, 39), tpot_ms: fig(2, 2.5, 2.9), decode_tok_s: fig(500, 400), e2e_ms: fig(100, 120), requests_per_s: 10 }, small: { n_requests: 5, ttft_ms: fig(20, 30), tpot_ms: fig(2, 2.2), decode_tok_s: fig(500, 450), e2e_ms: fig(100, 110) } } },
  };
  const out = renderSingleRecord(rec, "/tmp/x");
  const big = out.split("\n").find((l) => l.includes("big")) as string;
  assert.match(big, /38\.0\/39\.0/);
  assert.match(big, /2\.50\/2\.90/);
  assert.match(big, /10\.00/);
  const small = out.split("\n").find((l) => l.includes("small")) as string;
  assert.doesNotMatch(small, /\d\/\d/);
});

test("Column past one chunk: values kept in push order across chunk edges (single pushes and batches), sorted copies agree with a plain sort, pushes after one go on", () => {
  const c = new Column(3);
  const ref: number[] = [];
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 1e5;
  // Batches of awkward sizes so that they straddle the doubling steps and the chunk edges.
  while (ref.length < CHUNK_VALUES * 3 + 17) {
    const n = ref.length % 5 === 0 ? 1 : 997 + (ref.length % 7);
    if (n === 1) {
      const v = next();
      c.push(v);
      ref.push(v);
    } else {
      const vs = Array.from({ length: n }, next);
      c.pushAll(vs);
      ref.push(...vs);
    }
  }
  assert.equal(c.length, ref.length);
  assert.deepEqual(c.toArray(), ref, "push order");
  const sortedRef = Float64Array.from(ref).sort();
  assert.deepEqual(c.sorted(), sortedRef);
  const more = Array.from({ length: CHUNK_VALUES + 5 }, next);
  c.pushAll(more);
  c.push(-1);
  assert.equal(c.length, ref.length + more.length + 1);
  assert.deepEqual(c.sorted(), Float64Array.from([...ref, ...more, -1]).sort());
});

test("Column.percentilesInPlace: the same nearest-rank p50/p90/p95/p99 as a sorted copy, past one chunk (ties, zeros, negatives, a huge outlier) and after more pushes", () => {
  const check = (c: Column, all: number[], why: string) => {
    const sorted = Float64Array.from(all).sort();
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
    assert.deepEqual(c.percentilesInPlace(), { n: all.length, p50: at(50), p90: at(90), p95: at(95), p99: at(99) }, why);
  };
  let x = 7;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  for (const n of [1, 5, 1000, CHUNK_VALUES, CHUNK_VALUES + 1, CHUNK_VALUES * 3 + 123]) {
    const c = new Column(4);
    const all: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = next() % 1000;
      // Many ties, some zeros and negatives, one enormous value.
      const v = i === 3 ? 1e12 : r < 50 ? 0 : r < 80 ? -(r / 7) : Math.floor(r / 10) / 4;
      c.push(v);
      all.push(v);
    }
    check(c, all, `n ${n}`);
    const more = Array.from({ length: 777 }, () => (next() % 5000) / 3);
    c.pushAll(more);
    all.push(...more);
    check(c, all, `n ${n} + 777`);
  }
  assert.deepEqual(new Column().percentilesInPlace(), { n: 0, p50: null, p90: null, p95: null, p99: null });
});

test("shortestF32: the shortest decimal that is the same float32 (50.1, not 50.099998474121094); it always reads back", () => {
  assert.equal(shortestF32(Math.fround(50.1)), 50.1);
  assert.equal(shortestF32(Math.fround(0.1)), 0.1);
  assert.equal(shortestF32(Math.fround(1 / 3)), 0.33333334);
  assert.equal(shortestF32(Math.fround(-2.5)), -2.5);
  for (const v of [0, -0, Infinity, -Infinity]) assert.ok(Object.is(shortestF32(v), v));
  assert.ok(Number.isNaN(shortestF32(NaN)));
  let x = 99;
  for (let i = 0; i < 5000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const f = Math.fround((x / 2147483648) * 10 ** ((x % 13) - 5));
    const d = shortestF32(f);
    assert.equal(Math.fround(d), f, `${f} -> ${d}`);
    assert.ok(String(d).replace(/^0\.0*|[.-]|e.*$/g, "").length <= 9, `${d}: at most 9 significant digits`);
  }
});

test("a Column of 32-bit floats (a level's ITL): values rounded to float32, read out as their shortest decimals, the same through every path", () => {
  let x = 3;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 1e7;
  for (const n of [7, CHUNK_VALUES * 2 + 3]) {
    const c = new Column(4, "f32");
    const vals = Array.from({ length: n }, next);
    c.pushAll(vals);
    const want = Float64Array.from(vals, (v) => shortestF32(Math.fround(v))).sort();
    const at = (p: number) => want[Math.ceil((p / 100) * n) - 1];
    assert.deepEqual(c.sorted(), want, `n ${n}: sorted`);
    assert.deepEqual(c.percentilesInPlace(), { n, p50: at(50), p90: at(90), p95: at(95), p99: at(99) }, `n ${n}: percentiles`);
    for (const p of [50, 99]) assert.ok(Math.abs(at(p) / Float64Array.from(vals).sort()[Math.ceil((p / 100) * n) - 1] - 1) < 6e-8, `p${p} within float32's rounding`);
  }
  // The level's ITL is such a column: a gap with many digits reads as its float32's decimal.
  const acc = new LevelAccumulator({ ttftMs: null, tpotMs: null, e2eMs: null } as never);
  acc.addItl([8.010617278431372]);
  assert.equal(acc.summary().itl_ms.p50, shortestF32(Math.fround(8.010617278431372)));
  assert.notEqual(acc.summary().itl_ms.p50, 8.010617278431372);
});

test("Column.sorted: the sorted values; later pushes are sorted in on the next call; ITL percentiles match a sorted copy", () => {
  const c = new Column(2);
  const vals = [5, 1, 4, 1, 9, 2, 6];
  for (const v of vals) c.push(v);
  assert.deepEqual(Array.from(c.sorted()), [...vals].sort((a, b) => a - b));
  c.pushAll([0, 3]);
  assert.deepEqual(Array.from(c.sorted()), [0, 1, 1, 2, 3, 4, 5, 6, 9]);
  assert.equal(c.length, 9);
  const acc = new LevelAccumulator({ ttftMs: null, tpotMs: null, e2eMs: null } as never);
  const gaps: number[] = [];
  for (let i = 0; i < 300; i++) gaps.push(((i * 7919) % 1000) / 10);
  acc.addItl(gaps);
  const s = acc.summary();
  const sorted = [...gaps].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.ceil((p / 100) * sorted.length) - 1];
  assert.deepEqual({ n: s.itl_ms.n, p50: s.itl_ms.p50, p99: s.itl_ms.p99 }, { n: 300, p50: rank(50), p99: rank(99) });
  assert.deepEqual(acc.summary().itl_ms, s.itl_ms, "a second summary reads the same");
});
