/**
 * How many tokens a response had, and how we know. Order (CONTRACTS.md): streamed ids, else
 * `usage.completion_tokens` when it is plausible, else a tokenizer re-count of the text, else
 * token-bearing SSE events. It never depends on the engine profile: whatever the stream carried
 * decides. A usage count that cannot be right (1e300, or fewer tokens than token events) is not
 * used, and count_mismatch says why.
 * @module
 */
import { FAULT_EVENTS_AS_IDS, FAULT_NO_COUNT_MISMATCH, FAULT_USAGE_TRUSTED } from "./_fault.ts";
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
  /** `usage.completion_tokens` when it is a non-negative safe integer (trusted or not), else null. */
  nUsage: number | null;
  /**
   * What disagreed, or null: "ids N != usage M" when both exist and differ, and why a usage count
   * was not trusted ("usage 0 < 5 token events: not trusted"), joined with "; ".
   */
  countMismatch: string | null;
}

/** `usage.completion_tokens` when it is a non-negative safe integer, else null. */
export function usageCompletionTokens(usage: Record<string, unknown> | null): number | null {
  const v = usage?.completion_tokens;
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

/**
 * Why `usage.completion_tokens` cannot be the count, or null when it can (or is absent). Every
 * token-bearing event carries at least one token, so a usage count below the number of token
 * events (0 included) is wrong; so is anything that is not a non-negative safe integer (1e300).
 * @param usage the last usage block, or null
 * @param nTokenEvents token-bearing events seen
 */
export function untrustedUsage(usage: Record<string, unknown> | null, nTokenEvents: number): string | null {
  const v = usage?.completion_tokens;
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    const shown = typeof v === "number" ? String(v) : JSON.stringify(v) ?? typeof v;
    return `usage ${shown.length > 40 ? shown.slice(0, 39) + "…" : shown} is not a non-negative safe integer: not trusted`;
  }
  return v < nTokenEvents ? `usage ${v} < ${nTokenEvents} token events: not trusted` : null;
}

/**
 * Resolves the token count of one response: streamed ids, else a trusted usage count, else the
 * tokenizer hook, else token-bearing events.
 * @param ev what the stream carried
 * @param countTokens optional tokenizer hook, used only when there are neither ids nor trusted usage
 */
export function resolveTokenCount(ev: TokenEvidence, countTokens?: CountTokensFn): TokenCount {
  const nIds = ev.nIds > 0 ? ev.nIds : null;
  const nUsage = usageCompletionTokens(ev.usage);
  const distrust = FAULT_USAGE_TRUSTED ? null : untrustedUsage(ev.usage, ev.nTokenEvents);
  const notes: string[] = [];
  if (nIds !== null && nUsage !== null && nIds !== nUsage) notes.push(`ids ${nIds} != usage ${nUsage}`);
  if (distrust !== null) notes.push(distrust);
  const countMismatch = notes.length > 0 && !FAULT_NO_COUNT_MISMATCH ? notes.join("; ") : null;
  const out = (nTokens: number, method: TokenCountMethod): TokenCount => ({ nTokens, method, nIds, nUsage, countMismatch });
  if (FAULT_EVENTS_AS_IDS) return out(ev.nTokenEvents, "ids");
  if (nIds !== null) return out(nIds, "ids");
  if (nUsage !== null && distrust === null) return out(nUsage, "usage");
  if (countTokens && (ev.text || ev.reasoning || ev.toolArguments)) {
    let n = 0;
    for (const part of [ev.reasoning, ev.text, ev.toolArguments]) if (part) n += countTokens(part);
    // Every token-bearing event carried at least one token: a re-count below the events (the model
    // sampled a tokenization the tokenizer would merge) is raised to them, and said.
    if (n < ev.nTokenEvents) {
      const why = `tokenizer ${n} < ${ev.nTokenEvents} token events: counted as ${ev.nTokenEvents}`;
      return { nTokens: ev.nTokenEvents, method: "tokenizer", nIds, nUsage, countMismatch: FAULT_NO_COUNT_MISMATCH ? null : [countMismatch, why].filter(Boolean).join("; ") };
    }
    return out(n, "tokenizer");
  }
  return out(ev.nTokenEvents, "sse_events");
}
