/**
 * Prefix-cache salting: a unique tag (`[ik-r3] `, `[ik-warm-0] `) in front of the first message's
 * text, so a tagged request can never be served from the prefix cache an earlier request filled.
 * It adds a few prompt tokens; records say so.
 * @module
 */
import type { ChatMessage } from "../engines/mod.ts";

/**
 * The messages with the tag prefixed to the first message that has text (a string content, or
 * the first text part of a content list); unchanged when `salt` is null.
 */
export function saltedMessages(messages: readonly ChatMessage[], salt: string | null): ChatMessage[] {
  const out = messages.map((m) => ({ ...m }));
  if (salt === null) return out;
  const tag = `[${salt}] `;
  for (const m of out) {
    if (typeof m.content === "string") {
      m.content = tag + m.content;
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
