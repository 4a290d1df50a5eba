/**
 * Prefix-cache salting: a unique tag (`[ik-r3] `, `[ik-warm-0] `) in front of the first message's
 * text, so a tagged request is not served from the prefix cache an earlier request filled (a
 * token-level cache may still match the tag's first characters, `[ik-`, a token or two).
 * It adds a few prompt tokens; records say so. A synthetic prompt with a shared prefix says where
 * the tag goes (`cache_salt_at`, a character offset in its first text): after the prefix, so the
 * prefix can still be served from the cache while the rest stays cold.
 * @module
 */
import type { ChatMessage } from "../engines/mod.ts";

/**
 * The messages with the tag prefixed to the first message that has text (a string content, or
 * the first text part of a content list); unchanged when `salt` is null. With `at` (a character
 * offset within a string content) the tag goes there instead of at the start.
 */
export function saltedMessages(messages: readonly ChatMessage[], salt: string | null, at: number | null = null): ChatMessage[] {
  const out = messages.map((m) => ({ ...m }));
  if (salt === null) return out;
  const tag = `[${salt}] `;
  for (const m of out) {
    if (typeof m.content === "string") {
      const i = at !== null && Number.isInteger(at) && at > 0 && at <= m.content.length ? at : 0;
      m.content = m.content.slice(0, i) + tag + m.content.slice(i);
      return out;
    }
    if (Array.isArray(m.content)) {
      const parts = m.content.map((p) => (p && typeof p === "object" ? { ...p } : p)) as Record<string, unknown>[];
      const i = parts.findIndex((p) => p && p.type === "text" && typeof p.text === "string");
      if (i >= 0) parts[i].text = tag + (parts[i].text as string);
      else parts.unshift({ type: "text", text: tag });
      m.content = parts;
      return out;
    }
  }
  if (out.length) out[0].content = tag.trimEnd();
  return out;
}
