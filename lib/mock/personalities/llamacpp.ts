/**
 * llama.cpp `llama-server` on the wire (wire-formats.md §3): nlohmann key order (`choices`
 * first), the role chunk sent together with the first token, token ids only through
 * `logprobs.content[].id`, a separate `delta: {}` finish chunk, `timings` on the last event,
 * `/v1/completions` always ending with usage, `chatcmpl-` ids on both endpoints, and a
 * mid-stream error that ends the stream without `[DONE]`.
 * @module
 */
import {
  alnumId,
  EMPTY_CHUNK,
  type HttpError,
  type Personality,
  type StreamContext,
  textOf,
  type Timings,
  type TokenChunk,
  usageOnByFlag,
} from "../personality.ts";
import { SSE_DONE, sseEvent } from "../sse.ts";
import { candidates, type OutputToken, tokenLogprob } from "../tokens.ts";

const FINGERPRINT = "b6123-1c0ffee0";

function error(
  status: number,
  message: string,
  type: string,
  extra: Record<string, unknown> = {},
): HttpError {
  return { status, body: { error: { code: status, message, type, ...extra } } };
}

function usage(prompt: number, completion: number) {
  return { completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion };
}

/** llama-server's `timings`: `cache_n` prompt tokens reused from the cache, `prompt_n` the ones evaluated. */
function timings(ctx: StreamContext, completion: number, t: Timings) {
  const perToken = (ms: number, n: number) => (n > 0 ? ms / n : 0);
  const perSecond = (ms: number, n: number) => (ms > 0 ? (1000 * n) / ms : 0);
  const cached = ctx.cachedTokens ?? 0;
  const evaluated = ctx.req.promptTokens - cached;
  return {
    cache_n: cached,
    prompt_n: evaluated,
    prompt_ms: t.promptMs,
    prompt_per_token_ms: perToken(t.promptMs, evaluated),
    prompt_per_second: perSecond(t.promptMs, evaluated),
    predicted_n: completion,
    predicted_ms: t.predictedMs,
    predicted_per_token_ms: perToken(t.predictedMs, completion),
    predicted_per_second: perSecond(t.predictedMs, completion),
  };
}

function logprobEntry(t: OutputToken) {
  return {
    id: t.id,
    token: t.text,
    bytes: [...new TextEncoder().encode(t.text)],
    logprob: tokenLogprob(t.id),
  };
}

function logprobs(tokens: OutputToken[], top: number) {
  return {
    content: tokens.map((t) => ({ ...logprobEntry(t), top_logprobs: candidates(t, top).map(logprobEntry) })),
  };
}

function tail(ctx: StreamContext, object: string) {
  return { created: ctx.created, id: ctx.id, model: ctx.model, system_fingerprint: FINGERPRINT, object };
}

function contentChunk(ctx: StreamContext, c: TokenChunk) {
  if (ctx.req.kind === "chat") {
    const choice: Record<string, unknown> = {
      finish_reason: null,
      index: 0,
      delta: { content: textOf(c.tokens) },
    };
    if (ctx.req.logprobs) choice.logprobs = logprobs(c.tokens, ctx.req.topLogprobs);
    return { choices: [choice], ...tail(ctx, "chat.completion.chunk") };
  }
  const lp = ctx.req.logprobs ? logprobs(c.tokens, ctx.req.topLogprobs) : null;
  const { created, model, system_fingerprint, object, id } = tail(ctx, "text_completion");
  return {
    choices: [{ text: textOf(c.tokens), index: 0, logprobs: lp, finish_reason: null }],
    created,
    model,
    system_fingerprint,
    object,
    id,
  };
}

/** The llama.cpp personality. */
export const llamacpp: Personality = {
  engine: "llamacpp",
  exact: { ignoreEos: true, minTokens: false },
  completionsDefaultMaxTokens: null,
  checkModel: () => null,
  checkFields: (
    req,
  ) => (req.n > 1 ? error(400, "Only one completion choice is allowed", "invalid_request_error") : null),
  echoModel: (_requested, served) => served,
  newId: () => "chatcmpl-" + alnumId(32),
  usageMode: (req) => (req.kind === "completions" || usageOnByFlag(req) ? "final" : "none"),
  // llama-server answers only after prefill: the role chunk goes out with the first token.
  streamStart: () => [],
  streamTokens(ctx, c) {
    const out: string[] = [];
    if (c.first && ctx.req.kind === "chat") {
      out.push(
        sseEvent({
          choices: [{ finish_reason: null, index: 0, delta: { role: "assistant", content: null } }],
          ...tail(ctx, "chat.completion.chunk"),
        }),
      );
    }
    out.push(sseEvent(contentChunk(ctx, c)));
    return out;
  },
  streamEnd(ctx, done) {
    const p = ctx.req.promptTokens;
    const t = timings(ctx, done.completionTokens, done.timings);
    if (ctx.req.kind === "completions") {
      const { created, model, system_fingerprint, object, id } = tail(ctx, "text_completion");
      const final = {
        choices: [{ text: "", index: 0, logprobs: null, finish_reason: done.finish }],
        created,
        model,
        system_fingerprint,
        object,
        usage: usage(p, done.completionTokens),
        id,
        timings: t,
      };
      return [sseEvent(final), SSE_DONE];
    }
    const finish: Record<string, unknown> = {
      choices: [{ finish_reason: done.finish, index: 0, delta: {} }],
      ...tail(ctx, "chat.completion.chunk"),
    };
    if (ctx.usage === "none") return [sseEvent({ ...finish, timings: t }), SSE_DONE];
    const usageChunk = {
      choices: [],
      ...tail(ctx, "chat.completion.chunk"),
      usage: usage(p, done.completionTokens),
      timings: t,
    };
    return [sseEvent(finish), sseEvent(usageChunk), SSE_DONE];
  },
  streamError: () => ({
    events: [
      sseEvent({ error: { code: 500, message: "Context size has been exceeded.", type: "server_error" } }),
    ],
    done: false,
  }),
  sampleChunk: (ctx) => contentChunk(ctx, EMPTY_CHUNK),
  whole(ctx, a) {
    const p = ctx.req.promptTokens;
    const u = usage(p, a.completionTokens);
    const t = timings(ctx, a.completionTokens, a.timings);
    if (ctx.req.kind === "chat") {
      const choice: Record<string, unknown> = {
        finish_reason: a.finish,
        index: 0,
        message: { role: "assistant", content: textOf(a.tokens) },
      };
      if (ctx.req.logprobs) choice.logprobs = logprobs(a.tokens, ctx.req.topLogprobs);
      const { created, model, system_fingerprint, id } = tail(ctx, "");
      return {
        choices: [choice],
        created,
        model,
        system_fingerprint,
        object: "chat.completion",
        usage: u,
        id,
        timings: t,
      };
    }
    const lp = ctx.req.logprobs ? logprobs(a.tokens, ctx.req.topLogprobs) : null;
    const { created, model, system_fingerprint, id } = tail(ctx, "");
    return {
      choices: [{ text: textOf(a.tokens), index: 0, logprobs: lp, finish_reason: a.finish }],
      created,
      model,
      system_fingerprint,
      object: "text_completion",
      usage: u,
      id,
      timings: t,
    };
  },
  tooLong(prompt, maxTokens, maxModelLen) {
    const n = prompt + (maxTokens ?? 0);
    return error(
      400,
      `request (${n} tokens) exceeds the available context size (${maxModelLen} tokens), try increasing it`,
      "exceed_context_size_error",
      {
        n_prompt_tokens: prompt,
        n_ctx: maxModelLen,
      },
    );
  },
  invalid: (p) => error(400, p.message, "invalid_request_error"),
  faultError: (status) =>
    status === 429
      ? error(429, "Too many requests, all slots are busy", "unavailable_error")
      : status === 503
      ? error(503, "Loading model", "unavailable_error")
      : error(500, "Internal server error", "server_error"),
  models: (o, created) => ({
    models: [{
      name: o.model,
      model: o.model,
      modified_at: "",
      size: "",
      digest: "",
      type: "model",
      description: "",
      tags: [""],
      capabilities: ["completion"],
      parameters: "",
      details: {
        parent_model: "",
        format: "gguf",
        family: "",
        families: [""],
        parameter_size: "",
        quantization_level: "",
      },
    }],
    object: "list",
    data: [{
      id: o.model,
      object: "model",
      created,
      owned_by: "llamacpp",
      meta: {
        vocab_type: 2,
        n_vocab: 151936,
        n_ctx_train: o.maxModelLen,
        n_embd: 896,
        n_params: 494032768,
        size: 531068928,
      },
    }],
  }),
  health: (ready) =>
    ready ? { status: 200, body: JSON.stringify({ status: "ok" }), json: true } : {
      status: 503,
      body: JSON.stringify({ error: { code: 503, message: "Loading model", type: "unavailable_error" } }),
      json: true,
    },
};
