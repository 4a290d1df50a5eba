/**
 * lib/compare: per-round medians, the paired ratio and its CI against numbers computed here by a
 * separate route, round pairing, failure handling, the request_set refusal naming what differs,
 * and the incomplete-record refusal. Pure, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { assertComparable, compareRecords, requestSetDifference, roundMedians, roundOrderNote } from "../../lib/compare/mod.ts";
import { SeededRng } from "../../lib/stats/mod.ts";

type Row = Record<string, unknown>;

/** Rows: per round and bucket 5 requests; B's latencies are A's × factor; a shared drift per round. */
function rows(factor: number, rounds: number, seed: number, drop: number[] = []): Row[] {
  const rng = new SeededRng(seed);
  const out: Row[] = [];
  for (let r = 0; r < rounds; r++) {
    if (drop.includes(r)) continue;
    const drift = 1 + 0.05 * Math.sin(r);
    for (const bucket of ["short", "long"]) {
      for (let i = 0; i < 5; i++) {
        const ttft = (bucket === "short" ? 40 : 90) * drift * (1 + 0.02 * (rng.next() - 0.5)) * factor;
        const tpot = 10 * drift * (1 + 0.01 * (rng.next() - 0.5)) * factor;
        out.push({ round: r, bucket, ok: true, ttft_ms: ttft, tpot_ms: tpot, decode_tok_s: 1000 / tpot, e2e_ms: ttft + 31 * tpot });
      }
    }
  }
  return out;
}

/** The median (nearest rank, the seed's definition), written out again so the test does not lean on lib/stats. */
function med(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.ceil(s.length / 2) - 1];
}

/** Independent route: group by round, median per round, median over rounds, ratio. */
function expectedRatio(a: Row[], b: Row[], bucket: string, metric: string): number {
  const perRound = (rs: Row[]) => {
    const m = new Map<number, number[]>();
    for (const r of rs) {
      if (!r.ok || (bucket !== "all" && r.bucket !== bucket)) continue;
      const k = r.round as number;
      m.set(k, [...(m.get(k) ?? []), r[metric] as number]);
    }
    return new Map([...m].map(([k, v]) => [k, med(v)]));
  };
  const pa = perRound(a), pb = perRound(b);
  const common = [...pa.keys()].filter((k) => pb.has(k));
  return med(common.map((k) => pb.get(k)!)) / med(common.map((k) => pa.get(k)!));
}

const single = (extra: Record<string, unknown> = {}) => ({
  kind: "serve_benchmark", complete: true,
  identity: { workload: { mode: "single", request_set: { sha256: "a".repeat(64), n: 10 }, prompt_set: { sha256: "p".repeat(64) } } },
  request: { args: { max_tokens: null, api: "chat", buckets: null } },
  data: { buckets: { short: {}, long: {}, all: {} } },
  ...extra,
});

describe("compareRecords", () => {
  const a = rows(1, 5, 1), b = rows(1.15, 5, 2);
  const c = compareRecords({ record: single(), rows: a }, { record: single(), rows: b });

  test("ratio of medians equals the independent computation for every bucket and metric", () => {
    assert.equal(c.rows.length, 3 * 4);
    assert.deepEqual([...new Set(c.rows.map((r) => r.bucket))], ["short", "long", "all"]);
    for (const r of c.rows) {
      const want = expectedRatio(a, b, r.bucket, r.metric);
      assert.ok(Math.abs((r.ratio as number) - want) < 1e-12, `${r.bucket} ${r.metric}: ${r.ratio} vs ${want}`);
      assert.equal(r.n_pairs, 5);
    }
  });

  test("the CI holds the ratio, excludes 1 for a 15% difference, and reads in the metric's direction", () => {
    const ttft = c.rows.find((r) => r.bucket === "all" && r.metric === "ttft_ms")!;
    assert.ok(Math.abs((ttft.ratio as number) - 1.15) < 0.02);
    assert.ok((ttft.ratio_ci95[0] as number) > 1 && (ttft.ratio_ci95[0] as number) <= (ttft.ratio as number) && (ttft.ratio as number) <= (ttft.ratio_ci95[1] as number));
    assert.equal(ttft.reading, "B worse");
    const dec = c.rows.find((r) => r.bucket === "all" && r.metric === "decode_tok_s")!;
    assert.ok((dec.ratio_ci95[1] as number) < 1);
    assert.equal(dec.reading, "B worse");
    const same = compareRecords({ record: single(), rows: a }, { record: single(), rows: a });
    assert.ok(same.rows.every((r) => r.ratio === 1 && r.reading === "no clear difference"), JSON.stringify(same.rows.map((r) => [r.metric, r.ratio_ci95])));
  });

  test("deterministic: the same records and seed give the same intervals; another seed may not", () => {
    const again = compareRecords({ record: single(), rows: a }, { record: single(), rows: b });
    assert.deepEqual(again.rows, c.rows);
    const other = compareRecords({ record: single(), rows: a }, { record: single(), rows: b }, { seed: 7 });
    assert.ok(other.rows.some((r, i) => r.ratio_ci95[0] !== c.rows[i].ratio_ci95[0]));
    assert.deepEqual(other.rows.map((r) => r.ratio), c.rows.map((r) => r.ratio));
  });

  test("two paired rounds give no reading, even a 15 % difference ('too few rounds'), and the text says why", () => {
    const two = compareRecords({ record: single(), rows: rows(1, 2, 1) }, { record: single(), rows: rows(1.15, 2, 2) });
    assert.ok(two.rows.length > 0);
    for (const r of two.rows) assert.equal(r.reading, "too few rounds", `${r.bucket} ${r.metric}`);
    const three = compareRecords({ record: single(), rows: rows(1, 3, 1) }, { record: single(), rows: rows(1.15, 3, 2) });
    assert.ok(three.rows.some((r) => r.reading !== "too few rounds"), "3 pairs may read");
  });

  test("pairs by round index: a round B lacks is left out of both sides", () => {
    const bShort = rows(1.15, 5, 2, [1, 3]);
    const p = compareRecords({ record: single(), rows: a }, { record: single(), rows: bShort });
    assert.deepEqual(p.rounds, { a: [0, 1, 2, 3, 4], b: [0, 2, 4], paired: [0, 2, 4] });
    const r = p.rows.find((x) => x.bucket === "short" && x.metric === "tpot_ms")!;
    assert.equal(r.n_pairs, 3);
    assert.deepEqual(Object.keys(r.by_round), ["0", "2", "4"]);
    assert.ok(Math.abs((r.ratio as number) - expectedRatio(a, bShort, "short", "tpot_ms")) < 1e-12);
  });

  test("failed rows are counted and kept out of the medians", () => {
    const bad = [...b, { round: 0, bucket: "short", ok: false, ttft_ms: 1e6, tpot_ms: 1e6, e2e_ms: 1e6, decode_tok_s: 1e-6 }];
    const f = compareRecords({ record: single(), rows: a }, { record: single(), rows: bad });
    assert.deepEqual(f.failures, [
      { bucket: "short", a_failed: 0, a_requests: 25, b_failed: 1, b_requests: 26 },
      { bucket: "all", a_failed: 0, a_requests: 50, b_failed: 1, b_requests: 51 },
    ]);
    assert.deepEqual(f.rows.map((r) => r.ratio), c.rows.map((r) => r.ratio));
  });

  test("a bucket with failed requests on either side is not ranked (seed 001: a fast error is not a fast answer); the others are", () => {
    const bad = [...b, { round: 0, bucket: "short", ok: false, ttft_ms: 1e6, tpot_ms: 1e6, e2e_ms: 1e6, decode_tok_s: 1e-6 }];
    for (const [ra, rb] of [[a, bad], [bad.map((r) => ({ ...r })), a]] as const) {
      const f = compareRecords({ record: single(), rows: ra }, { record: single(), rows: rb });
      for (const r of f.rows) {
        if (r.bucket === "long") assert.match(r.reading, /^B (better|worse)$/, `long ${r.metric}`);
        else assert.equal(r.reading, "not ranked: failed requests", `${r.bucket} ${r.metric}`);
        assert.ok(r.ratio !== null, "the ratio is kept for information");
      }
    }
  });

  test("tokens counted another way: TPOT and decode tok/s not ranked, TTFT and e2e still; other output lengths: e2e not ranked", () => {
    const withTokens = (rs: Row[], n: number, assumed: boolean) => rs.map((r) => ({ ...r, n_tokens: n, k_first_assumed: assumed, token_count_method: assumed ? "usage" : "ids" }));
    const counted = compareRecords({ record: single(), rows: withTokens(a, 32, false) }, { record: single(), rows: withTokens(b, 32, true) });
    for (const r of counted.rows) {
      if (r.metric === "tpot_ms" || r.metric === "decode_tok_s") assert.equal(r.reading, "not ranked: tokens counted differently", `${r.bucket} ${r.metric}`);
      else assert.match(r.reading, /^B (better|worse)$/, `${r.bucket} ${r.metric}`);
    }
    assert.ok(counted.cautions.some((l) => /^short: TPOT and decode tok\/s not ranked: B assumed its first token event held one token/.test(l)), counted.cautions.join(" | "));
    const same = compareRecords({ record: single(), rows: withTokens(a, 32, true) }, { record: single(), rows: withTokens(b, 31, true) });
    assert.ok(same.rows.every((r) => /^B (better|worse)$/.test(r.reading)), "both assumed, lengths within 5 %: ranked");
    assert.deepEqual(same.cautions, []);
    const shorter = compareRecords({ record: single(), rows: withTokens(a, 32, false) }, { record: single(), rows: withTokens(b, 3, false) });
    for (const r of shorter.rows) {
      if (r.metric === "e2e_ms") assert.equal(r.reading, "not ranked: output lengths differ", r.bucket);
      else assert.match(r.reading, /^B (better|worse)$/, `${r.bucket} ${r.metric}`);
    }
    assert.ok(shorter.cautions.some((l) => /^all: e2e not ranked: median output length A 32, B 3 tokens/.test(l)), shorter.cautions.join(" | "));
  });

  test("one round: a ratio but no interval and no reading", () => {
    const one = compareRecords({ record: single(), rows: rows(1, 1, 1) }, { record: single(), rows: rows(1.2, 1, 2) });
    assert.ok(one.rows.every((r) => r.n_pairs === 1 && r.ratio !== null && r.ratio_ci95[0] === null && r.reading === "too few rounds"));
  });
});

describe("roundMedians", () => {
  test("the record's bucket order first, then new buckets, all last; rows without a round skipped", () => {
    const m = roundMedians([{ round: 0, bucket: "z", ok: true, ttft_ms: 1 }, { round: 0, bucket: "b", ok: true, ttft_ms: 3 }, { bucket: "b", ok: true, ttft_ms: 99 }], ["b"]);
    assert.deepEqual(m.buckets, ["b", "z", "all"]);
    assert.equal(m.values.get("all")!.get("ttft_ms")!.get(0), 1, "median of [1, 3]: nearest rank, the lower one (not the mean 2)");
  });
});

describe("refusals", () => {
  test("request_set: null when equal; else names the flag that differs", () => {
    assert.equal(requestSetDifference(single(), single()), null);
    const other = single({ identity: { workload: { mode: "single", request_set: { sha256: "b".repeat(64), n: 10 }, prompt_set: { sha256: "p".repeat(64) } } }, request: { args: { max_tokens: 16, api: "chat", buckets: null } } });
    const d = requestSetDifference(single(), other)!;
    assert.match(d, /--max-tokens null vs 16/);
    assert.doesNotMatch(d, /--api/);
    assert.match(requestSetDifference(single(), { kind: "serve_benchmark" })!, /B carries no identity\.workload\.request_set/);
  });

  test("assertComparable: exit 65 for request_set, incomplete (unless allowed), and load or capacity records", () => {
    const code = (f: () => void) => {
      try {
        f();
      } catch (e) {
        assert.ok(e instanceof IkError, String(e));
        return [e.code, e.oneLine()] as const;
      }
      return [0, ""] as const;
    };
    const other = single({ identity: { workload: { mode: "single", request_set: { sha256: "b".repeat(64), n: 10 } } } });
    const [c1, m1] = code(() => assertComparable(single(), other, ["A1", "B1"], false));
    assert.equal(c1, 65);
    // The same ids and settings (request_set equal), another prompt file: refused, naming both sets.
    const otherPrompts = single({ identity: { workload: { mode: "single", request_set: { sha256: "a".repeat(64), n: 10 }, prompt_set: { name: "long", sha256: "q".repeat(64) } } } });
    const [cp, mp] = code(() => assertComparable(single(), otherPrompts, ["A1", "B2"], false));
    assert.equal(cp, 65);
    assert.match(mp, /A1 and B2 did not ask the same requests: the prompt sets differ \(A sha256 pppppppppppp, B long sha256 qqqqqqqqqqqq\)/);
    assert.match(m1, /^ik: compare: A1 and B1 did not ask the same requests: request_set differs .*prompt set/);
    const [c2, m2] = code(() => assertComparable(single(), single({ complete: false }), ["A1", "B1"], false));
    assert.equal(c2, 65);
    assert.match(m2, /B1 is incomplete.*--allow-incomplete/);
    assert.equal(code(() => assertComparable(single(), single({ complete: false }), ["A1", "B1"], true))[0], 0);
    const [c3, m3] = code(() => assertComparable({ kind: "capacity", complete: true }, single(), ["C", "B1"], false));
    assert.equal(c3, 65);
    assert.match(m3, /C is a capacity record/);
    assert.equal(m3.split("\n").length, 1);
  });
});

describe("roundOrderNote", () => {
  const withRounds = (times: [number, number, number][]) => single({ data: { buckets: {}, rounds: times.map(([index, t_start, t_end]) => ({ index, t_start, t_end })) } });
  test("all of one side's paired rounds before the other's: a note; interleaved: none", () => {
    const a = withRounds([[0, 0, 1], [1, 2, 3], [2, 4, 5]]);
    const later = withRounds([[0, 10, 11], [1, 12, 13], [2, 14, 15]]);
    assert.match(roundOrderNote(a, later, [0, 1, 2])!, /not interleaved: all of A's ran before the other's/);
    assert.match(roundOrderNote(later, a, [0, 1, 2])!, /all of B's ran before/);
    const interleaved = withRounds([[0, 1, 1.5], [1, 3, 3.5], [2, 5, 5.5]]);
    assert.equal(roundOrderNote(a, interleaved, [0, 1, 2]), null);
    // Only the paired rounds count; records without times say nothing.
    assert.equal(roundOrderNote(a, withRounds([[0, 0.5, 0.8], [5, 90, 91]]), [0]), null);
    assert.equal(roundOrderNote(single(), later, [0, 1, 2]), null);
  });
});
