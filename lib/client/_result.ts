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
    tLastMs: st.tLast,
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
