/**
 * Conversations for `bench serve --mode conversations`: each is the user turns of one chat, sent
 * one after another with the model's *actual* previous answers in between (so the history, and
 * the prefix a server can cache, is what this server said). From a JSONL file, plain or gzipped
 * (`{"id", "turns": ["...", ...], "max_tokens"?, "system"?}`, or `{"id", "messages": [...]}` whose
 * user messages (role `user`, or ShareGPT's `from` `human`/`user`, any case) are the turns; a
 * leading system message (or `developer`, sent as the system message) opens every request;
 * recorded assistant messages are dropped, the server's own answers replace them) or synthesised
 * (`synth:N:T:IN:OUT`: N conversations of T turns, IN new words per user turn, OUT max_tokens).
 * What cannot be sent as written (an unreadable user message, a system message after the first
 * user turn, a role ik does not know, a `turns` entry that is not a user turn) is refused (65).
 * @module
 */
import { createHash } from "node:crypto";
import { dataError, IkError, usageError } from "../cli/errors.ts";
import { SYNTH_VOCAB } from "./exact_length.ts";
import { maybeGunzip } from "./prompt_set.ts";
import { SeededRng } from "../stats/mod.ts";

/** One conversation: its user turns, in order. */
export interface Conversation {
  id: string;
  turns: string[];
  /** max_tokens of every answer, or null for the run's default. */
  maxTokens: number | null;
  /** New input tokens per turn as made (synthetic: words), or null. */
  turnTokens: number | null;
  /** The system message every turn's request starts with (a file's `system`, or its messages' leading system message), or absent. */
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

/** Roles whose messages are recorded answers: dropped, the server's own answers replace them. */
const ANSWER_ROLES = new Set(["assistant", "gpt", "chatgpt", "bard", "bing", "model"]);
const USER_ROLES = new Set(["user", "human"]);
const SYSTEM_ROLES = new Set(["system", "developer"]);

/**
 * The text of a message content: a string, or a list of text parts (`{"type": "text", "text"}`)
 * joined with newlines; null when it holds anything else (an image, a malformed part).
 */
export function contentText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (!Array.isArray(v) || !v.length) return null;
  const texts: string[] = [];
  for (const p of v) {
    if (typeof p === "string") texts.push(p);
    else if (p && typeof p === "object" && ((p as { type?: unknown }).type ?? "text") === "text" && typeof (p as { text?: unknown }).text === "string") texts.push((p as { text: string }).text);
    else return null;
  }
  return texts.join("\n");
}

/** A message's role, lower-cased (`role`, else ShareGPT's `from`), or null. */
function roleOf(m: Record<string, unknown>): string | null {
  const r = typeof m.role === "string" ? m.role : typeof m.from === "string" ? m.from : null;
  return r === null ? null : r.trim().toLowerCase();
}

/** A message's text (`content`, else ShareGPT's `value`). */
function messageText(m: Record<string, unknown>): string | null {
  return contentText(m.content !== undefined ? m.content : m.value);
}

/** The user turns and leading system message of a `messages` list (65 naming `where` and the message). */
function fromMessages(messages: unknown[], where: string): { turns: string[]; system: string | null } {
  const turns: string[] = [];
  let system: string | null = null;
  for (const [j, m] of messages.entries()) {
    const at = `message ${j + 1}`;
    if (!m || typeof m !== "object" || Array.isArray(m)) throw dataError(where, `${at} is not an object`, "each message is {\"role\", \"content\"} (or ShareGPT's {\"from\", \"value\"})");
    const o = m as Record<string, unknown>;
    const role = roleOf(o);
    if (role !== null && USER_ROLES.has(role)) {
      const t = messageText(o);
      if (t === null) throw dataError(where, `${at}: the user message's content cannot be read`, "give a string, or a list of {\"type\": \"text\", \"text\"} parts");
      if (t.trim() === "") throw dataError(where, `${at}: the user message is empty`, "drop it, or give it text");
      turns.push(t);
    } else if (role !== null && SYSTEM_ROLES.has(role)) {
      if (turns.length) throw dataError(where, `${at}: a ${role} message after the first user turn cannot be sent where it stands (ik sends a system message only at the start of every request)`, "move it to the start, or drop it");
      if (system !== null) throw dataError(where, `${at}: a second system/developer message`, "keep one system message at the start");
      const t = messageText(o);
      if (t === null) throw dataError(where, `${at}: the ${role} message's content cannot be read`, "give a string, or a list of {\"type\": \"text\", \"text\"} parts");
      system = t;
    } else if (role === null || !ANSWER_ROLES.has(role)) {
      throw dataError(where, `${at}: role '${role ?? "(none)"}' is not one ik sends`, "use user (or from human), system or developer at the start, assistant (dropped: the server answers)");
    }
  }
  return { turns, system };
}

/** The user turns of a `turns` list: strings, or `{content}` objects whose role (if any) is the user's. */
function fromTurns(list: unknown[], where: string): string[] {
  return list.map((v, k) => {
    const at = `turn ${k + 1}`;
    let t: string | null = null;
    if (typeof v === "string") t = v;
    else if (v && typeof v === "object" && !Array.isArray(v)) {
      const role = roleOf(v as Record<string, unknown>);
      if (role !== null && !USER_ROLES.has(role)) throw dataError(where, `${at} has role '${role}': 'turns' holds only the user's turns`, "drop it (the server answers), or use 'messages' for a chat with recorded answers");
      t = messageText(v as Record<string, unknown>);
    }
    if (t === null) throw dataError(where, `${at} cannot be read`, "'turns' is a list of strings (or {\"content\"} objects, a string or text parts)");
    if (t.trim() === "") throw dataError(where, `${at} is empty`, "drop it, or give it text");
    return t;
  });
}

/**
 * Parses a conversation JSONL text; every problem names `name:line` (exit 65). A leading UTF-8
 * byte order mark is dropped.
 * @param name the file's name, for errors
 */
export function parseConversationsText(text: string, name: string): ConversationSet {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
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
    if (Array.isArray(o.turns)) turns = fromTurns(o.turns, where);
    else if (Array.isArray(o.messages)) {
      const m = fromMessages(o.messages, where);
      turns = m.turns;
      if (m.system !== null) {
        if (system !== null) throw dataError(where, "both 'system' and a system message in 'messages'", "keep one of them");
        system = m.system;
      }
    } else throw dataError(where, "needs 'turns' (the user turns) or 'messages' (whose user messages are the turns)");
    if (!turns.length) throw dataError(where, "a conversation needs at least one user turn");
    let id: string;
    if (o.id === undefined || o.id === null) id = `conv-${conversations.length}`;
    else if ((typeof o.id === "string" && o.id !== "") || (typeof o.id === "number" && Number.isFinite(o.id))) id = String(o.id);
    else throw dataError(where, "'id' must be a non-empty string or a number");
    if (ids.has(id)) throw dataError(where, `conversation id '${id}' repeats`, "give each conversation its own id");
    ids.add(id);
    const mt = o.max_tokens;
    if (mt !== undefined && mt !== null && !(typeof mt === "number" && Number.isInteger(mt) && mt >= 1)) throw dataError(where, "'max_tokens' must be a positive integer");
    conversations.push({ id, turns, maxTokens: typeof mt === "number" ? mt : null, turnTokens: null, ...(system !== null && system.trim() !== "" ? { system } : {}) });
  }
  if (!conversations.length) throw dataError(name, "no conversation in the file", "one JSON object per line with 'turns'");
  const sha256 = createHash("sha256").update(text).digest("hex");
  return { name, sha256, conversations, source: { kind: "file", name, file_sha256: sha256, n_in_file: conversations.length } };
}

/**
 * Parses the bytes of a conversation JSONL file, plain or gzipped (65 when they do not inflate,
 * inflate past 1 GiB, or are not UTF-8).
 * @param name the file's name, for errors
 */
export function parseConversationsBytes(bytes: Uint8Array, name: string): ConversationSet {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(maybeGunzip(bytes));
  } catch (e) {
    if (e instanceof IkError) throw e;
    throw dataError(name, `cannot read (${(e as Error).message})`, "the file is truncated, corrupt, over 1 GiB uncompressed or not UTF-8");
  }
  return parseConversationsText(text, name);
}

/**
 * The first `max` conversations of a set (`--max-conversations`); 0, or a set no larger, keeps it
 * whole. A cut set is another workload: its sha256 covers the file's and the count kept.
 */
export function firstConversations(set: ConversationSet, max: number | undefined): ConversationSet {
  const source = { ...set.source, max_conversations: max ?? null };
  if (max === undefined || max <= 0 || set.conversations.length <= max) return { ...set, source };
  const fileSha = String(set.source.file_sha256 ?? set.sha256);
  const sha256 = createHash("sha256").update(JSON.stringify({ file_sha256: fileSha, first: max })).digest("hex");
  return { ...set, sha256, conversations: set.conversations.slice(0, max), source: { ...source, kept: max } };
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
