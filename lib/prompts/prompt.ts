/**
 * One prompt of a prompt set, and its validation (seed 002 prompts_io.py). A prompt-set file is
 * JSONL, one request per line:
 *
 *     {"id": "short-0007", "bucket": "short", "messages": [{"role": "user", "content": "..."}],
 *      "max_tokens": 256, "source": "dataset/license", "kind": "chat"}
 *
 * Fields other than id, bucket, messages, max_tokens and kind are kept in `extra`.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { isTokenCount, MAX_PROMPT_TOKENS } from "./limits.ts";

/** Buckets in their natural order; others sort after these, by name. */
export const BUCKETS: readonly string[] = ["very_short", "short", "medium", "long"] as const;

/** An OpenAI chat message as written in the file. */
export interface PromptMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

/** One validated prompt. */
export interface Prompt {
  /** Unique within its set; no '/' and no leading '.', so it can name a file. */
  id: string;
  /** Length bucket (same rules as id). */
  bucket: string;
  /** Non-empty list of messages, each with a string role. */
  messages: readonly PromptMessage[];
  /** Tokens to generate, or null to use the command's default. */
  maxTokens: number | null;
  /** "chat" unless the line says otherwise. */
  kind: string;
  /** Every other field of the line (source, chat_template_kwargs, ...). */
  extra: Record<string, unknown>;
}

const KNOWN = new Set(["id", "bucket", "messages", "max_tokens", "kind"]);

/** The subject that holds every request of a record (its own bucket name would be merged into it). */
export const ALL_REQUESTS_BUCKET = "all";

function nameLike(v: unknown): v is string {
  return typeof v === "string" && v.length > 0 && !v.includes("/") && !v.startsWith(".");
}

/**
 * Validates one parsed line.
 * @param obj the JSON value of the line
 * @param where `file:line`, named in the error
 * @throws IkError (data, 65) naming `where` and the field
 */
export function parsePrompt(obj: unknown, where: string): Prompt {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    throw dataError(where, "each line must be a JSON object");
  }
  const o = obj as Record<string, unknown>;
  if (!nameLike(o.id)) throw dataError(where, "'id' must be a non-empty string without '/'");
  if (!nameLike(o.bucket)) throw dataError(where, "'bucket' must be a non-empty string without '/'");
  if (o.bucket === ALL_REQUESTS_BUCKET) {
    throw dataError(where, `'bucket' "${ALL_REQUESTS_BUCKET}" is the name of every request together in ik's tables`, "give this bucket another name");
  }
  const messages = o.messages;
  if (
    !Array.isArray(messages) || messages.length === 0 ||
    !messages.every((m) =>
      m !== null && typeof m === "object" && !Array.isArray(m) &&
      typeof (m as PromptMessage).role === "string"
    )
  ) {
    throw dataError(where, "'messages' must be a non-empty list of {role, content} objects");
  }
  const mt = o.max_tokens;
  if (mt !== undefined && mt !== null && !isTokenCount(mt, 1)) {
    throw dataError(where, `'max_tokens' must be a positive integer, at most ${MAX_PROMPT_TOKENS}${typeof mt === "number" ? ` (got ${mt})` : ""}`);
  }
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!KNOWN.has(k)) extra[k] = v;
  return {
    id: o.id,
    bucket: o.bucket,
    messages: messages as PromptMessage[],
    maxTokens: typeof mt === "number" ? mt : null,
    kind: o.kind ? String(o.kind) : "chat",
    extra,
  };
}

/** Plain text for /v1/completions: the message contents joined by a blank line (no chat template). */
export function asCompletionPrompt(p: Prompt): string {
  return p.messages.map((m) => (m.content === undefined || m.content === null ? "" : String(m.content))).join(
    "\n\n",
  );
}

/** Sorts bucket names: the known ones in size order, then the rest by name. */
export function sortBuckets(names: Iterable<string>): string[] {
  const rank = (b: string) => (BUCKETS.indexOf(b) === -1 ? BUCKETS.length : BUCKETS.indexOf(b));
  return [...new Set(names)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
