/**
 * Per-request rows from a result file's detailed arrays (`--save-detailed`). Current files carry
 * `latencies` and `start_times`; legacy ones (before vLLM PR #54136) only `ttfts`, `itls`,
 * `output_lens` and `errors`. Both give rows, so a legacy file is read as fully as a new one and
 * raises no FLAG a new one would not. Failed requests stay in the arrays (vLLM writes 0 for their
 * output length and TTFT and the error text).
 * @module
 */
import { pickArray, type VllmResult } from "./vllm_result.ts";

/** One request as the client saw it. */
export interface ClientRow {
  /** TTFT, seconds (0 for a failed request). */
  ttft: number;
  /** End-to-end latency, seconds, or null in a legacy file. */
  latency: number | null;
  /** Output tokens (0 for a failed request). */
  out: number;
  /** Prompt tokens, or null when the file has no input_lens. */
  inp: number | null;
  /** SSE frames after the first (the length of its `itls` entry), or null without itls. */
  frames: number | null;
  ok: boolean;
}

/** What the file's arrays allow. */
export type RowsLayout = "detailed" | "legacy" | "none";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * Builds the rows.
 * @returns the rows (null when the file has no per-request arrays) and which layout they came from
 */
export function requestRows(res: VllmResult): { rows: ClientRow[] | null; layout: RowsLayout } {
  const ttfts = pickArray(res, "ttfts"), outs = pickArray(res, "output_lens");
  if (!ttfts || !outs) return { rows: null, layout: "none" };
  const lats = pickArray(res, "latencies") ?? pickArray(res, "e2els");
  const inps = pickArray(res, "input_lens"), itls = pickArray(res, "itls"), errs = pickArray(res, "errors");
  const layout: RowsLayout = lats ? "detailed" : "legacy";
  const n = Math.min(ttfts.length, outs.length, lats ? lats.length : Infinity);
  const rows: ClientRow[] = [];
  for (let i = 0; i < n; i++) {
    const err = errs && i < errs.length ? errs[i] : "";
    const failed = typeof err === "string" ? err !== "" : err != null;
    const ttft = num(ttfts[i]), out = num(outs[i]) ?? 0, lat = lats ? num(lats[i]) : null;
    // A request is ok without an error and with a positive latency. A legacy file has no latency:
    // there it is ok without an error and with a first token (vLLM's request functions fail a non-200
    // answer with `error = response.reason or ""`, so an empty error can be a failure; its TTFT stays
    // 0.0), or, with no errors array, when it produced anything.
    const ok = !failed && ttft !== null && (lats ? lat !== null && lat > 0 : errs ? ttft > 0 : out > 0 || ttft > 0);
    const itl = itls && i < itls.length ? itls[i] : null;
    rows.push({
      ttft: ttft ?? 0, latency: lat, out, inp: inps && i < inps.length ? num(inps[i]) : null,
      frames: Array.isArray(itl) ? itl.length : itls ? 0 : null, ok,
    });
  }
  return { rows, layout };
}
