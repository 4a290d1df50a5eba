/**
 * ShareGPT_V3 (a JSON array of `{"id", "conversations": [{"from", "value"}]}`) as conversations
 * for `bench serve --mode conversations`: each entry's human turns, in order (the recorded answers
 * are dropped: the server's own answers replace them), and a leading `from: "system"` turn as the
 * system message of every request (as a conversation JSONL's leading system message is). Entries
 * with fewer than two human turns are not multi-turn, and entries with a system turn after the
 * first human one cannot be sent as written: both are dropped (counted). A seeded sample of `max`
 * entries is kept (0 = all), in the seed's shuffled order, streamed so a 600 MB file is never held
 * whole.
 * @module
 */
import { createHash } from "node:crypto";
import { dataError } from "../cli/errors.ts";
import type { Conversation, ConversationSet } from "../prompts/conversations.ts";
import { JsonArrayReader } from "./_json_array.ts";
import { SeededPool } from "./_pool.ts";
import { openSource } from "./_source.ts";

const HUMAN = new Set(["human", "user"]);

/** Reads a ShareGPT file's multi-turn conversations. */
export async function readShareGptConversations(path: string, max: number, seed: number): Promise<ConversationSet> {
  const src = await openSource(path, "--conversations");
  const pool = new SeededPool<Conversation>(max, seed);
  let rows = 0, single = 0, lateSystem = 0;
  const reader = new JsonArrayReader(src.name, (value, line, index) => {
    rows++;
    const e = value as { id?: unknown; conversations?: unknown };
    if (!e || typeof e !== "object" || Array.isArray(e)) throw dataError(`${src.name}:${line}`, "each entry must be an object with 'conversations'");
    const conv = Array.isArray(e.conversations) ? e.conversations : [];
    const turns: string[] = [];
    let system: string | null = null, late = false;
    for (const t of conv) {
      const from = (t as { from?: unknown })?.from, v = (t as { value?: unknown })?.value;
      if (typeof from !== "string" || typeof v !== "string") throw dataError(`${src.name}:${line}`, "each turn must be {\"from\": string, \"value\": string}");
      const who = from.trim().toLowerCase();
      if (HUMAN.has(who) && v.trim()) turns.push(v);
      else if (who === "system" && v.trim()) {
        if (turns.length || system !== null) late = true;
        else system = v;
      }
    }
    if (late) {
      lateSystem++;
      return;
    }
    if (turns.length < 2) {
      single++;
      return;
    }
    const id = typeof e.id === "string" || typeof e.id === "number" ? `sharegpt-${e.id}` : `sharegpt-${index}`;
    pool.offer(index, { id, turns, maxTokens: null, turnTokens: null, ...(system !== null ? { system } : {}) });
  });
  for await (const text of src.chunks) reader.push(text);
  reader.end();
  const info = src.info();
  const conversations = pool.sorted().map((x) => x.item);
  const seen = new Set<string>();
  for (const c of conversations) {
    let id = c.id, k = 1;
    while (seen.has(id)) id = `${c.id}-${k++}`;
    seen.add(id);
    c.id = id;
  }
  if (!conversations.length) throw dataError(src.name, `no multi-turn conversation (two or more human turns) among ${rows} entries`, "give a ShareGPT file with multi-turn conversations, or a conversation JSONL");
  const sha256 = createHash("sha256").update(JSON.stringify({ file: info.sha256, max, seed, ids: conversations.map((c) => c.id) })).digest("hex");
  return {
    name: `sharegpt:${src.name}`, sha256, conversations,
    source: { kind: "sharegpt", file: info.file, file_sha256: info.sha256, entries: rows, dropped_fewer_than_two_human_turns: single, dropped_system_after_first_turn: lateSystem, kept: conversations.length, max_conversations: max, seed },
  };
}
