/** vLLM's summary-block formatting and default file name, pure (no server; < 1 s). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { centre, line, summaryBlock } from "../../lib/vllm_cli/summary_block.ts";
import { defaultResultName, pyFloat } from "../../lib/vllm_cli/result_file.ts";

describe("vLLM summary block", () => {
  test("Python's '{:^50}' centring puts the odd pad on the right; '{:<40} {:<10}' lines", () => {
    // '{s:{c}^{n}}'.format(s='Time to First Token', n=50, c='-') in Python:
    assert.equal(centre("Time to First Token", 50, "-"), "---------------Time to First Token----------------");
    assert.equal(centre(" Serving Benchmark Result ", 50, "="), "============ Serving Benchmark Result ============");
    assert.equal(line("Successful requests:", 12), "Successful requests:                     12        ");
    assert.equal(line("Benchmark duration (s):", 1.005, 2), "Benchmark duration (s):                  1.00      ", "Python rounds the binary value of 1.005 down");
  });
  test("lines only for what the result holds, percentiles named as vLLM's p_word", () => {
    const r = { completed: 3, failed: 1, max_concurrency: null, request_rate: "inf", duration: 2, total_input_tokens: 30, total_output_tokens: 9, request_throughput: 1.5,
      request_goodput: null, output_throughput: 4.5, max_output_tokens_per_s: 5, max_concurrent_requests: 3, total_token_throughput: 19.5,
      mean_e2el_ms: 10, median_e2el_ms: 9, "p99.9_e2el_ms": 12, p50_e2el_ms: 9 };
    const text = summaryBlock(r, [50, 99.9]);
    assert.ok(!/Maximum request concurrency|Request rate configured|Request goodput|TTFT/.test(text));
    assert.ok(text.includes("P99.9 E2EL (ms):                         12.00     \n"));
    assert.ok(text.includes("\n----------------End-to-end Latency----------------\n"));
    assert.ok(text.endsWith("=".repeat(50) + "\n"));
  });
  test("default file name as vLLM's compute_result_filename", () => {
    const o = { label: null, backend: "openai-chat", modelId: "Qwen/Qwen2.5-0.5B", date: "20261202-010203" };
    assert.equal(defaultResultName({ ...o, requestRate: 4, maxConcurrency: null }), "openai-chat-4.0qps-Qwen2.5-0.5B-20261202-010203.json");
    assert.equal(defaultResultName({ ...o, label: "a", requestRate: Infinity, maxConcurrency: 8 }), "a-infqps-concurrency8-Qwen2.5-0.5B-20261202-010203.json");
    assert.equal(pyFloat(0.5), "0.5");
  });
});
