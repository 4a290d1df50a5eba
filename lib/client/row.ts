/**
 * One request's numbers as a row of `requests.jsonl` (no text), with the seed's snake_case names
 * and definitions (seed 002 metrics.py, request_row):
 *
 * - ttft_ms = t_first - t_send (ok rows only)
 * - e2e_ms = (t_done, else end of stream) - t_send (ok rows only)
 * - k_first = ids in the first token event, 1 when the server streamed no ids there
 *   (k_first_assumed says which: true when 1 was assumed, false when ids said, null with no event)
 * - decode_tok_s = (n_tokens - k_first) / (t_last - t_first), tpot_ms = its inverse in ms/token,
 *   both null unless ok, n_tokens - k_first > 0 and t_last > t_first
 * - itl_ms = gaps between consecutive token events (per event)
 *
 * fetch cannot time the connect phase, so `connect_ms` is null and `ttft_includes_connect` is true.
 * @module
 */
import { FAULT_KFIRST_IGNORED, FAULT_TPOT_PLUS_5PCT } from "./_fault.ts";
import type { FailureKind, RequestResult, TokenCountMethod } from "./types.ts";

/** A request row, as journaled and printed with `--json`. */
export interface RequestRow {
  id: string | null;
  bucket: string | null;
  salt: string | null;
  ok: boolean;
  error: string | null;
  error_kind: FailureKind | null;
  status: number;
  ttft_ms: number | null;
  tpot_ms: number | null;
  decode_tok_s: number | null;
  e2e_ms: number | null;
  connect_ms: number | null;
  ttft_includes_connect: boolean;
  n_tokens: number | null;
  token_count_method: TokenCountMethod | null;
  count_mismatch: string | null;
  n_ids: number | null;
  n_usage: number | null;
  finish_reason: string | null;
  n_token_events: number;
  tokens_per_event_max: number | null;
  k_first: number | null;
  /** True when the first token event carried no ids and k_first = 1 was assumed; null with no token event. */
  k_first_assumed: boolean | null;
  ended_with_done: boolean;
  send_lag_ms: number | null;
  /**
   * 1 when a stale keep-alive connection made the client send the request again (on a new connection;
   * the row is timed from the first send, so send lag is the client's and TTFT includes the failed attempt), else 0.
   */
  connection_retries: number;
  /** When the request was due (open loop), on the same clock as t_send_ns, or null. */
  t_scheduled_ns: number | null;
  t_send_ns: number;
  t_end_ns: number;
  [extra: string]: unknown;
}

function diff(a: number | null, b: number | null): number | null {
  return a !== null && b !== null ? a - b : null;
}

/** Tokens in the first token event: its streamed ids, or 1 when it carried none (seed k_first). */
export function kFirst(r: RequestResult): number {
  if (FAULT_KFIRST_IGNORED) return 1;
  return r.nTokenEvents > 0 && r.eventIds[0] > 0 ? r.eventIds[0] : 1;
}

/**
 * Builds the row of one request.
 * @param r the measured result
 * @param extra fields merged last (round, level, label, ...)
 */
export function requestRow(r: RequestResult, extra: Record<string, unknown> = {}): RequestRow {
  const ttft = diff(r.tFirstMs, r.tSendMs);
  const e2e = (r.tDoneMs ?? r.tEndMs) - r.tSendMs;
  const k = kFirst(r);
  const span = diff(r.tLastMs, r.tFirstMs);
  const after = r.nTokens !== null ? r.nTokens - k : null;
  let decode: number | null = null;
  let tpot: number | null = null;
  if (r.ok && after !== null && after > 0 && span !== null && span > 0) {
    decode = after / (span / 1000);
    tpot = span / after;
    if (FAULT_TPOT_PLUS_5PCT) {
      tpot *= 1.05;
      decode = 1000 / tpot;
    }
  }
  let perEventMax = 0;
  for (let i = 0; i < r.eventIds.length; i++) if (r.eventIds[i] > perEventMax) perEventMax = r.eventIds[i];
  return {
    id: r.id,
    bucket: r.bucket,
    salt: r.salt,
    ok: r.ok,
    error: r.error,
    error_kind: r.errorKind,
    status: r.status,
    ttft_ms: r.ok ? ttft : null,
    tpot_ms: tpot,
    decode_tok_s: decode,
    e2e_ms: r.ok ? e2e : null,
    connect_ms: null,
    ttft_includes_connect: true,
    n_tokens: r.nTokens,
    token_count_method: r.tokenCountMethod,
    count_mismatch: r.countMismatch,
    n_ids: r.nIds,
    n_usage: r.nUsage,
    finish_reason: r.finishReason,
    n_token_events: r.nTokenEvents,
    tokens_per_event_max: perEventMax > 0 ? perEventMax : null,
    k_first: r.nTokenEvents > 0 ? k : null,
    k_first_assumed: r.nTokenEvents > 0 ? !(r.eventIds[0] > 0) : null,
    ended_with_done: r.endedWithDone,
    send_lag_ms: diff(r.tSendMs, r.tScheduledMs),
    connection_retries: r.connectionRetries,
    t_scheduled_ns: r.tScheduledMs === null ? null : Math.round(r.tScheduledMs * 1e6),
    t_send_ns: Math.round(r.tSendMs * 1e6),
    t_end_ns: Math.round(r.tEndMs * 1e6),
    ...extra,
  };
}

/** Inter-token latency per event gap, in ms (n_token_events - 1 values). */
export function itlMs(r: RequestResult): number[] {
  const t = r.eventTimesMs;
  const out: number[] = new Array(Math.max(0, t.length - 1));
  for (let i = 1; i < t.length; i++) out[i - 1] = t[i] - t[i - 1];
  return out;
}

/** The per-event timeline stored with each output: ms after t_send, and ids per event. */
export function eventTimings(
  r: RequestResult,
): { t_send_ns: number; event_ms: number[]; event_token_ids: number[] } {
  const event_ms: number[] = [];
  for (let i = 0; i < r.eventTimesMs.length; i++) {
    event_ms.push(Math.round((r.eventTimesMs[i] - r.tSendMs) * 1e4) / 1e4);
  }
  return { t_send_ns: Math.round(r.tSendMs * 1e6), event_ms, event_token_ids: Array.from(r.eventIds) };
}
