/**
 * TensorRT-LLM `trtllm-serve` on the wire (wire-formats.md §4): the first chat event ends with
 * `" \n\n"`, every chunk has a new id, the request's model is echoed, any `stream_options`
 * puts usage on every chat chunk plus a final `choices: []` chunk, completions carry
 * `token_ids` with `detokenize: false`, unknown request fields get 400 (pydantic
 * extra="forbid"), errors are flat, and a mid-stream failure just ends the stream.
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
  usageOnByObject,
} from "../personality.ts";
import type { GenRequest } from "../request.ts";
import { SSE_DONE, sseEvent, sseRaw } from "../sse.ts";

const COMMON = [
  "model",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "max_tokens",
  "n",
  "presence_penalty",
  "seed",
  "stop",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "user",
  "best_of",
  "use_beam_search",
  "top_k",
  "top_p_min",
  "min_p",
  "repetition_penalty",
  "length_penalty",
  "early_stopping",
  "stop_token_ids",
  "include_stop_str_in_output",
  "ignore_eos",
  "min_tokens",
  "skip_special_tokens",
  "spaces_between_special_tokens",
  "truncate_prompt_tokens",
  "return_context_logits",
  "return_generation_logits",
  "lora_request",
  "disaggregated_params",
  "guided_decoding",
  "add_special_tokens",
  "response_format",
];
const ALLOWED: Record<GenRequest["kind"], Set<string>> = {
  chat: new Set([
    ...COMMON,
    "messages",
    "top_logprobs",
    "max_completion_tokens",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning_effort",
    "echo",
    "add_generation_prompt",
    "documents",
    "chat_template",
    "chat_template_kwargs",
    "mm_processor_kwargs",
  ]),
  completions: new Set([...COMMON, "prompt", "echo", "suffix", "detokenize", "prompt_token_ids"]),
};

function error(status: number, message: string, type: string): HttpError {
  return { status, body: { object: "error", message, type, param: null, code: status } };
}

function pythonRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  if (typeof v === "number") return String(v);
  if (Array.isArray(v)) return "[" + v.map(pythonRepr).join(", ") + "]";
  return "{" +
    Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pythonRepr(k)}: ${pythonRepr(x)}`).join(
      ", ",
    ) + "}";
}

function pythonType(v: unknown): string {
  if (v === null) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "string") return "str";
  return Array.isArray(v) ? "list" : "dict";
}

function modelName(kind: GenRequest["kind"]): string {
  return kind === "chat" ? "ChatCompletionRequest" : "CompletionRequest";
}

/** trtllm-serve's usage, which always has `prompt_tokens_details.cached_tokens` (KV-cache reuse; 0 with the prefix cache off). */
function usage(ctx: StreamContext, completion: number) {
  const prompt = ctx.req.promptTokens;
  return {
    prompt_tokens: prompt,
    total_tokens: prompt + completion,
    completion_tokens: completion,
    prompt_tokens_details: { cached_tokens: ctx.cachedTokens ?? 0 },
  };
}

function chatHead(ctx: StreamContext) {
  return { id: "chatcmpl-" + hexId(), object: "chat.completion.chunk", created: unixNow(), model: ctx.model };
}

function contentChunk(ctx: StreamContext, c: TokenChunk) {
  if (ctx.req.kind === "chat") {
    const choice: Record<string, unknown> = {
      index: 0,
      delta: { content: textOf(c.tokens), reasoning_content: "" },
    };
    if (c.finish) choice.finish_reason = c.finish;
    const chunk: Record<string, unknown> = { ...chatHead(ctx), choices: [choice] };
    if (ctx.usage === "every") chunk.usage = usage(ctx, c.completionTokens);
    return chunk;
  }
  const ids = ctx.req.detokenize ? null : c.tokens.map((t) => t.id);
  return {
    id: "cmpl-" + hexId(),
    object: "text_completion",
    created: unixNow(),
    model: ctx.model,
    choices: [{
      index: 0,
      text: ctx.req.detokenize ? textOf(c.tokens) : "",
      token_ids: ids,
      logprobs: null,
      finish_reason: c.finish,
      stop_reason: null,
      avg_decoded_tokens_per_iter: null,
    }],
    usage: null,
  };
}

/** The trtllm-serve personality. */
export const trtllm: Personality = {
  engine: "trtllm",
  exact: { ignoreEos: true, minTokens: true },
  completionsDefaultMaxTokens: null,
  checkModel: () => null,
  checkFields(req) {
    const problems: string[] = [];
    if (req.model === undefined) {
      problems.push(
        `model\n  Field required [type=missing, input_value=${pythonRepr(req.body)}, input_type=dict]`,
      );
    }
    for (const [key, value] of Object.entries(req.body)) {
      if (ALLOWED[req.kind].has(key)) continue;
      problems.push(
        `${key}\n  Extra inputs are not permitted [type=extra_forbidden, input_value=${
          pythonRepr(value)
        }, input_type=${
          pythonType(value)
        }]\n    For further information visit https://errors.pydantic.dev/2.11/v/extra_forbidden`,
      );
    }
    if (problems.length === 0) return null;
    const head = `${problems.length} validation error${problems.length > 1 ? "s" : ""} for ${
      modelName(req.kind)
    }`;
    return error(400, [head, ...problems].join("\n"), "BadRequestError");
  },
  echoModel: (requested, served) => requested ?? served,
  newId: (kind) => (kind === "chat" ? "chatcmpl-" : "cmpl-") + hexId(),
  usageMode(req) {
    if (!usageOnByObject(req)) return "none";
    return req.kind === "chat" && req.streamOptions?.continuous_usage_stats !== false ? "every" : "final";
  },
  streamStart(ctx) {
    if (ctx.req.kind !== "chat") return [];
    const chunk: Record<string, unknown> = {
      ...chatHead(ctx),
      choices: [{ index: 0, delta: { role: "assistant" } }],
    };
    if (ctx.usage === "every") chunk.usage = usage(ctx, 0);
    // trtllm-serve writes its first chat event as f"data: {json} \n\n".
    return [sseRaw(JSON.stringify(chunk), " \n\n")];
  },
  streamTokens: (ctx, c) => [sseEvent(contentChunk(ctx, c))],
  streamEnd(ctx, done) {
    const out: string[] = [];
    if (ctx.usage !== "none") {
      out.push(
        sseEvent({
          ...chatHead(ctx),
          choices: [],
          usage: usage(ctx, done.completionTokens),
        }),
      );
    }
    out.push(SSE_DONE);
    return out;
  },
  // The generator's exception is re-raised: no JSON error, no [DONE], the stream just ends.
  streamError: () => ({ events: [], done: false }),
  sampleChunk: (ctx) => contentChunk(ctx, EMPTY_CHUNK),
  whole(ctx, a) {
    const u = usage(ctx, a.completionTokens);
    if (ctx.req.kind === "chat") {
      return {
        id: ctx.id,
        object: "chat.completion",
        created: ctx.created,
        model: ctx.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: textOf(a.tokens), reasoning_content: null, tool_calls: [] },
          logprobs: null,
          finish_reason: a.finish,
          stop_reason: null,
        }],
        usage: u,
      };
    }
    return {
      id: ctx.id,
      object: "text_completion",
      created: ctx.created,
      model: ctx.model,
      choices: [{
        index: 0,
        text: ctx.req.detokenize ? textOf(a.tokens) : "",
        token_ids: ctx.req.detokenize ? null : a.tokens.map((t) => t.id),
        logprobs: null,
        finish_reason: a.finish,
        stop_reason: null,
      }],
      usage: u,
    };
  },
  tooLong(prompt, maxTokens, maxModelLen) {
    if (prompt > maxModelLen || maxTokens === undefined) {
      return error(
        400,
        `The sum of prompt length (${
          prompt.toFixed(1)
        }), query length (0) should not exceed max_num_tokens (${maxModelLen})`,
        "BadRequestError",
      );
    }
    // llmapi/llm.py _check_arguments (max_seq_len check), words as the source writes them.
    return error(
      400,
      `The sum of prompt length (${
        prompt.toFixed(1)
      }) and query length (0) max_tokens (${maxTokens}) should not exceed max_seq_len (${maxModelLen})`,
      "BadRequestError",
    );
  },
  invalid: (p, kind) =>
    error(
      400,
      `1 validation error for ${modelName(kind)}\n${p.param ?? "body"}\n  ${p.message}`,
      "BadRequestError",
    ),
  faultError: (status) =>
    status === 429
      ? error(429, "Too many requests: the executor queue is full", "TooManyRequestsError")
      : status === 503
      ? error(503, "Service unavailable: the executor is not ready", "ServiceUnavailableError")
      : error(500, "Internal server error: CppExecutorError", "InternalServerError"),
  models: (o, created) => ({
    object: "list",
    data: [{ id: o.model, object: "model", created, owned_by: "tensorrt_llm" }],
  }),
  health: (ready) => ({ status: ready ? 200 : 503, body: "", json: false }),
};
