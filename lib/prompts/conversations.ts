/**
 * Conversations for `bench serve --mode conversations`: each is the user turns of one chat, sent
 * one after another with the model's *actual* previous answers in between (so the history, and
 * the prefix a server can cache, is what this server said). From a JSONL file (`{"id", "turns":
 * ["...", ...], "max_tokens"?, "system"?}`, or `{"id", "messages": [...]}` whose user messages are
 * the turns and whose system message opens every request; recorded assistant messages are dropped,
 * the server's own answers replace them) or synthesised
 * (`synth:N:T:IN:OUT`: N conversations of T turns, IN new words per user turn, OUT max_tokens).
 * @module
 */
import { createHash } from "node:crypto";
import { dataError, usageError } from "../cli/errors.ts";
import { SYNTH_VOCAB } from "./exact_length.ts";
import { SeededRng } from "../stats/mod.ts";

/** One conversation: its user turns, in order. */
export interface Conversation {
  id: string;
  turns: string[];
  /** max_tokens of every answer, or null for the run's default. */
  maxTokens: number | null;
  /** New input tokens per turn as made (synthetic: words), or null. */
  turnTokens: number | null;
  /** The system message every turn's request starts with (a file's `system`, or its messages' system message), or absent. */
  system?: string | null;
}

/** A loaded conversation set and what identifies it. */
export interface ConversationSet {
  name: string;
  sha256: string;
  conversations: Conversation[];
  /** How it was made (a file, or the synth spec). */
  source: Record<string, unknown>;
}

function textOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string") return (v as { content: string }).content;
  return null;
}

/**
 * Parses a conversation JSONL text; every problem names `name:line` (exit 65).
 * @param name the file's name, for errors
 */
export function parseConversationsText(text: string, name: string): ConversationSet {
  const conversations: Conversation[] = [];
  const ids = new Set<string>();
  for (const [i, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    const where = `${name}:${i + 1}`;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line);
    } catch (e) {
      throw dataError(where, `not valid JSON: ${(e as Error).message}`, "one conversation per line: {\"id\": \"c1\", \"turns\": [\"first question\", \"follow-up\"]}");
    }
    if (o === null || typeof o !== "object" || Array.isArray(o)) throw dataError(where, "each line must be a JSON object with 'turns' or 'messages'");
    let turns: string[];
    let system: string | null = null;
    if (o.system !== undefined && o.system !== null) {
      if (typeof o.system !== "string") throw dataError(where, "'system' must be a string (the system message of every turn)");
      system = o.system;
    }
    if (Array.isArray(o.turns)) {
      turns = o.turns.map(textOf).filter((t): t is string => t !== null);
      if (turns.length !== o.turns.length) throw dataError(where, "'turns' must be a list of strings (or {content} objects)");
    } else if (Array.isArray(o.messages)) {
      turns = o.messages.filter((m) => m && typeof m === "object" && ((m as { role?: unknown }).role === "user" || (m as { from?: unknown }).from === "human")).map((m) => textOf(m) ?? textOf({ content: (m as { value?: unknown }).value })).filter((t): t is string => t !== null);
      // A system message (OpenAI's role "system", ShareGPT's from "system") is kept: it opens every turn's request.
      const sys = o.messages.find((m) => m && typeof m === "object" && ((m as { role?: unknown }).role === "system" || (m as { from?: unknown }).from === "system"));
      if (sys && system === null) system = textOf(sys) ?? textOf({ content: (sys as { value?: unknown }).value });
    } else throw dataError(where, "needs 'turns' (the user turns) or 'messages' (whose user messages are the turns)");
    if (!turns.length || turns.some((t) => t.trim() === "")) throw dataError(where, "a conversation needs at least one non-empty user turn");
    const id = typeof o.id === "string" && o.id ? o.id : `conv-${conversations.length}`;
    if (ids.has(id)) throw dataError(where, `conversation id '${id}' repeats`, "give each conversation its own id");
    ids.add(id);
    const mt = o.max_tokens;
    if (mt !== undefined && mt !== null && !(typeof mt === "number" && Number.isInteger(mt) && mt >= 1)) throw dataError(where, "'max_tokens' must be a positive integer");
    conversations.push({ id, turns, maxTokens: typeof mt === "number" ? mt : null, turnTokens: null, ...(system !== null && system.trim() !== "" ? { system } : {}) });
  }
  if (!conversations.length) throw dataError(name, "no conversation in the file", "one JSON object per line with 'turns'");
  return { name, sha256: createHash("sha256").update(text).digest("hex"), conversations, source: { kind: "file", name } };
}

/** Parses `synth:N:T:IN:OUT`, or null when the value is not a synth spec. */
export function parseSynthConversations(spec: string): { n: number; turns: number; inTokens: number; outTokens: number } | null {
  if (!spec.startsWith("synth:")) return null;
  const parts = spec.slice(6).split(":").map(Number);
  if (parts.length !== 4 || !parts.every((x) => Number.isInteger(x) && x >= 1)) {
    throw usageError("--conversations", `'${spec}' is not synth:N:T:IN:OUT (whole numbers >= 1)`, "e.g. synth:8:4:128:64: 8 conversations of 4 turns, 128 new words a turn, 64 output tokens");
  }
  const [n, turns, inTokens, outTokens] = parts;
  return { n, turns, inTokens, outTokens };
}

/**
 * Synthetic conversations: seeded words (the mock's pseudo-tokens; approximate on a real model),
 * a different text for every turn of every conversation, the same for the same seed.
 */
export function synthConversations(s: { n: number; turns: number; inTokens: number; outTokens: number }, seed: number): ConversationSet {
  const conversations: Conversation[] = [];
  for (let c = 0; c < s.n; c++) {
    const turns: string[] = [];
    for (let t = 0; t < s.turns; t++) {
      const rng = new SeededRng(seed, c, t, 0xc0);
      turns.push(Array.from({ length: s.inTokens }, () => SYNTH_VOCAB[rng.int(SYNTH_VOCAB.length)]).join(" "));
    }
    conversations.push({ id: `conv-${c}`, turns, maxTokens: s.outTokens, turnTokens: s.inTokens });
  }
  const spec = `synth:${s.n}:${s.turns}:${s.inTokens}:${s.outTokens}`;
  const sha256 = createHash("sha256").update(JSON.stringify({ spec, seed, turns: conversations.map((c) => c.turns) })).digest("hex");
  return { name: spec, sha256, conversations, source: { kind: "synthetic", spec, seed, tokens: "words (pseudo-tokens, as ik mock counts): approximate on a real model" } };
}
