/**
 * What every benchmark request needs, held once: the endpoint, the engine profile, the body
 * template (max_tokens, exact length, token ids, --extra-body, chat_template_kwargs merged per
 * key) and the client options. `send` builds the exact body, streams it through the ONE client
 * loop and returns the result with the body that was sent.
 * @module
 */
import { type Endpoint, type RequestResult, streamCompletion } from "../client/mod.ts";
import type { Api } from "../client/types.ts";
import type { CountTokensFn } from "../client/token_count.ts";
import { type AskedFor, buildBody, type EngineKind, type TokenIdMode } from "../engines/mod.ts";
import type { Prompt } from "../prompts/mod.ts";
import { saltedMessages } from "./salt.ts";

/** Tokens to generate when neither --max-tokens nor the prompt says (seed 000). */
export const DEFAULT_MAX_TOKENS = 256;

/** The runner's settings. */
export interface RunnerConfig {
  ep: Endpoint;
  api: Api;
  engineKind: EngineKind;
  model: string;
  /** --max-tokens, overriding each prompt's own. */
  maxTokens: number | null;
  tokenIds: TokenIdMode;
  exactLength: boolean;
  /** --extra-body (parsed). */
  extraBody: Record<string, unknown>;
  /** --temperature: sent in every body (default 0); null sends none (the server's default). */
  temperature?: number | null;
  /** --chat-template-kwargs (parsed, with any intake pin applied). */
  chatTemplateKwargs: Record<string, unknown>;
  apiKey?: string;
  timeoutMs: number;
  idleTimeoutMs?: number;
  countTokens?: CountTokensFn;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  signal?: AbortSignal;
}

/** A sent request: its measured result and the exact body. */
export interface Sent {
  result: RequestResult;
  body: Record<string, unknown>;
}

/** Merged chat_template_kwargs for a prompt: layers in order, then the prompt's own field, per key. */
export function chatTemplateKwargsFor(prompt: Prompt, ...layers: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const layer of [...layers, prompt.extra.chat_template_kwargs]) {
    if (layer && typeof layer === "object" && !Array.isArray(layer)) Object.assign(out, layer);
  }
  return out;
}

/** Where a prompt's cache tag goes (`cache_salt_at`, after a synthetic set's shared prefix), else null: the start. */
function saltAt(p: Prompt): number | null {
  const v = p.extra.cache_salt_at;
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : null;
}

/** Builds bodies and sends requests for one benchmark configuration. */
export class Runner {
  /** What the first body asked for (exact-length fields, token ids). */
  asked: AskedFor | null = null;

  /** @param cfg the configuration */
  constructor(readonly cfg: RunnerConfig) {}

  /** The max_tokens a prompt is sent with. */
  maxFor(p: Prompt): number {
    return this.cfg.maxTokens ?? p.maxTokens ?? DEFAULT_MAX_TOKENS;
  }

  /** --extra-body plus the merged chat_template_kwargs (chat only: completions have no template). */
  extraFor(p: Prompt): Record<string, unknown> {
    const kw = chatTemplateKwargsFor(p, this.cfg.extraBody.chat_template_kwargs, this.cfg.chatTemplateKwargs);
    if (this.cfg.api !== "chat" || Object.keys(kw).length === 0) return this.cfg.extraBody;
    return { ...this.cfg.extraBody, chat_template_kwargs: kw };
  }

  /** The exact body for a prompt and salt. */
  body(p: Prompt, salt: string | null): Record<string, unknown> {
    const built = buildBody(this.cfg.api, this.cfg.engineKind, this.cfg.model, saltedMessages(p.messages, salt, saltAt(p)), this.maxFor(p), {
      tokenIds: this.cfg.tokenIds,
      exactLength: this.cfg.exactLength,
      temperature: this.cfg.temperature,
      extra: this.extraFor(p),
    });
    this.asked ??= built.asked;
    return built.body;
  }

  /** Sends one prompt (streamed) and returns the result and the body. */
  send(p: Prompt, salt: string | null, tScheduledMs: number | null = null): Promise<Sent> {
    let sent: Record<string, unknown> = {};
    return this.stream(p, salt, tScheduledMs, (b) => (sent = b)).then((result) => ({ result, body: sent }));
  }

  /**
   * Sends one prompt (streamed) and resolves with its result. The body is handed to `onBody` as it
   * is sent and not held after that (an open stream keeps no prompt: issue 21), and no function
   * here stays suspended for the response. What throws is a rejection, as from an async function.
   * @param onBody told the exact body before the request is sent (to record it)
   */
  stream(p: Prompt, salt: string | null, tScheduledMs: number | null, onBody?: (body: Record<string, unknown>) => void): Promise<RequestResult> {
    let body: Record<string, unknown>;
    try {
      body = this.body(p, salt);
      onBody?.(body);
    } catch (e) {
      return Promise.reject(e);
    }
    return streamCompletion(this.cfg.ep, this.cfg.api, body, {
      fetch: this.cfg.fetch,
      signal: this.cfg.signal,
      apiKey: this.cfg.apiKey,
      timeoutMs: this.cfg.timeoutMs,
      idleTimeoutMs: this.cfg.idleTimeoutMs,
      countTokens: this.cfg.countTokens,
      id: p.id,
      bucket: p.bucket,
      salt,
      tScheduledMs,
    });
  }
}
