/**
 * vLLM on the wire (wire-formats.md §1): exclude_unset chat chunks with `reasoning_content: null`,
 * `token_ids` per chunk and `prompt_token_ids` on the first with `return_token_ids`, finish on the
 * chunk with the last token, usage turned on by any `stream_options` object, wrapped errors with
 * integer codes, 404 for an unknown model, mid-stream error followed by `[DONE]`.
 * @module
 */
import {
  type Completion,
  EMPTY_CHUNK,
  hexId,
  type HttpError,
  type Personality,
  type StreamContext,
  textOf,
  type TokenChunk,
  usageOnByObject,
} from "../personality.ts";
import { pythonJson, SSE_DONE, sseEvent, sseRaw } from "../sse.ts";
import { candidates, type OutputToken, tokenLogprob } from "../tokens.ts";

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, total_tokens: prompt + completion, completion_tokens: completion };
}

/**
 * A request's final usage: with the prefix cache on, `prompt_tokens_details.cached_tokens` as
 * `--enable-prompt-tokens-details` adds it (per-chunk continuous usage never carries it); off,
 * the whole answer's `null` (`whole`) or no field (the stream's exclude_none usage chunk).
 */
function finalUsage(ctx: StreamContext, completion: number, whole: boolean) {
  const u = usage(ctx.req.promptTokens, completion);
  if (ctx.cachedTokens !== null) return { ...u, prompt_tokens_details: { cached_tokens: ctx.cachedTokens } };
  return whole ? { ...u, prompt_tokens_details: null } : u;
}

function error(status: number, message: string, type: string, param: string | null = null): HttpError {
  return { status, body: { error: { message, type, param, code: status } } };
}

/** A token as vLLM names it in logprobs: `token_id:N` with return_tokens_as_token_ids. */
function tokenName(ctx: StreamContext, t: OutputToken): string {
  return ctx.req.body.return_tokens_as_token_ids === true ? `token_id:${t.id}` : t.text;
}

function chatLogprobs(ctx: StreamContext, tokens: OutputToken[]) {
  const entry = (t: OutputToken) => {
    const token = tokenName(ctx, t);
    return { token, logprob: tokenLogprob(t.id), bytes: [...new TextEncoder().encode(token)] };
  };
  return {
    content: tokens.map((t) => ({
      ...entry(t),
      top_logprobs: candidates(t, ctx.req.topLogprobs).map(entry),
    })),
  };
}

function completionLogprobs(ctx: StreamContext, tokens: OutputToken[], offset: number) {
  const offsets: number[] = [];
  for (const t of tokens) {
    offsets.push(offset);
    offset += t.text.length;
  }
  return {
    text_offset: offsets,
    token_logprobs: tokens.map((t) => tokenLogprob(t.id)),
    tokens: tokens.map((t) => tokenName(ctx, t)),
    top_logprobs: tokens.map((t) =>
      Object.fromEntries(
        candidates(t, Math.max(1, ctx.req.topLogprobs)).map((c) => [tokenName(ctx, c), tokenLogprob(c.id)]),
      )
    ),
  };
}

function head(ctx: StreamContext, object: string) {
  return { id: ctx.id, object, created: ctx.created, model: ctx.model };
}

function chatChunk(ctx: StreamContext, c: TokenChunk) {
  const rti = ctx.req.returnTokenIds;
  const choice: Record<string, unknown> = {
    index: 0,
    delta: { content: textOf(c.tokens), reasoning_content: null },
    logprobs: ctx.req.logprobs ? chatLogprobs(ctx, c.tokens) : null,
    finish_reason: c.finish,
  };
  if (c.finish) choice.stop_reason = null;
  choice.token_ids = rti ? c.tokens.map((t) => t.id) : null;
  const chunk: Record<string, unknown> = { ...head(ctx, "chat.completion.chunk"), choices: [choice] };
  if (ctx.usage === "every") chunk.usage = usage(ctx.req.promptTokens, c.completionTokens);
  return chunk;
}

function completionChunk(ctx: StreamContext, c: TokenChunk) {
  const rti = ctx.req.returnTokenIds;
  return {
    ...head(ctx, "text_completion"),
    choices: [{
      index: 0,
      text: textOf(c.tokens),
      logprobs: ctx.req.logprobs ? completionLogprobs(ctx, c.tokens, c.textOffset) : null,
      finish_reason: c.finish,
      stop_reason: null,
      prompt_token_ids: rti && c.first ? ctx.promptIds() : null,
      token_ids: rti ? c.tokens.map((t) => t.id) : null,
    }],
    usage: ctx.usage === "every" ? usage(ctx.req.promptTokens, c.completionTokens) : null,
  };
}

/** The vLLM personality. */
export const vllm: Personality = {
  engine: "vllm",
  exact: { ignoreEos: true, minTokens: true },
  completionsDefaultMaxTokens: 16,
  checkModel: (requested, served) =>
    requested === undefined || requested === served
      ? null
      : error(404, `The model \`${requested}\` does not exist.`, "NotFoundError", "model"),
  checkFields: () => null,
  echoModel: (_requested, served) => served,
  newId: (kind) => (kind === "chat" ? "chatcmpl-" : "cmpl-") + hexId(),
  usageMode: (
    req,
  ) => (usageOnByObject(req)
    ? (req.streamOptions?.continuous_usage_stats === true ? "every" : "final")
    : "none"),
  streamStart(ctx) {
    if (ctx.req.kind !== "chat") return [];
    const chunk: Record<string, unknown> = {
      ...head(ctx, "chat.completion.chunk"),
      choices: [{
        index: 0,
        delta: { role: "assistant", content: "", reasoning_content: null },
        logprobs: null,
        finish_reason: null,
      }],
    };
    if (ctx.usage === "every") chunk.usage = usage(ctx.req.promptTokens, 0);
    chunk.prompt_token_ids = ctx.req.returnTokenIds ? ctx.promptIds() : null;
    return [sseEvent(chunk)];
  },
  streamTokens: (ctx, c) => [sseEvent(ctx.req.kind === "chat" ? chatChunk(ctx, c) : completionChunk(ctx, c))],
  streamEnd(ctx, done: Completion) {
    const out: string[] = [];
    if (ctx.usage !== "none") {
      const object = ctx.req.kind === "chat" ? "chat.completion.chunk" : "text_completion";
      out.push(
        sseEvent({
          ...head(ctx, object),
          choices: [],
          usage: finalUsage(ctx, done.completionTokens, false),
        }),
      );
    }
    out.push(SSE_DONE);
    return out;
  },
  streamError: () => ({
    events: [
      sseRaw(
        pythonJson({
          error: { message: "Internal server error", type: "InternalServerError", param: null, code: 500 },
        }),
      ),
    ],
    done: true,
  }),
  sampleChunk: (ctx) => (ctx.req.kind === "chat" ? chatChunk : completionChunk)(ctx, EMPTY_CHUNK),
  whole(ctx, a) {
    const ids = ctx.req.returnTokenIds ? a.tokens.map((t) => t.id) : null;
    const promptIds = ctx.req.returnTokenIds ? ctx.promptIds() : null;
    const u = finalUsage(ctx, a.completionTokens, true);
    if (ctx.req.kind === "chat") {
      const message = {
        role: "assistant",
        content: textOf(a.tokens),
        refusal: null,
        annotations: null,
        audio: null,
        function_call: null,
        tool_calls: [],
        reasoning_content: null,
      };
      return {
        ...head(ctx, "chat.completion"),
        choices: [{
          index: 0,
          message,
          logprobs: null,
          finish_reason: a.finish,
          stop_reason: null,
          token_ids: ids,
        }],
        service_tier: null,
        system_fingerprint: null,
        usage: u,
        prompt_logprobs: null,
        prompt_token_ids: promptIds,
        kv_transfer_params: null,
      };
    }
    return {
      ...head(ctx, "text_completion"),
      choices: [{
        index: 0,
        text: textOf(a.tokens),
        logprobs: null,
        finish_reason: a.finish,
        stop_reason: null,
        prompt_logprobs: null,
        prompt_token_ids: promptIds,
        token_ids: ids,
      }],
      service_tier: null,
      system_fingerprint: null,
      usage: u,
      kv_transfer_params: null,
    };
  },
  tooLong(prompt, maxTokens, maxModelLen) {
    // vLLM checks the prompt alone first (token_num >= max_model_len), then prompt + max_tokens.
    if (prompt >= maxModelLen || maxTokens === undefined) {
      return error(
        400,
        `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${prompt} input tokens. Please reduce the length of the input messages.`,
        "BadRequestError",
        "input_tokens",
      );
    }
    return error(
      400,
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${maxModelLen} tokens and your request has ${prompt} input tokens (${maxTokens} > ${maxModelLen} - ${prompt}).`,
      "BadRequestError",
      "max_tokens",
    );
  },
  invalid: (p, kind) =>
    error(
      400,
      `1 validation error for ${kind === "chat" ? "ChatCompletionRequest" : "CompletionRequest"}\n${
        p.param ?? "body"
      }\n  ${p.message}`,
      "Bad Request",
      null,
    ),
  faultError: (status) =>
    status === 429
      ? error(429, "Too many requests: the server is overloaded", "Too Many Requests")
      : status === 503
      ? error(503, "The engine is not ready or overloaded", "Service Unavailable")
      : error(500, "Internal server error", "InternalServerError"),
  models: (o, created) => ({
    object: "list",
    data: [{
      id: o.model,
      object: "model",
      created,
      owned_by: "vllm",
      root: o.model,
      parent: null,
      max_model_len: o.maxModelLen,
      permission: [{
        id: "modelperm-" + hexId(),
        object: "model_permission",
        created,
        allow_create_engine: false,
        allow_sampling: true,
        allow_logprobs: true,
        allow_search_indices: false,
        allow_view: true,
        allow_fine_tuning: false,
        organization: "*",
        group: null,
        is_blocking: false,
      }],
    }],
  }),
  health: (ready) => ({ status: ready ? 200 : 503, body: "", json: false }),
};
