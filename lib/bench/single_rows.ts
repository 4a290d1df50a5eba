/**
 * What single mode adds to a request row and keeps per output: the prompt tokens the server
 * reported, the output document (text, ids, timeline) and, where the engine gives its own clock
 * (llama.cpp's `timings`), the server's view of the same request.
 * @module
 */
import { eventTimings, type RequestResult, requestRow, type RequestRow } from "../client/mod.ts";
import type { Prompt } from "../prompts/mod.ts";

/** `usage.prompt_tokens` when the server sent an integer, else null. */
export function promptTokens(r: RequestResult): number | null {
  const v = r.usage?.prompt_tokens;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/**
 * The server's own timings for the request (llama.cpp: `timings.prompt_ms`, `predicted_ms`,
 * `predicted_n`), when the result carries them, else null.
 */
export function serverTimings(r: RequestResult): { prompt_ms: number | null; predicted_ms: number | null; predicted_n: number | null } | null {
  const t = r.serverTimings;
  if (!t || typeof t !== "object") return null;
  const n = (k: string) => (typeof t[k] === "number" && Number.isFinite(t[k] as number) ? t[k] as number : null);
  return { prompt_ms: n("prompt_ms"), predicted_ms: n("predicted_ms"), predicted_n: n("predicted_n") };
}

/** The row of one single-mode request. */
export function singleRow(r: RequestResult, extra: { round: number; label: string; max_tokens: number }): RequestRow {
  const st = serverTimings(r);
  return requestRow(r, {
    ...extra,
    prompt_tokens: promptTokens(r),
    ttfo_ms: r.ok && r.tFirstContentMs !== null ? r.tFirstContentMs - r.tSendMs : null,
    server_timings: st,
  });
}

/** The output document of one request (seed 000 _output_doc). */
export function outputDoc(r: RequestResult, p: Prompt, maxTokens: number, extra: Record<string, unknown>): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    id: r.id,
    bucket: r.bucket,
    text: r.text,
    token_ids: Array.from(r.tokenIds),
    finish_reason: r.finishReason,
    usage: r.usage,
    n_tokens: r.nTokens,
    token_count_method: r.tokenCountMethod,
    max_tokens: maxTokens,
    error: r.error,
    timings: eventTimings(r),
    prompt_id: p.id,
    ...extra,
  };
  if (r.reasoning) doc.reasoning = r.reasoning;
  if (r.toolArguments) doc.tool_arguments = r.toolArguments;
  return doc;
}
