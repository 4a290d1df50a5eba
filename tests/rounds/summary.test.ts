/** lib/rounds/summary: medians over rounds, best engine, paired ratios, failures (synthetic truths). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CI_METHOD_T_CLUSTER, SeededRng } from "../../lib/stats/mod.ts";
import { higherIsBetter, summarize, type SummaryCell } from "../../lib/rounds/mod.ts";

/** Cells for engines with true decode speeds and e2e latencies, a shared drift per round and ±noise. */
function synthetic(speeds: Record<string, number>, rounds: number, noise = 0.01, seed = 1): SummaryCell[] {
  const rng = new SeededRng(seed);
  const cells: SummaryCell[] = [];
  for (let k = 1; k <= rounds; k++) {
    const drift = 1 + 0.03 * (rng.next() - 0.5);
    for (const [label, speed] of Object.entries(speeds)) {
      const jitter = () => 1 + noise * 2 * (rng.next() - 0.5);
      const decode = speed * drift * jitter();
      cells.push({
        round: k, label, status: "ok",
        metrics: { all: { decode_tok_s: { value: decode, unit: "tok/s" }, e2e_ms: { value: 10000 / decode, unit: "ms" }, failed_requests: { value: 0, unit: "requests", n: 8 } } },
      });
    }
  }
  return cells;
}

const row = (s: ReturnType<typeof summarize>, engine: string, metric: string, bucket = "all") => {
  const r = s.rows.find((x) => x.engine === engine && x.metric === metric && x.bucket === bucket);
  assert.ok(r, `no row ${engine} ${metric} ${bucket}`);
  return r;
};

describe("summarize", () => {
  test("engine B 15% slower: ratio ≈ 1.15 on latency, 1/1.15 on speed, CIs exclude 1 with 6 rounds", () => {
    const s = summarize(synthetic({ a: 100, b: 100 / 1.15 }, 6), ["a", "b"]);
    const e2e = row(s, "b", "e2e_ms");
    assert.equal(e2e.best, "a");
    assert.ok(Math.abs((e2e.ratio_to_best as number) - 1.15) < 0.02, `${e2e.ratio_to_best}`);
    assert.ok((e2e.ratio_ci95[0] as number) > 1, `${e2e.ratio_ci95}`);
    assert.equal(e2e.n_pairs, 6);
    const dec = row(s, "b", "decode_tok_s");
    assert.equal(dec.best, "a");
    assert.ok(Math.abs((dec.ratio_to_best as number) - 1 / 1.15) < 0.015);
    assert.ok((dec.ratio_ci95[1] as number) < 1);
    const best = row(s, "a", "decode_tok_s");
    assert.deepEqual([best.ratio_to_best, best.ratio_ci95, best.n_pairs], [1, [null, null], 6]);
    assert.equal(best.higher_is_better, true);
    assert.equal(row(s, "a", "e2e_ms").higher_is_better, false);
  });

  test("equal engines: the ratio CI includes 1, so no engine is named best (no clear difference)", () => {
    const s = summarize(synthetic({ a: 100, b: 100 }, 6, 0.02, 7), ["a", "b"]);
    for (const m of ["decode_tok_s", "e2e_ms"]) {
      const other = s.rows.find((r) => r.metric === m && r.engine !== r.reference) as NonNullable<ReturnType<typeof row>>;
      assert.ok((other.ratio_ci95[0] as number) < 1 && (other.ratio_ci95[1] as number) > 1, `${m}: ${other.ratio_ci95}`);
      assert.equal(other.best, null);
      assert.equal(other.verdict, "no clear difference");
      const ref = row(s, other.reference as string, m);
      assert.equal(ref.best, null);
      assert.equal(ref.verdict, `no clear difference vs ${other.engine}`);
    }
  });

  test("issue 18: a ratio CI of 0.30-4.71 marks no best; one clear and one unclear engine mark no best either; 2 pairs are too few", () => {
    const cells: SummaryCell[] = [];
    const add = (label: string, xs: number[]) => xs.forEach((v, i) => cells.push({ round: i + 1, label, status: "ok", metrics: { all: { tpot_ms: { value: v, unit: "ms" } } } }));
    add("a", [10, 10, 10, 10]);
    add("noisy", [3, 40, 12, 11]);
    add("slow", [20, 20.5, 19.5, 20]);
    const s = summarize(cells, ["a", "noisy", "slow"]);
    const n = row(s, "noisy", "tpot_ms");
    assert.equal(n.reference, "a");
    assert.ok((n.ratio_ci95[0] as number) < 1 && (n.ratio_ci95[1] as number) > 1, `${n.ratio_ci95}`);
    assert.equal(n.verdict, "no clear difference");
    assert.equal(row(s, "slow", "tpot_ms").verdict, "worse");
    for (const l of ["a", "noisy", "slow"]) assert.equal(row(s, l, "tpot_ms").best, null, l);
    assert.equal(row(s, "a", "tpot_ms").verdict, "no clear difference vs noisy");
    // Without the noisy engine, a is clearly best.
    const clear = summarize(cells.filter((c) => c.label !== "noisy"), ["a", "slow"]);
    assert.equal(row(clear, "a", "tpot_ms").best, "a");
    assert.equal(row(clear, "a", "tpot_ms").verdict, "best");
    // Two rounds: a t interval with one degree of freedom reads nothing.
    const two = summarize(cells.filter((c) => c.label !== "noisy" && c.round <= 2), ["a", "slow"]);
    assert.equal(row(two, "slow", "tpot_ms").verdict, "too few rounds");
    assert.equal(row(two, "a", "tpot_ms").best, null);
    assert.match(s.definitions.best, /excludes 1/);
  });

  test("medians are nearest rank (an observed value), the ratio too; its CI is centred on that ratio", () => {
    const cells: SummaryCell[] = [];
    const add = (label: string, xs: number[]) => xs.forEach((v, i) => cells.push({ round: i + 1, label, status: "ok", metrics: { all: { e2e_ms: { value: v } } } }));
    add("a", [10, 20, 30, 40]);
    add("b", [15, 25, 35, 100]);
    const s = summarize(cells, ["a", "b"]);
    assert.equal(row(s, "a", "e2e_ms").median, 20, "nearest rank of 4 values is the 2nd, not the mean of the middle two");
    assert.equal(row(s, "b", "e2e_ms").median, 25);
    const b = row(s, "b", "e2e_ms");
    assert.equal(b.ratio_to_best, 25 / 20);
    const [lo, hi] = b.ratio_ci95 as [number, number];
    assert.ok(Math.abs(Math.sqrt(lo * hi) - 1.25) < 1e-9, `${b.ratio_ci95} centred on 1.25 (log scale)`);
  });

  test("a [HARD GATE] cell: its engine is shown but never ranked, and gets no ratio", () => {
    const cells = synthetic({ a: 100, gated: 150 }, 4);
    for (const c of cells) if (c.label === "gated" && c.round === 2) Object.assign(c, { status: "hard_gate", detail: "[HARD GATE] max_num_seqs: expected 128, resolved 256" });
    cells.push({ round: 5, label: "gated", status: "serve_failed", metrics: { all: { decode_tok_s: { value: 1e9 } } } });
    const s = summarize(cells, ["a", "gated"]);
    const g = row(s, "gated", "decode_tok_s");
    assert.equal(g.n, 4, "hard_gate cells are summarized; a failed cell is not");
    assert.equal(g.reference, "a");
    assert.equal(g.ratio_to_best, null);
    assert.equal(g.verdict, "never ranked: [HARD GATE]");
    assert.match(g.excluded_from_best as string, /not comparable: hard_gate in round 2: \[HARD GATE\] max_num_seqs/);
    assert.equal(row(s, "a", "decode_tok_s").verdict, "only engine ranked: nothing to compare");
    assert.equal(row(s, "a", "decode_tok_s").best, null);
  });

  test("load mode: an N* at the top of the grid is a lower bound (≥), and values at different N* say so", () => {
    const cells: SummaryCell[] = [1, 2, 3].flatMap((k) => [
      { round: k, label: "big", status: "ok", metrics: { all: { n_star: { value: 4, lower_bound: true }, goodput_rps_at_n_star: { value: 40 + k } } } },
      { round: k, label: "small", status: "ok", metrics: { all: { n_star: { value: k === 3 ? 2 : 1 }, goodput_rps_at_n_star: { value: 9 + k } } } },
    ]);
    const s = summarize(cells, ["big", "small"], { mode: "load" });
    assert.equal(row(s, "big", "n_star").lower_bound, true);
    assert.equal(row(s, "small", "n_star").lower_bound, undefined);
    const g = row(s, "small", "goodput_rps_at_n_star");
    assert.match(g.n_star_note as string, /at different N\*: small 1, big ≥ 4/);
    assert.equal(row(s, "big", "goodput_rps_at_n_star").n_star_note, undefined);
    // A lower-bound round above the median leaves the median exact.
    const mixed = summarize([4, 1, 2].map((v, i) => ({ round: i + 1, label: "x", status: "ok", metrics: { all: { n_star: { value: v, lower_bound: v === 4 } } } })), ["x"], { mode: "load" });
    assert.equal(row(mixed, "x", "n_star").median, 2);
    assert.equal(row(mixed, "x", "n_star").lower_bound, undefined);
    assert.match(s.definitions.lower_bound, /top of the load grid/);
  });

  test("median over rounds with the t-scaled CI around it, on the log scale (never below 0); fewer than 3 rounds give no CI", () => {
    const cells: SummaryCell[] = [10, 12, 11, 30].map((v, i) => ({ round: i + 1, label: "a", status: "ok", metrics: { all: { ttft_ms: { value: v, unit: "ms" } } } }));
    const s = summarize(cells, ["a"]);
    const r = row(s, "a", "ttft_ms");
    assert.equal(r.median, 11, "nearest rank (lib/stats' one definition): the lower middle of 10, 11, 12, 30");
    assert.equal(r.n, 4);
    const [lo, hi] = r.ci95 as [number, number];
    assert.ok(Math.abs(Math.sqrt(lo * hi) - 11) < 1e-9, "centred on the median on the log scale");
    assert.ok(hi - lo > 2, "t(0.975, 3) = 3.18 scales the bootstrap SE");
    assert.deepEqual(r.by_round, { 1: 10, 2: 12, 3: 11, 4: 30 });
    assert.deepEqual(row(summarize(cells.slice(0, 1), ["a"]), "a", "ttft_ms").ci95, [null, null]);
    assert.deepEqual(row(summarize(cells.slice(0, 2), ["a"]), "a", "ttft_ms").ci95, [null, null], "2 rounds: no interval");
    // The case: a spread that a symmetric interval would take below 0 stays positive.
    const wild: SummaryCell[] = [1, 2, 30].map((v, i) => ({ round: i + 1, label: "a", status: "ok", metrics: { all: { ttft_ms: { value: v, unit: "ms" } } } }));
    const w = row(summarize(wild, ["a"]), "a", "ttft_ms").ci95 as [number, number];
    assert.ok(w[0] > 0 && w[1] > w[0], `${w}`);
    assert.ok(s.definitions.ci95.includes(CI_METHOD_T_CLUSTER));
    assert.match(s.definitions.ratio_to_best, /t-scaled bootstrap on the log scale/);
    assert.match(s.definitions.median, /\(observed\)/);
    assert.match(summarize(cells, ["a"], { mode: "load" }).definitions.median, /capacity record/);
  });

  test("an engine with failed requests in a bucket is never best there and gets no ratio", () => {
    const cells = synthetic({ a: 100, b: 50, c: 90 }, 4);
    // b is fastest on latency by construction below, but fails one request in round 2.
    for (const c of cells) if (c.label === "b") c.metrics!.all.decode_tok_s.value *= 4;
    cells.find((c) => c.label === "b" && c.round === 2)!.metrics!.all.failed_requests.value = 1;
    cells.push({ round: 5, label: "c", status: "serve_failed", metrics: { all: { decode_tok_s: { value: 1e9 } } } });
    const s = summarize(cells, ["a", "b", "c"]);
    const b = row(s, "b", "decode_tok_s");
    assert.equal(b.best, "a");
    assert.equal(b.ratio_to_best, null);
    assert.equal(b.failed_requests, 1);
    assert.match(b.excluded_from_best as string, /1 failed request\(s\) over 4 round\(s\)/);
    assert.equal(row(s, "c", "decode_tok_s").n, 4, "the failed cell is not summarized");
    const fr = row(s, "b", "failed_requests");
    assert.deepEqual([fr.best, fr.ratio_to_best, fr.higher_is_better, fr.total], [null, null, null, 1]);
    assert.deepEqual(s.failures, [{ engine: "b", bucket: "all", failed_requests: 1, requests: 32, rounds: 4 }]);
  });

  test("ratios pair only the rounds both engines completed; ties go to the first label", () => {
    const cells: SummaryCell[] = [];
    const vals: Record<string, number[]> = { a: [100, 100, 100, 100], b: [100, 100, 100, 100] };
    for (const [label, xs] of Object.entries(vals)) {
      xs.forEach((v, i) => cells.push({ round: i + 1, label, status: label === "b" && i === 0 ? "exited_early" : "ok", metrics: { all: { tpot_ms: { value: v } } } }));
    }
    const s = summarize(cells, ["b", "a"]);
    assert.equal(row(s, "a", "tpot_ms").reference, "b");
    assert.equal(row(s, "a", "tpot_ms").best, null, "identical engines: no clear difference");
    assert.equal(row(s, "a", "tpot_ms").n_pairs, 3);
    assert.equal(row(s, "b", "tpot_ms").n_pairs, 3);
    assert.equal(row(s, "a", "tpot_ms").unit, null);
  });

  test("pairs are matched by round number, not by position", () => {
    const cells: SummaryCell[] = [];
    const add = (label: string, round: number, v: number) => cells.push({ round, label, status: "ok", metrics: { all: { e2e_ms: { value: v } } } });
    [[1, 10], [2, 20], [3, 30], [4, 40]].forEach(([k, v]) => add("best", k, v));
    [[2, 22], [3, 33], [4, 44]].forEach(([k, v]) => add("slow", k, v));
    const r = row(summarize(cells, ["best", "slow"]), "slow", "e2e_ms");
    assert.equal(r.best, "best");
    assert.equal(r.n_pairs, 3);
    assert.ok(Math.abs((r.ratio_to_best as number) - 1.1) < 1e-9, `${r.ratio_to_best}`);
  });

  test("rows sorted by bucket then metric; unknown metrics are not ranked", () => {
    const cells: SummaryCell[] = [1, 2].flatMap((k) => ["a", "b"].map((label) => ({
      round: k, label, status: "ok",
      metrics: { short: { zeta: { value: label === "a" ? 1 : 2 } }, long: { ttft_ms: { value: label === "a" ? 5 : 4 } } },
    })));
    const s = summarize(cells, ["a", "b"]);
    assert.deepEqual(s.rows.map((r) => `${r.bucket}/${r.metric}/${r.engine}/${r.reference}`), ["long/ttft_ms/a/b", "long/ttft_ms/b/b", "short/zeta/a/null", "short/zeta/b/null"]);
    assert.equal(higherIsBetter("zeta"), null);
  });
});

describe("higherIsBetter", () => {
  test("the seed's direction rules", () => {
    const cases: [string, boolean | null][] = [
      ["decode_tok_s", true], ["ttft_ms", false], ["ttft_ms_p95_at_n_star", false], ["n_star", true], ["rate_star_rps", true],
      ["goodput_rps_at_n_star", true], ["usd_per_mtok", false], ["failed_requests", false], ["duration_s", false],
      ["e2e_ms_p99", false], ["output_tokens_per_s", true], ["queue_depth", null],
    ];
    for (const [m, want] of cases) assert.equal(higherIsBetter(m), want, m);
  });
});
