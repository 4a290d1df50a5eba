/**
 * lib/compare where one side answered no request of a bucket (an engine that refuses the long
 * prompts): the other side's medians over its own rounds still show, the reading is "not ranked:
 * failed requests" naming the side that failed all, and the text says what the medians are over.
 * Pure, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compareRecords, renderComparison, sideFacts } from "../../lib/compare/mod.ts";

type Row = Record<string, unknown>;

const single = () => ({
  kind: "serve_benchmark", complete: true,
  identity: { workload: { mode: "single", request_set: { sha256: "a".repeat(64), n: 6 } } },
  data: { buckets: { short: {}, long: {}, all: {} } },
});

/** 4 rounds × 3 requests per bucket; `failLong` makes every long request fail. */
function rows(base: number, failLong: boolean): Row[] {
  const out: Row[] = [];
  for (let round = 0; round < 4; round++) {
    for (const bucket of ["short", "long"]) {
      for (let i = 0; i < 3; i++) {
        const ttft = base * (bucket === "long" ? 2 : 1) + round + i;
        if (failLong && bucket === "long") out.push({ round, bucket, ok: false, error: "context length" });
        else out.push({ round, bucket, ok: true, ttft_ms: ttft, tpot_ms: 2 + i / 10, decode_tok_s: 500 - i, e2e_ms: ttft + 60 });
      }
    }
  }
  return out;
}

/** Nearest-rank median, written out here so the test does not lean on lib/stats. */
function med(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.ceil(s.length / 2) - 1];
}

/** A's own per-round medians of a bucket and metric, then their median. */
function ownMedian(rs: Row[], bucket: string, metric: string): number {
  const by = new Map<number, number[]>();
  for (const r of rs) if (r.ok === true && r.bucket === bucket) by.set(r.round as number, [...(by.get(r.round as number) ?? []), r[metric] as number]);
  return med([...by.values()].map(med));
}

describe("one side failed every request of a bucket", () => {
  const a = rows(20, false), b = rows(20, true);
  const c = compareRecords({ record: single(), rows: a }, { record: single(), rows: b });

  test("A's medians over its own rounds are kept; B's is null; the reading names B as having failed all", () => {
    const long = c.rows.filter((r) => r.bucket === "long");
    assert.deepEqual(long.map((r) => r.metric), ["ttft_ms", "tpot_ms", "decode_tok_s", "e2e_ms"]);
    for (const r of long) {
      assert.equal(r.a_median, ownMedian(a, "long", r.metric), r.metric);
      assert.equal(r.b_median, null);
      assert.equal(r.a_rounds, 4);
      assert.equal(r.b_rounds, 0);
      assert.equal(r.median_basis, "own rounds");
      assert.equal(r.ratio, null);
      assert.equal(r.n_pairs, 0);
      assert.equal(r.reading, "not ranked: failed requests (B failed all 12 requests)");
    }
    // Buckets that pair keep the paired medians; `all` had failures on B's side, so it is not ranked, and no side failed all of it.
    const short = c.rows.find((r) => r.bucket === "short" && r.metric === "ttft_ms")!;
    assert.equal(short.median_basis, "paired rounds");
    assert.equal(short.a_rounds, 4);
    assert.equal(c.rows.find((r) => r.bucket === "all" && r.metric === "ttft_ms")!.reading, "not ranked: failed requests");
  });

  test("the other way round names A", () => {
    const back = compareRecords({ record: single(), rows: b }, { record: single(), rows: a });
    const r = back.rows.find((x) => x.bucket === "long" && x.metric === "e2e_ms")!;
    assert.equal(r.a_median, null);
    assert.equal(r.b_median, ownMedian(a, "long", "e2e_ms"));
    assert.equal(r.reading, "not ranked: failed requests (A failed all 12 requests)");
  });

  test("the text shows A's median with what it is over, 'all failed' for B, and the reading", () => {
    const text = renderComparison(c, [sideFacts(single()), sideFacts(single())], []);
    const line = text.split("\n").find((l) => /^long +ttft_ms /.test(l))!;
    assert.match(line, new RegExp(`^long +ttft_ms +${ownMedian(a, "long", "ttft_ms")} ms \\(own 4 rounds\\) +all failed +n/a +- +0 +not ranked: failed requests \\(B failed all 12 requests\\)$`), line);
    assert.match(text, /\(own N rounds\): no round pairs in that bucket and metric/);
    assert.match(text, /long: A 0\/12, B 12\/12/);
  });
});
