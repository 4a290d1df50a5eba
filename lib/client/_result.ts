/**
 * A finished attempt's state as the {@link RequestResult} the streaming loop returns: the token
 * count resolved (ids, usage, a tokenizer, or events), every server text scrubbed of the API key and
 * every URL in an error message redacted.
 * @module
 */
import { redactUrlsInText, scrubSecret } from "../evidence/redact.ts";
import type { StreamState } from "./_stream_state.ts";
import { resolveTokenCount } from "./token_count.ts";
import type { StreamOptions } from "./stream_options.ts";
import type { Api, RequestResult } from "./types.ts";

/** Server text with the API key scrubbed (an echoing server must not leak it). */
export function scrubbed(text: string, secret: string | null): string {
  return secret !== null && text.includes(secret) ? scrubSecret(text, secret) : text;
}

function scrubbedUsage(usage: Record<string, unknown> | null, secret: string | null): Record<string, unknown> | null {
  if (usage === null || secret === null) return usage;
  const json = JSON.stringify(usage);
  if (!json.includes(secret)) return usage;
  try {
    return JSON.parse(scrubSecret(json, secret));
  } catch {
    return { completion_tokens: usage.completion_tokens };
  }
}

/**
 * When the last counted token arrived. Usage counts the EOS token an engine stops on (vLLM,
 * llama.cpp: wire-formats.md), and that token's chunk carries a finish_reason but no text, so no
 * token event. Where a stream stopped (`finish_reason` "stop"), usage counts exactly one token
 * more than there were token events, and the finish chunk came after the last token event, that
 * chunk is the last token's arrival (else TPOT divides n − 2 gaps by n − 1 tokens). Ids count the
 * EOS token in its own event; events count none; a server that packs tokens into events (usage
 * well above the events) is left as it is.
 */
function lastTokenAt(st: StreamState, count: { method: string; nTokens: number | null } | null): number | null {
  const eos = count !== null && count.method === "usage" && count.nTokens === st.log.length + 1 && st.finishReason === "stop" &&
    st.tFinish !== null && st.tLast !== null && st.tFinish > st.tLast;
  return eos ? st.tFinish : st.tLast;
}

/**
 * The result of an attempt.
 * @param t its status and times, and whether its body was read as a stream (only then is a token count resolved)
 * @param secret the API key, or null
 */
export function buildResult(
  st: StreamState,
  api: Api,
  opts: StreamOptions,
  t: { status: number; tSend: number; tHeaders: number | null; tEnd: number; streamed: boolean },
  secret: string | null,
): RequestResult {
  const text = st.text.toString(), reasoning = st.reasoning?.toString() ?? "", toolArguments = st.toolArguments?.toString() ?? "";
  const count = t.streamed
    ? resolveTokenCount({
      nIds: st.nIds,
      usage: st.usage,
      nTokenEvents: st.log.length,
      text,
      reasoning,
      toolArguments,
    }, opts.countTokens)
    : null;
  return {
    id: opts.id ?? null,
    bucket: opts.bucket ?? null,
    salt: opts.salt ?? null,
    api,
    ok: st.failKind === null,
    error: st.failMessage === null ? null : redactUrlsInText(scrubbed(st.failMessage, secret)),
    errorKind: st.failKind,
    status: t.status,
    tScheduledMs: opts.tScheduledMs ?? null,
    tSendMs: t.tSend,
    tHeadersMs: t.tHeaders,
    tFirstMs: st.tFirst,
    tFirstContentMs: st.tFirstContent,
    connectionRetries: 0,
    tLastMs: lastTokenAt(st, count),
    tDoneMs: st.tDone,
    tEndMs: t.tEnd,
    eventTimesMs: st.log.timesMs(),
    eventIds: st.log.idsPerEvent(),
    nTokenEvents: st.log.length,
    nSseEvents: st.nSseEvents,
    endedWithDone: st.sawDone,
    nTokens: count ? count.nTokens : null,
    tokenCountMethod: count ? count.method : null,
    nIds: count ? count.nIds : null,
    nUsage: count ? count.nUsage : null,
    countMismatch: count ? count.countMismatch : null,
    tokenIds: st.tokenIds.values(),
    finishReason: st.finishReason === null ? null : scrubbed(st.finishReason, secret),
    usage: scrubbedUsage(st.usage, secret),
    text: scrubbed(text, secret),
    reasoning: scrubbed(reasoning, secret),
    serverTimings: st.serverTimings,
    toolArguments: scrubbed(toolArguments, secret),
  };
}
