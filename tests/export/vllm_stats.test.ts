/**
 * vLLM's statistics, ik's implementation (lib/export/vllm_stats.ts), checked against numpy: every
 * fixture result file (written by scripts/gen_vllm_fixtures.py with numpy.percentile / median /
 * std) is recomputed from its own detailed arrays — TTFT, TPOT = (latency − ttft) / (out − 1),
 * pooled ITL, e2e — and must give the file's mean, median, std and percentiles, and its peak
 * figures. Pure, < 1 s.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { linearPercentile, medianSorted, peakStats, vllmBlock, vllmDate, vllmLevelResult } from "../../lib/export/mod.ts";
import { parseJsonValues } from "../../lib/summarize/mod.ts";
import { close, VLLM_DATA } from "../summarize/_unit.ts";

async function resultFiles(): Promise<[string, Record<string, any>][]> {
  const out: [string, Record<string, any>][] = [];
  for (const unit of ["unit", "failed", "r725"]) {
    const dir = join(VLLM_DATA, unit, "results");
    for (const f of (await readdir(dir)).filter((x) => x.endsWith(".json")).sort()) {
      const values = parseJsonValues(await readFile(join(dir, f), "utf8"));
      out.push([`${unit}/${f}`, values[values.length - 1] as Record<string, any>]);
    }
  }
  return out;
}

describe("vLLM statistics against numpy", () => {
  test("linear interpolation and numpy's median on small cases", () => {
    assert.equal(linearPercentile([4, 1, 3, 2], 50), 2.5);
    assert.equal(linearPercentile([1, 2, 3, 4], 99), 3.9699999999999998); // numpy.percentile([1, 2, 3, 4], 99) exactly
    assert.equal(linearPercentile([1, 2, 3, 4], 0), 1);
    assert.equal(linearPercentile([1, 2, 3, 4], 100), 4);
    assert.equal(linearPercentile([7], 99), 7);
    assert.equal(linearPercentile([], 50), null);
    assert.equal(medianSorted(Float64Array.from([1, 2, 3, 4])), 2.5);
    // an empty list counts as [0], as vLLM's `values or 0`
    assert.deepEqual(vllmBlock([], "ttft", [99]), { mean_ttft_ms: 0, median_ttft_ms: 0, std_ttft_ms: 0, p99_ttft_ms: 0 });
    assert.deepEqual(Object.keys(vllmBlock([1], "itl", [50, 99.9])), ["mean_itl_ms", "median_itl_ms", "std_itl_ms", "p50_itl_ms", "p99.9_itl_ms"]);
  });

  test("every fixture file's blocks recomputed from its arrays", async () => {
    const files = await resultFiles();
    assert.ok(files.length >= 10);
    let checked = 0;
    for (const [name, r] of files) {
      const ok = (r.errors as string[]).map((e, i) => (e ? -1 : i)).filter((i) => i >= 0);
      const ps = Object.keys(r).filter((k) => /^p[\d.]+_ttft_ms$/.test(k)).map((k) => Number(k.slice(1, -8)));
      assert.ok(ps.includes(99), name);
      const blocks: [string, number[]][] = [
        ["ttft", ok.map((i) => r.ttfts[i])],
        ["itl", ok.flatMap((i) => r.itls[i])],
      ];
      // latency: in the file (current layout), else ttft + the frame gaps (the generator's legacy requests)
      const lat = (i: number) => (r.latencies ? r.latencies[i] : r.ttfts[i] + r.itls[i].reduce((a: number, b: number) => a + b, 0));
      blocks.push(["e2el", ok.map(lat)]);
      blocks.push(["tpot", ok.filter((i) => r.output_lens[i] > 1).map((i) => (lat(i) - r.ttfts[i]) / (r.output_lens[i] - 1))]);
      for (const [metric, values] of blocks) {
        const got = vllmBlock(values, metric, ps);
        for (const [k, v] of Object.entries(got)) {
          // TPOT and e2e of legacy files go through a re-summed latency: a few ulps apart
          close(v, r[k], `${name} ${k}`, r.latencies || metric === "ttft" || metric === "itl" ? 0 : 1e-9);
          checked++;
        }
      }
      if (r.start_times) {
        const reqs = ok.map((i) => ({ start: r.start_times[i], ttft: r.ttfts[i], latency: r.latencies[i], itl: r.itls[i] }));
        assert.deepEqual(peakStats(reqs), { maxTokS: r.max_output_tokens_per_s, maxConcurrent: r.max_concurrent_requests }, name);
      }
    }
    assert.ok(checked > 100, String(checked));
  });
});

describe("numpy's own reference numbers (numpy_reference.json)", () => {
  test("mean, std, median and percentiles bit for bit, through the pairwise-summation path", async () => {
    const refs = JSON.parse(await readFile(join(VLLM_DATA, "numpy_reference.json"), "utf8")) as
      { values: number[]; mean: number; std: number; median: number; percentiles: Record<string, number> }[];
    assert.ok(refs.some((r) => r.values.length > 128));
    for (const r of refs) {
      const n = r.values.length;
      const b = vllmBlock(r.values, "x", Object.keys(r.percentiles).map(Number));
      assert.equal(b.mean_x_ms, r.mean * 1000, `mean n=${n}`);
      assert.equal(b.std_x_ms, r.std * 1000, `std n=${n}`);
      assert.equal(b.median_x_ms, r.median * 1000, `median n=${n}`);
      for (const [p, v] of Object.entries(r.percentiles)) assert.equal(linearPercentile(r.values, Number(p)), v, `p${p} n=${n}`);
    }
  });
});

describe("vLLM's date and a failed request's prompt length", () => {
  test("date is the local time vLLM's datetime.now() gives: this host's offset by default, any offset asked for", () => {
    const iso = "2026-12-07T08:04:28.512Z";
    assert.equal(vllmDate(iso, 0), "20261207-080428");
    assert.equal(vllmDate(iso, 540), "20261207-170428", "Asia/Tokyo");
    assert.equal(vllmDate(iso, -300), "20261207-030428", "America/New_York in winter");
    assert.equal(vllmDate("2026-12-31T20:00:00Z", 330), "20270101-013000", "India, past midnight into the next year");
    const d = new Date(iso);
    const p = (n: number) => String(n).padStart(2, "0");
    assert.equal(vllmDate(iso), `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`);
    assert.equal(vllmDate("not a time"), "");
    // In another zone, where the runtime takes TZ while it runs (Bun does): that zone's local time.
    const saved = process.env.TZ;
    try {
      process.env.TZ = "Asia/Tokyo";
      if (new Date(0).getTimezoneOffset() === -540) assert.equal(vllmDate(iso), "20261207-170428");
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test("a failed request's input_lens is its prompt's length, not 0 (vLLM sets prompt_len before sending)", () => {
    const meta = { evidenceId: "e", label: "l", model: "m", tokenizer: "m", createdUtc: "2026-12-07T08:00:00Z" } as unknown as Parameters<typeof vllmLevelResult>[0];
    const row = (ok: boolean, extra: Record<string, unknown>) => ({ ok, n_tokens: ok ? 4 : null, ttft_ms: ok ? 10 : null, e2e_ms: ok ? 40 : null, t_send_ns: 1e9, send_lag_ms: 0, error: ok ? null : "HTTP 500", ...extra });
    const lv = {
      entry: { summary: { window_s: 1 } },
      rows: [row(true, { prompt_tokens: 32, target_prompt_tokens: 32 }), row(false, { prompt_tokens: null, target_prompt_tokens: 32 }), row(false, { prompt_tokens: null })],
      outputs: [null, null, null],
    } as unknown as Parameters<typeof vllmLevelResult>[1];
    const r = vllmLevelResult(meta, lv) as Record<string, unknown>;
    assert.deepEqual(r.input_lens, [32, 32, 0]);
    assert.deepEqual(r.output_lens, [4, 0, 0]);
    assert.equal(r.total_input_tokens, 32, "the total counts completed requests only, as vLLM's");
  });
});
