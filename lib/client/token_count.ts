/**
 * How many tokens a response had, and how we know. Order (CONTRACTS.md): streamed ids, else
 * `usage.completion_tokens`, else a tokenizer re-count of the text, else token-bearing SSE events.
 * It never depends on the engine profile: whatever the stream carried decides.
 * @module
 */
import type { TokenCountMethod } from "./types.ts";

/** Re-counts tokens of generated text (a tokenizer hook; the method is then "tokenizer"). */
export type CountTokensFn = (text: string) => number;

/** What the stream told us about its tokens. */
export interface TokenEvidence {
  /** Streamed token ids in total (0 when none were streamed). */
  nIds: number;
  /** The last usage block, or null. */
  usage: Record<string, unknown> | null;
  /** Token-bearing SSE events. */
  nTokenEvents: number;
  /** Generated text (for a tokenizer re-count). */
  text: string;
  /** Generated reasoning text. */
  reasoning: string;
  /** Streamed tool-call arguments. */
  toolArguments: string;
}

/** The resolved count. */
export interface TokenCount {
  /** The count. */
  nTokens: number;
  /** Where it came from. */
  method: TokenCountMethod;
  /** Streamed ids in total, or null when none were streamed. */
  nIds: number | null;
  /** `usage.completion_tokens`, or null. */
  nUsage: number | null;
  /** "ids N != usage M" when both exist and differ, else null. */
  countMismatch: string | null;
}

/** `usage.completion_tokens` when it is a non-negative integer, else null. */
export function usageCompletionTokens(usage: Record<string, unknown> | null): number | null {
  const v = usage?.completion_tokens;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/**
 * Resolves the token count of one response.
 * @param ev what the stream carried
 * @param countTokens optional tokenizer hook, used only when there are neither ids nor usage
 */
export function resolveTokenCount(ev: TokenEvidence, countTokens?: CountTokensFn): TokenCount {
  const nIds = ev.nIds > 0 ? ev.nIds : null;
  const nUsage = usageCompletionTokens(ev.usage);
  const countMismatch = nIds !== null && nUsage !== null && nIds !== nUsage
    ? `ids ${nIds} != usage ${nUsage}`
    : null;
  if (nIds !== null) return { nTokens: nIds, method: "ids", nIds, nUsage, countMismatch };
  if (nUsage !== null) return { nTokens: nUsage, method: "usage", nIds, nUsage, countMismatch };
  if (countTokens && (ev.text || ev.reasoning || ev.toolArguments)) {
    let n = 0;
    for (const part of [ev.reasoning, ev.text, ev.toolArguments]) if (part) n += countTokens(part);
    return { nTokens: n, method: "tokenizer", nIds, nUsage, countMismatch };
  }
  return { nTokens: ev.nTokenEvents, method: "sse_events", nIds, nUsage, countMismatch };
}
