/**
 * The JSON body of one streamed request for an engine, and a record of what was asked for.
 * Greedy decoding (temperature 0) so outputs are comparable across engines, usage requested
 * (`stream_options.include_usage`), the profile's exact-length and token-id fields, and the user's
 * `--extra-body` merged last so it can override anything.
 * @module
 */
import type { Api } from "../client/types.ts";
import { type EngineKind, MAX_TOKENS_PLACEHOLDER, PROFILES, type TokenIdMode } from "./profiles.ts";

/** An OpenAI chat message (extra keys are passed through). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

/** What the body asked the engine for (stored in records, hence snake_case). */
export interface AskedFor {
  /** Exact-length fields sent (sorted), or null when none. */
  exact_length: string[] | null;
  /** How token ids were requested, or null when they were not. */
  token_ids: { via: "free" | "logprobs"; fields: string[] } | null;
}

/** Options for {@link buildBody}. */
export interface BuildBodyOptions {
  /** Token-id mode (default "auto": only where free). */
  tokenIds?: TokenIdMode;
  /** Ask for exactly max_tokens (default true). */
  exactLength?: boolean;
  /** The user's extra body, merged last. */
  extra?: Record<string, unknown> | null;
  /** `temperature` sent (default 0: greedy); null sends none, so the server's default applies. */
  temperature?: number | null;
}

/** The body and what it asked for. */
export interface BuiltBody {
  body: Record<string, unknown>;
  asked: AskedFor;
}

/** Plain text for /v1/completions: the message contents joined by a blank line (no chat template). */
export function completionPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => (m.content === undefined || m.content === null ? "" : String(m.content))).join(
    "\n\n",
  );
}

/**
 * Builds the request body for one streamed request.
 *
 * @example
 * ```ts
 * const { body, asked } = buildBody("chat", "vllm", "m", [{ role: "user", content: "hi" }], 64);
 * // body.min_tokens === 64, body.return_token_ids === true, asked.token_ids.via === "free"
 * ```
 * @param api chat or completions
 * @param engineKind the profile to use
 * @param model model name
 * @param messages the prompt as chat messages (joined for completions)
 * @param maxTokens tokens to generate, a positive integer
 * @param opts token-id mode, exact length, extra body
 */
export function buildBody(
  api: Api,
  engineKind: EngineKind,
  model: string,
  messages: readonly ChatMessage[],
  maxTokens: number,
  opts: BuildBodyOptions = {},
): BuiltBody {
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new RangeError(`max_tokens must be a positive integer, got ${maxTokens}`);
  }
  const prof = PROFILES[engineKind];
  if (!prof) throw new RangeError(`unknown engine kind '${engineKind}'`);
  const body: Record<string, unknown> = { model };
  if (api === "chat") body.messages = messages.map((m) => ({ ...m }));
  else body.prompt = completionPrompt(messages);
  body.max_tokens = maxTokens;
  if (opts.temperature !== null) body.temperature = opts.temperature ?? 0;
  body.stream = true;
  body.stream_options = { include_usage: true };
  const asked: AskedFor = { exact_length: null, token_ids: null };
  const exactFields = Object.keys(prof.exactLength);
  if ((opts.exactLength ?? true) && exactFields.length > 0) {
    for (const k of exactFields) {
      const v = prof.exactLength[k];
      body[k] = v === MAX_TOKENS_PLACEHOLDER ? maxTokens : v;
    }
    asked.exact_length = exactFields.sort();
  }
  const mode = opts.tokenIds ?? "auto";
  if (mode !== "off") {
    let fields = prof.idsFree[api];
    let via: "free" | "logprobs" = "free";
    if (!fields && mode === "logprobs") {
      fields = prof.idsLogprobs[api];
      via = "logprobs";
    }
    if (fields && Object.keys(fields).length > 0) {
      // A profile's fields are flat (booleans, numbers): copied as they are, as --extra-body is
      // (a structuredClone of them was ~1 % of the client's CPU at 3,000 req/s).
      Object.assign(body, fields);
      asked.token_ids = { via, fields: Object.keys(fields).sort() };
    }
  }
  if (opts.extra) Object.assign(body, opts.extra);
  return { body, asked };
}
