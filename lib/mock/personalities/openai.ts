/**
 * The OpenAI API on the wire (wire-formats.md §5): a constant id, `service_tier`,
 * `system_fingerprint` and `obfuscation` on chat chunks, a separate `delta: {}` finish chunk,
 * `usage: null` on every chunk but the last when usage is asked for, wrapped errors with string
 * codes, 404 `model_not_found`, and no exact-length request fields at all.
 * @module
 */
import {
  alnumId,
  EMPTY_CHUNK,
  type HttpError,
  type Personality,
  randomChars,
  type StreamContext,
  textOf,
  type TokenChunk,
  usageOnByFlag,
} from "../personality.ts";
import { SSE_DONE, sseEvent } from "../sse.ts";

const FINGERPRINT = "fp_1c0ffee0ab";

function error(
  status: number,
  message: string,
  type: string,
  code: string | null,
  param: string | null = null,
): HttpError {
  return { status, body: { error: { message, type, param, code } } };
}

/** The chat usage, whose `prompt_tokens_details.cached_tokens` is always there (0 with the prefix cache off). */
function chatUsage(prompt: number, completion: number, cached: number | null) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function plainUsage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function chatChunk(ctx: StreamContext, choices: unknown[], usage?: unknown) {
  const chunk: Record<string, unknown> = {
    id: ctx.id,
    object: "chat.completion.chunk",
    created: ctx.created,
    model: ctx.model,
    service_tier: "default",
    system_fingerprint: FINGERPRINT,
    choices,
  };
  if (ctx.usage !== "none") chunk.usage = usage ?? null;
  if (ctx.req.streamOptions?.include_obfuscation !== false) {
    chunk.obfuscation = alnumId(1 + (randomChars(1).charCodeAt(0) % 8));
  }
  return chunk;
}

function completionChunk(ctx: StreamContext, text: string, finish: string | null) {
  return {
    id: ctx.id,
    object: "text_completion",
    created: ctx.created,
    choices: [{ text, index: 0, logprobs: null, finish_reason: finish }],
    model: ctx.model,
    system_fingerprint: null,
  };
}

function contentChunk(ctx: StreamContext, c: TokenChunk) {
  const text = textOf(c.tokens);
  if (ctx.req.kind === "chat") {
    return chatChunk(ctx, [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]);
  }
  return completionChunk(ctx, text, null);
}

/** The OpenAI API personality (the client's `generic` profile). */
export const openai: Personality = {
  engine: "openai",
  exact: { ignoreEos: false, minTokens: false },
  completionsDefaultMaxTokens: 16,
  checkModel(requested, served) {
    if (requested === undefined) {
      return error(400, "you must provide a model parameter", "invalid_request_error", null);
    }
    if (requested === served) return null;
    return error(
      404,
      `The model \`${requested}\` does not exist or you do not have access to it.`,
      "invalid_request_error",
      "model_not_found",
    );
  },
  checkFields: () => null,
  echoModel: (_requested, served) => served,
  newId: (kind) => (kind === "chat" ? "chatcmpl-" : "cmpl-") + alnumId(29),
  usageMode: (req) => (usageOnByFlag(req) ? "final" : "none"),
  streamStart(ctx) {
    if (ctx.req.kind !== "chat") return [];
    return [
      sseEvent(
        chatChunk(ctx, [{
          index: 0,
          delta: { role: "assistant", content: "", refusal: null },
          logprobs: null,
          finish_reason: null,
        }]),
      ),
    ];
  },
  streamTokens: (ctx, c) => [sseEvent(contentChunk(ctx, c))],
  streamEnd(ctx, done) {
    const p = ctx.req.promptTokens;
    const out: string[] = [];
    if (ctx.req.kind === "chat") {
      out.push(
        sseEvent(chatChunk(ctx, [{ index: 0, delta: {}, logprobs: null, finish_reason: done.finish }])),
      );
      if (ctx.usage !== "none") {
        out.push(sseEvent(chatChunk(ctx, [], chatUsage(p, done.completionTokens, ctx.cachedTokens))));
      }
    } else {
      out.push(sseEvent(completionChunk(ctx, "", done.finish)));
      if (ctx.usage !== "none") {
        out.push(
          sseEvent({
            id: ctx.id,
            object: "text_completion",
            created: ctx.created,
            choices: [],
            model: ctx.model,
            usage: plainUsage(p, done.completionTokens),
          }),
        );
      }
    }
    out.push(SSE_DONE);
    return out;
  },
  streamError: () => ({
    events: [
      sseEvent({
        error: {
          message: "The server had an error while processing your request. Sorry about that!",
          type: "server_error",
          param: null,
          code: null,
        },
      }),
    ],
    done: false,
  }),
  sampleChunk: (ctx) => contentChunk(ctx, EMPTY_CHUNK),
  whole(ctx, a) {
    const p = ctx.req.promptTokens;
    if (ctx.req.kind === "chat") {
      return {
        id: ctx.id,
        object: "chat.completion",
        created: ctx.created,
        model: ctx.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: textOf(a.tokens), refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: a.finish,
        }],
        usage: chatUsage(p, a.completionTokens, ctx.cachedTokens),
        service_tier: "default",
        system_fingerprint: FINGERPRINT,
      };
    }
    return {
      id: ctx.id,
      object: "text_completion",
      created: ctx.created,
      model: ctx.model,
      choices: [{ text: textOf(a.tokens), index: 0, logprobs: null, finish_reason: a.finish }],
      usage: plainUsage(p, a.completionTokens),
      system_fingerprint: null,
    };
  },
  tooLong: (prompt, maxTokens, maxModelLen, kind) =>
    error(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, your ${
        kind === "chat" ? "messages" : "prompt"
      } resulted in ${prompt + (maxTokens ?? 0)} tokens. Please reduce the length of the ${
        kind === "chat" ? "messages" : "prompt"
      }.`,
      "invalid_request_error",
      "context_length_exceeded",
      kind === "chat" ? "messages" : "prompt",
    ),
  invalid: (p) => error(400, p.message, "invalid_request_error", null, p.param),
  faultError: (status) =>
    status === 429
      ? error(
        429,
        "Rate limit reached for requests. Please try again in 1s.",
        "requests",
        "rate_limit_exceeded",
      )
      : status === 503
      ? error(503, "The engine is currently overloaded, please try again later", "server_error", null)
      : error(
        500,
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        null,
      ),
  models: (o, created) => ({
    object: "list",
    data: [{ id: o.model, object: "model", created, owned_by: "system" }],
  }),
  health: (ready) => ({ status: ready ? 200 : 503, body: "", json: false }),
};
