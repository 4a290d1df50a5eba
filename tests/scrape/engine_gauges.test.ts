/**
 * Every real metrics fixture parses cleanly, and each engine's gauges match the fixture text as read
 * by a plain regex (sum over label sets; mean for the KV fraction).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { EngineKind } from "../../lib/engines/profiles.ts";
import { ENGINE_METRICS, GAUGE_NAMES, gaugesFromSamples, parsePrometheusText } from "../../lib/scrape/mod.ts";

const read = (rel: string) => readFileSync(fileURLToPath(new URL(rel, import.meta.url)), "utf8");

const FIXTURES: { file: string; kind: EngineKind; want: Record<string, number | null> }[] = [
  {
    file: "../testdata/engines/vllm/metrics.txt",
    kind: "vllm",
    want: { running: 3, waiting: 1, kv_cache_usage: 0.0123, preemptions_total: 0 },
  },
  {
    file: "../testdata/engines/sglang/metrics.txt",
    kind: "sglang",
    want: { running: 3, waiting: 1, kv_cache_usage: 0.01, preemptions_total: null },
  },
  {
    file: "../testdata/engines/llamacpp/metrics.txt",
    kind: "llamacpp",
    want: { running: 2, waiting: 1, kv_cache_usage: null, preemptions_total: null },
  },
  {
    file: "../testdata/engines/trtllm/metrics.txt",
    kind: "trtllm",
    want: { running: 3, waiting: 0, kv_cache_usage: 0.000375, preemptions_total: null },
  },
  {
    file: "testdata/llamacpp-real-b10587-metrics.txt",
    kind: "llamacpp",
    want: { running: 0, waiting: 0, kv_cache_usage: null, preemptions_total: null },
  },
];

/** The values of every line named exactly `name`, read with a regex, independent of the parser. */
function linesOf(text: string, name: string): number[] {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return [...text.matchAll(new RegExp(`^${esc}(?:\\{[^\\n]*\\})? (\\S+)$`, "gm"))].map((m) => Number(m[1]));
}

for (const f of FIXTURES) {
  test(`${f.file}: parses with no bad lines; gauges match the text`, () => {
    const text = read(f.file);
    const p = parsePrometheusText(text);
    assert.equal(p.badLines, 0, p.firstBad ?? "");
    assert.equal(p.truncated, false);
    const sampleLines = text.split("\n").filter((l) => l.trim() && !l.startsWith("#")).length;
    assert.equal(p.samples.length, sampleLines);
    const r = gaugesFromSamples(p.samples, f.kind);
    assert.deepEqual(r.values, f.want);
    assert.deepEqual(r.missing, GAUGE_NAMES.filter((g) => f.want[g] === null));
    for (const g of GAUGE_NAMES) {
      const src = r.sources[g];
      if (f.want[g] === null) {
        assert.equal(src, undefined);
        for (const n of ENGINE_METRICS[f.kind].names[g]) assert.deepEqual(linesOf(text, n), [], n);
        continue;
      }
      assert.ok(src, g);
      assert.equal(src.metric, ENGINE_METRICS[f.kind].names[g].find((n) => linesOf(text, n).length > 0));
      const vs = linesOf(text, src.metric);
      assert.equal(src.series, vs.length);
      const sum = vs.reduce((a, b) => a + b, 0);
      assert.equal(r.values[g], src.agg === "sum" ? sum : sum / vs.length);
    }
    // generic finds the same running/waiting through the union of names.
    const gen = gaugesFromSamples(p.samples, "generic");
    assert.equal(gen.values.running, f.want.running);
    assert.equal(gen.values.waiting, f.want.waiting);
  });
}

test("several label sets: counts are summed, the KV fraction is averaged; NaN lines are left out", () => {
  const text = [
    'vllm:num_requests_running{engine="0",model_name="a"} 3',
    'vllm:num_requests_running{engine="1",model_name="a"} 4',
    'vllm:num_requests_running{engine="2",model_name="a"} NaN',
    'vllm:num_requests_waiting{engine="0",model_name="a"} 1',
    'vllm:num_requests_waiting{engine="1",model_name="a"} 2',
    'vllm:gpu_cache_usage_perc{engine="0",model_name="a"} 0.2',
    'vllm:gpu_cache_usage_perc{engine="1",model_name="a"} 0.6',
    'vllm:num_preemptions_total{engine="0",model_name="a"} 5',
    'vllm:num_preemptions_total{engine="1",model_name="a"} 6',
  ].join("\n");
  const r = gaugesFromSamples(parsePrometheusText(text).samples, "vllm");
  assert.deepEqual(r.values, { running: 7, waiting: 3, kv_cache_usage: 0.4, preemptions_total: 11 });
  assert.deepEqual(r.sources.running, { metric: "vllm:num_requests_running", series: 2, agg: "sum" });
  // The older vLLM name is used when the current one is absent.
  assert.deepEqual(r.sources.kv_cache_usage, { metric: "vllm:gpu_cache_usage_perc", series: 2, agg: "mean" });
});

test("sglang retractions (histogram _sum) count as preemptions; llama.cpp's older kv ratio is read", () => {
  const s = gaugesFromSamples(
    parsePrometheusText(
      'sglang:num_retractions_sum{model_name="m"} 4\nsglang:num_retractions_count{model_name="m"} 9',
    )
      .samples,
    "sglang",
  );
  assert.equal(s.values.preemptions_total, 4);
  // Where SGLang has the retraction counter, it is read (it counts as retractions happen).
  const c = gaugesFromSamples(
    parsePrometheusText('sglang:num_retractions_sum{model_name="m"} 4\nsglang:num_retracted_requests_total{model_name="m"} 6').samples,
    "sglang",
  );
  assert.equal(c.values.preemptions_total, 6);
  assert.equal(c.sources.preemptions_total?.metric, "sglang:num_retracted_requests_total");
  const l = gaugesFromSamples(parsePrometheusText("llamacpp:kv_cache_usage_ratio 0.25").samples, "llamacpp");
  assert.equal(l.values.kv_cache_usage, 0.25);
});

test("copies of one engine's value are one series: vLLM's per-API-server pid series, SGLang's per-TP-rank series", () => {
  // vLLM with --api-server-count 8, before PR #28792: the gauge once per API server, the real value in one.
  const pids = ["273", "274", "275", "276", "277", "278", "279", "280"];
  const v = gaugesFromSamples(parsePrometheusText([
    ...pids.map((p, i) => `vllm:kv_cache_usage_perc{engine="0",model_name="Q",pid="${p}"} ${i === 0 ? 0.6530455880475035 : 0}`),
    ...pids.map((p, i) => `vllm:kv_cache_usage_perc{engine="1",model_name="Q",pid="${p}"} ${i === 3 ? 0.25 : 0}`),
    'vllm:num_requests_running{engine="0",model_name="Q"} 5',
    'vllm:num_requests_running{engine="1",model_name="Q"} 6',
  ].join("\n")).samples, "vllm");
  assert.equal(v.values.kv_cache_usage, (0.6530455880475035 + 0.25) / 2, "the mean over the two DP engines, each its real value");
  assert.deepEqual(v.sources.kv_cache_usage, { metric: "vllm:kv_cache_usage_perc", series: 2, agg: "mean" });
  assert.equal(v.values.running, 11);
  // SGLang with --enable-metrics-for-all-schedulers: 4 TP ranks of each of 2 DP ranks report the same batch.
  const lines: string[] = [];
  for (const dp of [0, 1]) {
    for (const tp of [0, 1, 2, 3]) {
      lines.push(`sglang:num_running_reqs{model_name="m",dp_rank="${dp}",tp_rank="${tp}"} ${dp === 0 ? 32 : 30}`);
      lines.push(`sglang:num_queue_reqs{model_name="m",dp_rank="${dp}",tp_rank="${tp}"} ${dp === 0 ? 10 : 4}`);
      lines.push(`sglang:token_usage{model_name="m",dp_rank="${dp}",tp_rank="${tp}"} ${dp === 0 ? 0.5 : 0.3}`);
    }
  }
  const g = gaugesFromSamples(parsePrometheusText(lines.join("\n")).samples, "sglang");
  assert.deepEqual([g.values.running, g.values.waiting, g.values.kv_cache_usage], [62, 14, 0.4]);
  // The generic reader collapses by the name's engine too.
  assert.equal(gaugesFromSamples(parsePrometheusText(lines.join("\n")).samples, "generic").values.running, 62);
  // trtllm's pid series are separate processes' counts: still summed.
  const t = gaugesFromSamples(parsePrometheusText('trtllm_num_requests_running{pid="1"} 3\ntrtllm_num_requests_running{pid="2"} 4').samples, "trtllm");
  assert.equal(t.values.running, 7);
});

test("SGLang's first metric names (sglang:num_requests_running / _waiting) are read", () => {
  const g = gaugesFromSamples(parsePrometheusText('sglang:num_requests_running{name="m"} 7\nsglang:num_requests_waiting{name="m"} 3\nsglang:token_usage{name="m"} 0.4').samples, "sglang");
  assert.deepEqual([g.values.running, g.values.waiting, g.values.kv_cache_usage], [7, 3, 0.4]);
});

test("trtllm's path is /prometheus/metrics; every other engine's is /metrics", () => {
  assert.equal(ENGINE_METRICS.trtllm.path, "/prometheus/metrics");
  for (const k of ["vllm", "sglang", "llamacpp", "generic"] as const) {
    assert.equal(ENGINE_METRICS[k].path, "/metrics");
  }
});
