/**
 * Reads a `/v1/chat/completions` or `/v1/completions` body into what generation needs:
 * prompt text and tokens, the length limit, exact-length fields, streaming options.
 * @module
 */
import {
  type ChatMessageLike,
  chatPromptPieces,
  chatPromptText,
  chatPromptTokens,
  completionPromptPieces,
  completionPromptTokens,
} from "./tokens.ts";

/** Which endpoint a request came to. */
export type EndpointKind = "chat" | "completions";

/** A validated generation request. */
export interface GenRequest {
  /** The endpoint. */
  kind: EndpointKind;
  /** The body as sent (for personality checks such as trtllm's forbidden extra fields). */
  body: Record<string, unknown>;
  /** `stream: true`. */
  stream: boolean;
  /** The `model` field, if any. */
  model: string | undefined;
  /** The text generation is seeded from. */
  promptText: string;
  /** Prompt tokens by the pseudo-tokenizer. */
  promptTokens: number;
  /** `max_tokens`, else `max_completion_tokens`. */
  maxTokens: number | undefined;
  /** `ignore_eos: true`. */
  ignoreEos: boolean;
  /** `min_tokens`. */
  minTokens: number | undefined;
  /** `stream_options` when it is an object. */
  streamOptions: Record<string, unknown> | undefined;
  /** Logprobs asked for (chat `logprobs: true` or completions `logprobs: N`). */
  logprobs: boolean;
  /** `top_logprobs` (chat) or the completions `logprobs` count. */
  topLogprobs: number;
  /** vLLM's `return_token_ids`. */
  returnTokenIds: boolean;
  /** trtllm's `detokenize` (default true). */
  detokenize: boolean;
  /** `n` (default 1). */
  n: number;
}

/** Why a body was rejected: the message and the offending field. */
export interface RequestProblem {
  message: string;
  param: string | null;
}

/** The result of {@link parseGenRequest}. */
export type ParsedRequest = { ok: true; req: GenRequest } | { ok: false; problem: RequestProblem };

function fail(message: string, param: string | null): ParsedRequest {
  return { ok: false, problem: { message, param } };
}

function intField(body: Record<string, unknown>, key: string, min: number): number | undefined | string {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    return `'${key}' must be an integer >= ${min}, got ${JSON.stringify(v)}`;
  }
  return v;
}

/** Validates and reads a generation request body. */
export function parseGenRequest(kind: EndpointKind, raw: unknown): ParsedRequest {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    return fail("the request body must be a JSON object", null);
  }
  const body = raw as Record<string, unknown>;
  let promptText: string;
  let promptTokens: number;
  if (kind === "chat") {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) {
      return fail("'messages' is required and must be a non-empty list", "messages");
    }
    if (messages.some((m) => !m || typeof m !== "object")) {
      return fail("each message must be an object", "messages");
    }
    promptText = chatPromptText(messages);
    promptTokens = chatPromptTokens(messages);
  } else {
    const prompt = body.prompt;
    if (typeof prompt === "string") {
      promptText = prompt;
      promptTokens = completionPromptTokens(prompt);
    } else if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((t) => Number.isInteger(t))) {
      promptText = prompt.join(" ");
      promptTokens = prompt.length;
    } else if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === "string") {
      promptText = prompt[0];
      promptTokens = completionPromptTokens(prompt[0]);
    } else {
      return fail(
        "'prompt' is required: a string, a one-element list of strings, or a list of token ids",
        "prompt",
      );
    }
  }
  const maxTokens = intField(body, "max_tokens", 1);
  if (typeof maxTokens === "string") return fail(maxTokens, "max_tokens");
  const maxCompletion = intField(body, "max_completion_tokens", 1);
  if (typeof maxCompletion === "string") return fail(maxCompletion, "max_completion_tokens");
  const minTokens = intField(body, "min_tokens", 0);
  if (typeof minTokens === "string") return fail(minTokens, "min_tokens");
  const n = intField(body, "n", 1);
  if (typeof n === "string") return fail(n, "n");
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    return fail("'stream' must be a boolean", "stream");
  }
  const so = body.stream_options;
  const streamOptions = so && typeof so === "object" && !Array.isArray(so)
    ? so as Record<string, unknown>
    : undefined;
  const lp = body.logprobs;
  const topLp = typeof body.top_logprobs === "number" ? body.top_logprobs : 0;
  const logprobs = kind === "chat" ? lp === true : typeof lp === "number" && lp >= 0;
  return {
    ok: true,
    req: {
      kind,
      body,
      stream: body.stream === true,
      model: typeof body.model === "string" ? body.model : undefined,
      promptText,
      promptTokens,
      maxTokens: maxTokens ?? (kind === "chat" ? maxCompletion : undefined),
      ignoreEos: body.ignore_eos === true,
      minTokens,
      streamOptions,
      logprobs,
      topLogprobs: Math.max(
        0,
        Math.min(20, Math.floor(kind === "chat" ? topLp : typeof lp === "number" ? lp : 0)),
      ),
      returnTokenIds: body.return_token_ids === true,
      detokenize: body.detokenize !== false,
      n: n ?? 1,
    },
  };
}

/**
 * The request's prompt as pseudo-tokens, exactly {@link GenRequest.promptTokens} of them: the
 * chat template's tokens around each message (tokens.ts `chatPromptPieces`), the completions
 * prompt's words, or its token ids as written.
 */
export function promptPieces(req: GenRequest): string[] {
  if (req.kind === "chat") return chatPromptPieces(req.body.messages as ChatMessageLike[]);
  const prompt = req.body.prompt;
  if (typeof prompt === "string") return completionPromptPieces(prompt);
  if (Array.isArray(prompt) && typeof prompt[0] === "string") return completionPromptPieces(prompt[0]);
  return (prompt as number[]).map(String);
}

/** Exact-length fields a personality honours (so `--eos-after` does not apply when they are set). */
export interface ExactLengthSupport {
  ignoreEos: boolean;
  minTokens: boolean;
}

/** How long the answer is and why it ends. */
export interface OutputPlan {
  /** Output tokens to stream. */
  outputLen: number;
  /** "stop" for a natural end, "length" when the limit was reached. */
  finishReason: "stop" | "length";
  /** The length limit: max_tokens, else what the context leaves. */
  limit: number;
}

/**
 * Decides the output length: max_tokens (or, without one, what the context leaves: vLLM's default,
 * llama-server's n_predict -1) caps it with finish_reason "length"; a natural end comes after
 * `--eos-after` tokens only (MOCK.md: off by default, no natural end) unless an honoured
 * `ignore_eos` removes it or an honoured `min_tokens` pushes it back.
 */
export function planOutput(
  req: GenRequest,
  eosAfter: number | null,
  maxModelLen: number,
  honours: ExactLengthSupport,
): OutputPlan {
  const limit = Math.max(0, req.maxTokens ?? maxModelLen - req.promptTokens);
  let eos: number | null = eosAfter;
  if (honours.ignoreEos && req.ignoreEos) eos = null;
  if (eos !== null && honours.minTokens && req.minTokens !== undefined) eos = Math.max(eos, req.minTokens);
  if (eos !== null && eos < limit) return { outputLen: eos, finishReason: "stop", limit };
  return { outputLen: limit, finishReason: "length", limit };
}
