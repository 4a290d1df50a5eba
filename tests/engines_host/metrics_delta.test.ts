/** The metrics delta of a cell on the real vLLM fixture, with an "after" made from it. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { metricsDelta, seriesKey } from "../../lib/engines_host/metrics_delta.ts";
import { ROOT } from "../_helpers/ik.ts";

const BEFORE = readFileSync(join(ROOT, "tests/testdata/engines/vllm/metrics.txt"), "utf8");
const M = 'engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"';

/** Replaces one sample line's value. */
function set(text: string, series: string, value: string): string {
  const i = text.indexOf(series + " ");
  assert.ok(i >= 0, `fixture has ${series}`);
  const end = text.indexOf("\n", i);
  return text.slice(0, i) + `${series} ${value}` + text.slice(end);
}

function value(text: string, series: string): number {
  const i = text.indexOf(series + " ");
  return Number(text.slice(i + series.length + 1, text.indexOf("\n", i)));
}

test("series keys sort labels", () => {
  assert.equal(seriesKey("a", {}), "a");
  assert.equal(seriesKey("a", { z: "1", b: 'q"x' }), 'a{b="q\\"x",z="1"}');
});

test("counters, histogram _sum/_count, gauges before/after on the vLLM fixture", () => {
  const gen = `vllm:generation_tokens_total{${M}}`;
  const cnt = `vllm:request_prompt_tokens_count{${M}}`;
  const sum = `vllm:request_prompt_tokens_sum{${M}}`;
  const run = `vllm:num_requests_running{${M}}`;
  let after = set(BEFORE, gen, String(value(BEFORE, gen) + 4096));
  after = set(after, cnt, String(value(BEFORE, cnt) + 8));
  after = set(after, sum, String(value(BEFORE, sum) + 1000.1));
  after = set(after, run, "0.0");
  const d = metricsDelta(BEFORE, after);
  assert.equal(d.available, true);
  assert.deepEqual(d.counters[gen], { before: value(BEFORE, gen), after: value(BEFORE, gen) + 4096, delta: 4096 });
  assert.equal(d.counters[cnt].delta, 8);
  assert.equal(d.counters[sum].delta, 1000.1, "float noise tidied");
  assert.deepEqual(d.gauges[run], { before: 3, after: 0 });
  assert.deepEqual(d.gauges[`vllm:kv_cache_usage_perc{${M}}`], { before: 0.0123, after: 0.0123 });
  assert.equal(d.counters['python_gc_objects_collected_total{generation="0"}'].delta, 0);
  // Left out: buckets and _created timestamps.
  const keys = [...Object.keys(d.counters), ...Object.keys(d.gauges)];
  assert.ok(!keys.some((k) => k.includes("_bucket")), "no buckets");
  assert.ok(!keys.some((k) => /_created\{/.test(k)), "no _created timestamps");
  assert.ok(!(`vllm:request_prompt_tokens_sum{${M}}` in d.gauges));
  assert.ok(!(gen in d.gauges) && !(run in d.counters));
  assert.deepEqual(d.notes, []);
});

test("labels in another order are the same series", () => {
  const d = metricsDelta('x_total{b="2",a="1"} 5\n', 'x_total{a="1",b="2"} 7\n');
  assert.deepEqual(d.counters['x_total{a="1",b="2"}'], { before: 5, after: 7, delta: 2 });
});

test("a counter reset, a new series and a vanished one are noted", () => {
  const gen = `vllm:generation_tokens_total{${M}}`;
  let after = set(BEFORE, gen, "10.0");
  after = after.replace(`vllm:num_preemptions_total{${M}}`, "# gone");
  after += `# TYPE vllm:new_thing_total counter\nvllm:new_thing_total{${M}} 3\n`;
  const d = metricsDelta(BEFORE, after);
  assert.equal(d.counters[gen].reset, true);
  assert.equal(d.counters[gen].delta, 10);
  assert.deepEqual(d.counters[`vllm:new_thing_total{${M}}`], { before: null, after: 3, delta: 3 });
  assert.equal(d.counters[`vllm:num_preemptions_total{${M}}`].delta, null);
  assert.equal(d.notes.length, 3);
  assert.match(d.notes[0], /counter reset .*vllm:generation_tokens_total/);
  assert.match(d.notes[1], /appeared during the cell/);
  assert.match(d.notes[2], /vanished during the cell/);
});

test("OpenMetrics-style counter family, untyped samples", () => {
  const b = "# TYPE req counter\nreq_total 1\nreq_created 1.7e9\nplain 4\n";
  const a = "# TYPE req counter\nreq_total 6\nreq_created 1.7e9\nplain 2\n";
  const d = metricsDelta(b, a);
  assert.deepEqual(Object.keys(d.counters), ["req_total"]);
  assert.equal(d.counters.req_total.delta, 5);
  assert.deepEqual(d.gauges, { plain: { before: 4, after: 2 } });
});

test("a missing scrape is noted, not a failure", () => {
  const d = metricsDelta(BEFORE, null);
  assert.equal(d.available, false);
  assert.deepEqual(d.counters, {});
  assert.match(d.notes[0], /not available \(after\)/);
  assert.match(metricsDelta(null, null).notes[0], /before and after/);
});

test("llama.cpp's n_busy_slots_per_decode, typed counter by older builds, is an average: a gauge, and its fall no reset", () => {
  const text = (v: number, total: number) =>
    `# HELP llamacpp:n_busy_slots_per_decode Average number of busy slots per llama_decode() call\n# TYPE llamacpp:n_busy_slots_per_decode counter\nllamacpp:n_busy_slots_per_decode ${v}\n# TYPE llamacpp:n_decode_total counter\nllamacpp:n_decode_total ${total}\n`;
  const d = metricsDelta(text(1.9, 100), text(1.5, 180));
  assert.deepEqual(d.gauges["llamacpp:n_busy_slots_per_decode"], { before: 1.9, after: 1.5 });
  assert.equal(d.counters["llamacpp:n_busy_slots_per_decode"], undefined);
  assert.equal(d.counters["llamacpp:n_decode_total"].delta, 80);
  assert.deepEqual(d.notes, []);
});

test("llama.cpp's n_tokens_max, typed counter, is a high-water mark: a gauge with before and after, no delta", () => {
  const text = (v: number) => `# HELP llamacpp:n_tokens_max Largest observed sequence length (prompt + generation)\n# TYPE llamacpp:n_tokens_max counter\nllamacpp:n_tokens_max ${v}\n`;
  const d = metricsDelta(text(65), text(1035));
  assert.deepEqual(d.gauges["llamacpp:n_tokens_max"], { before: 65, after: 1035 });
  assert.equal(d.counters["llamacpp:n_tokens_max"], undefined);
});
