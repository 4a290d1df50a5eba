/**
 * SGLang on the wire (wire-formats.md §2): msgspec chat chunks (`reasoning_content` always
 * present, `matched_stop` on every choice), `created` recomputed per chat chunk, a separate
 * finish chunk, usage only with `include_usage: true`, the request's model echoed unchecked,
 * flat errors, mid-stream error followed by `[DONE]`.
 * @module
 */
import {
  EMPTY_CHUNK,
  hexId,
  type HttpError,
  type Personality,
  type StreamContext,
  textOf,
  type TokenChunk,
  unixNow,
  usageOnByFlag,
} from "../personality.ts";
import { pythonJson, SSE_DONE, sseEvent, sseRaw } from "../sse.ts";
import { EOS_TOKEN_ID } from "../tokens.ts";

function error(status: number, message: string, type: string): HttpError {
  return { status, body: { object: "error", message, type, param: null, code: status } };
}

/**
 * SGLang's UsageInfo. `cached` (the final usage of a request, with the prefix cache on, as
 * `--enable-cache-report` shows it) fills `prompt_tokens_details`; null keeps chat's `null` and
 * completions' absent field.
 */
function usage(prompt: number, completion: number, chat: boolean, cached: number | null = null) {
  const u: Record<string, unknown> = {
    prompt_tokens: prompt,
    total_tokens: prompt + completion,
    completion_tokens: completion,
  };
  if (cached !== null) u.prompt_tokens_details = { cached_tokens: cached };
  else if (chat) u.prompt_tokens_details = null;
  u.reasoning_tokens = 0;
  return u;
}

function chatHead(ctx: StreamContext) {
  return { id: ctx.id, object: "chat.completion.chunk", created: unixNow(), model: ctx.model };
}

function contentChunk(ctx: StreamContext, c: TokenChunk) {
  if (ctx.req.kind === "chat") {
    const chunk: Record<string, unknown> = {
      ...chatHead(ctx),
      choices: [{
        index: 0,
        delta: { reasoning_content: null, content: textOf(c.tokens) },
        logprobs: null,
        finish_reason: null,
        matched_stop: null,
      }],
    };
    if (ctx.usage === "every") chunk.usage = usage(ctx.req.promptTokens, c.completionTokens, true);
    return chunk;
  }
  return {
    id: ctx.id,
    object: "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices: [{
      index: 0,
      text: textOf(c.tokens),
      logprobs: null,
      finish_reason: c.finish,
      matched_stop: c.finish === "stop" ? EOS_TOKEN_ID : null,
    }],
    usage: ctx.usage === "every" ? usage(ctx.req.promptTokens, c.completionTokens, false) : null,
  };
}

/** The SGLang personality. */
export const sglang: Personality = {
  engine: "sglang",
  exact: { ignoreEos: true, minTokens: true },
  completionsDefaultMaxTokens: 16,
  checkModel: () => null,
  checkFields: () => null,
  echoModel: (requested) => requested ?? "default",
  newId: () => hexId(),
  usageMode: (
    req,
  ) => (usageOnByFlag(req)
    ? (req.streamOptions?.continuous_usage_stats === true ? "every" : "final")
    : "none"),
  streamStart(ctx) {
    if (ctx.req.kind !== "chat") return [];
    return [sseEvent({
      ...chatHead(ctx),
      choices: [{
        index: 0,
        delta: { reasoning_content: null, role: "assistant", content: "" },
        logprobs: null,
        finish_reason: null,
        matched_stop: null,
      }],
    })];
  },
  streamTokens: (ctx, c) => [sseEvent(contentChunk(ctx, c))],
  streamEnd(ctx, done) {
    const out: string[] = [];
    const chat = ctx.req.kind === "chat";
    if (chat) {
      out.push(sseEvent({
        ...chatHead(ctx),
        choices: [{
          index: 0,
          delta: { reasoning_content: null },
          logprobs: null,
          finish_reason: done.finish,
          matched_stop: done.finish === "stop" ? EOS_TOKEN_ID : null,
        }],
      }));
    }
    if (ctx.usage !== "none") {
      const head = chat
        ? chatHead(ctx)
        : { id: ctx.id, object: "text_completion", created: ctx.created, model: ctx.model };
      out.push(
        sseEvent({
          ...head,
          choices: [],
          usage: usage(ctx.req.promptTokens, done.completionTokens, chat, ctx.cachedTokens),
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
          error: {
            object: "error",
            message: "Generation aborted.",
            type: "SERVICE_UNAVAILABLE",
            param: null,
            code: 503,
          },
        }),
      ),
    ],
    done: true,
  }),
  sampleChunk: (ctx) => contentChunk(ctx, EMPTY_CHUNK),
  whole(ctx, a) {
    const matched = a.finish === "stop" ? EOS_TOKEN_ID : null;
    if (ctx.req.kind === "chat") {
      return {
        id: ctx.id,
        object: "chat.completion",
        created: ctx.created,
        model: ctx.model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: textOf(a.tokens),
            reasoning_content: null,
            tool_calls: null,
          },
          logprobs: null,
          finish_reason: a.finish,
          matched_stop: matched,
        }],
        usage: usage(ctx.req.promptTokens, a.completionTokens, true, ctx.cachedTokens),
        metadata: { weight_version: "default" },
      };
    }
    return {
      id: ctx.id,
      object: "text_completion",
      created: ctx.created,
      model: ctx.model,
      choices: [{
        index: 0,
        text: textOf(a.tokens),
        logprobs: null,
        finish_reason: a.finish,
        matched_stop: matched,
      }],
      usage: usage(ctx.req.promptTokens, a.completionTokens, false, ctx.cachedTokens),
      metadata: { weight_version: "default" },
    };
  },
  tooLong(prompt, maxTokens, maxModelLen) {
    if (prompt >= maxModelLen || maxTokens === undefined) {
      return error(
        400,
        `The input (${prompt} tokens) is longer than the model's context length (${maxModelLen} tokens).`,
        "BadRequestError",
      );
    }
    return error(
      400,
      `Requested token count exceeds the model's maximum context length of ${maxModelLen} tokens. You requested a total of ${
        prompt + maxTokens
      } tokens: ${prompt} tokens from the input messages and ${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
      "BadRequestError",
    );
  },
  invalid: (p, kind) =>
    error(
      400,
      `1 validation error for ${kind === "chat" ? "ChatCompletionRequest" : "CompletionRequest"}\n${
        p.param ?? "body"
      }\n  ${p.message}`,
      "Bad Request",
    ),
  faultError: (status) =>
    status === 429
      ? error(429, "The request queue is full.", "TOO_MANY_REQUESTS")
      : status === 503
      ? error(503, "The server is not ready or is shutting down.", "SERVICE_UNAVAILABLE")
      : error(500, "Internal server error: generation failed", "InternalServerError"),
  models: (o, created) => ({
    object: "list",
    data: [{
      id: o.model,
      object: "model",
      created,
      owned_by: "sglang",
      root: o.model,
      parent: null,
      max_model_len: o.maxModelLen,
    }],
  }),
  health: (ready) => ({ status: ready ? 200 : 503, body: "", json: false }),
};
