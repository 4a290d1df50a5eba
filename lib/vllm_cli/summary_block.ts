/**
 * The block `vllm bench serve` prints at the end of a run (vLLM's `vllm/benchmarks/serve.py`,
 * `benchmark()`): a 50-wide title, then `{:<40} {:<10}` lines (labels padded to 40, values
 * left-aligned in 10, two decimals for rates and times), a centred header per percentile metric
 * with its Mean, Median and P{p} lines, and a closing rule. Pure: the result object in, text out.
 * @module
 */
import type { Obj } from "../export/record_source.ts";
import { fixed } from "../summarize/py_format.ts";
import { percentileWord } from "../export/vllm_stats.ts";
import { pyFloat } from "./result_file.ts";

/** Python's `"{s:{c}^{n}}".format(...)`: centred, the odd padding character on the right. */
export function centre(s: string, n: number, c: string): string {
  const pad = Math.max(0, n - s.length);
  const l = Math.floor(pad / 2);
  return c.repeat(l) + s + c.repeat(pad - l);
}

/** One `{:<40} {:<10}` line; a number with `nd` decimals when given. */
export function line(label: string, value: number | string, nd?: number): string {
  const v = typeof value === "number" && nd !== undefined ? fixed(value, nd) : String(value);
  return `${label.padEnd(40)} ${v.padEnd(10)}`;
}

/** Each metric's name and header, as vLLM prints them. */
const HEADERS: Readonly<Record<string, [string, string]>> = {
  ttft: ["TTFT", "Time to First Token"],
  tpot: ["TPOT", "Time per Output Token (excl. 1st token)"],
  itl: ["ITL", "Inter-token Latency"],
  e2el: ["E2EL", "End-to-end Latency"],
  client_queue_time: ["Client Queue Time", "Client-side Queueing"],
  e2el_including_client_queue: ["E2EL incl. Client Queue", "Queue-inclusive End-to-end Latency"],
};

const n = (v: unknown) => (typeof v === "number" ? v : 0);

/**
 * The traffic lines vLLM prints before its run (`benchmark()`, without ramp-up): the rate and the
 * burstiness as Python prints a float (`inf`, `10.0`), the cap or `None`.
 */
export function trafficLines(requestRate: number, burstiness: number, maxConcurrency: number | null): string {
  return [
    `Traffic request rate: ${pyFloat(requestRate)}`,
    `Burstiness factor: ${pyFloat(burstiness)} (${burstiness === 1 ? "Poisson process" : "Gamma distribution"})`,
    `Maximum request concurrency: ${maxConcurrency ?? "None"}`,
  ].join("\n") + "\n";
}

/**
 * What vLLM prints before the block when requests failed (its `calculate_metrics`): a heading and
 * the first 10 failed requests' errors; "" when none failed.
 * @param errors each failed request's error, in send order
 */
export function failureLines(errors: readonly string[]): string {
  if (!errors.length) return "";
  return ["Failed requests during benchmark run detected (capping to 10):", ...errors.slice(0, 10).map((e, i) => `Error ${i}: ${e}`)].join("\n") + "\n";
}

/**
 * The summary block for a result object.
 * @param r the result (as {@link vllmResultFile} makes it; the percentile blocks present are printed)
 * @param percentiles the --metric-percentiles, in order
 */
export function summaryBlock(r: Obj, percentiles: readonly number[]): string {
  const out = [centre(" Serving Benchmark Result ", 50, "=")];
  out.push(line("Successful requests:", n(r.completed)), line("Failed requests:", n(r.failed)));
  if (r.max_concurrency !== null && r.max_concurrency !== undefined) out.push(line("Maximum request concurrency:", n(r.max_concurrency)));
  if (typeof r.request_rate === "number") out.push(line("Request rate configured (RPS):", r.request_rate, 2));
  out.push(
    line("Benchmark duration (s):", n(r.duration), 2),
    line("Total input tokens:", n(r.total_input_tokens)),
    line("Total generated tokens:", n(r.total_output_tokens)),
    line("Request throughput (req/s):", n(r.request_throughput), 2),
  );
  if (typeof r.request_goodput === "number") out.push(line("Request goodput (req/s):", r.request_goodput, 2));
  out.push(
    line("Output token throughput (tok/s):", n(r.output_throughput), 2),
    line("Peak output token throughput (tok/s):", n(r.max_output_tokens_per_s), 2),
    line("Peak concurrent requests:", n(r.max_concurrent_requests), 2),
    line("Total token throughput (tok/s):", n(r.total_token_throughput), 2),
  );
  for (const [m, [name, header]] of Object.entries(HEADERS)) {
    if (typeof r[`mean_${m}_ms`] !== "number") continue;
    out.push(centre(header, 50, "-"), line(`Mean ${name} (ms):`, n(r[`mean_${m}_ms`]), 2), line(`Median ${name} (ms):`, n(r[`median_${m}_ms`]), 2));
    for (const p of percentiles) out.push(line(`P${percentileWord(p)} ${name} (ms):`, n(r[`p${percentileWord(p)}_${m}_ms`]), 2));
  }
  out.push("=".repeat(50));
  return out.join("\n") + "\n";
}
