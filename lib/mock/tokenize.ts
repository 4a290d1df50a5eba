/**
 * The mock's tokenize endpoints, in each engine's shape (not in MOCK.md, which is silent on them;
 * the counts follow its pseudo-tokenizer, so a set sized through them is exact against the mock's
 * own usage.prompt_tokens):
 *
 * - vllm: `POST /tokenize` `{model?, prompt, add_special_tokens?}` or `{model?, messages, ...}` →
 *   `{count, max_model_len, tokens}`; messages count as a chat request does (Σ (words + 4) + 3);
 *   a model other than the served one gets the personality's unknown-model error.
 * - sglang: the same at `POST /v1/tokenize` and `/tokenize`; exactly one of prompt or messages.
 * - llamacpp: `POST /apply-template` `{messages}` → `{prompt}` (a text whose words count as the chat
 *   request), `POST /tokenize` `{content, add_special?, with_pieces?}` → `{tokens}`.
 * - trtllm, openai: none (404), as those servers.
 *
 * The mock has no BOS token, so add_special adds nothing.
 * @module
 */
import type { Env, Hono } from "hono";
import { readBody, tooLargeResponse } from "./body.ts";
import { jsonResponse } from "./generation.ts";
import type { MockOptions } from "./options.ts";
import type { Personality } from "./personality.ts";
import { type ChatMessageLike, chatPromptTokens, contentText, countTokens, promptTokenIds } from "./tokens.ts";

function badRequest(engine: string, message: string): Response {
  return engine === "llamacpp"
    ? jsonResponse(400, { error: { code: 400, message, type: "invalid_request_error" } })
    : jsonResponse(400, { object: "error", message, type: "BadRequestError", param: null, code: 400 });
}

async function jsonBody(request: Request): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; response: Response }> {
  const read = await readBody(request);
  if (!read.ok) return { ok: false, response: tooLargeResponse() };
  try {
    const v = JSON.parse(read.text);
    if (v && typeof v === "object" && !Array.isArray(v)) return { ok: true, body: v as Record<string, unknown> };
  } catch { /* below */ }
  return { ok: false, response: jsonResponse(400, { detail: "the body must be a JSON object" }) };
}

function validMessages(v: unknown): v is ChatMessageLike[] {
  return Array.isArray(v) && v.length > 0 && v.every((m) => m && typeof m === "object");
}

/** The chat request rendered as text whose pseudo-token count is the chat prompt's: 4 per message, 3 for the reply header. */
export function renderChatTemplate(messages: readonly ChatMessageLike[]): string {
  const parts = messages.map((m) => {
    const role = String(m.role ?? "user").replace(/\s+/g, "_") || "user";
    const text = contentText(m.content);
    return `<|im_start|> ${role} | ${text}${text ? " " : ""}<|im_end|>`;
  });
  return [...parts, "<|im_start|> assistant |"].join("\n");
}

/** Registers the personality's tokenize routes (none for trtllm and openai). */
export function registerTokenize<E extends Env>(app: Hono<E>, o: MockOptions, p: Personality): string[] {
  const engine = o.engine;
  if (engine === "llamacpp") {
    app.post("/apply-template", async (c) => {
      const r = await jsonBody(c.req.raw);
      if (!r.ok) return r.response;
      if (!validMessages(r.body.messages)) return badRequest(engine, "'messages' is required and must be a non-empty list");
      return jsonResponse(200, { prompt: renderChatTemplate(r.body.messages) });
    });
    app.post("/tokenize", async (c) => {
      const r = await jsonBody(c.req.raw);
      if (!r.ok) return r.response;
      const content = r.body.content;
      if (typeof content !== "string") return jsonResponse(200, { tokens: [] });
      const ids = promptTokenIds(content, countTokens(content));
      if (r.body.with_pieces === true) {
        const words = content.match(/\S+/g) ?? [];
        return jsonResponse(200, { tokens: ids.map((id, i) => ({ id, piece: (i ? " " : "") + words[i] })) });
      }
      return jsonResponse(200, { tokens: ids });
    });
    return ["/apply-template", "/tokenize"];
  }
  if (engine !== "vllm" && engine !== "sglang") return [];
  const handler = async (request: Request) => {
    const r = await jsonBody(request);
    if (!r.ok) return r.response;
    const { prompt, messages, model } = r.body;
    // vLLM checks the model name here as on its generation routes (SGLang takes any).
    const wrong = p.checkModel(typeof model === "string" ? model : undefined, o.model);
    if (wrong) return jsonResponse(wrong.status, wrong.body);
    const hasPrompt = prompt !== undefined && prompt !== null;
    const hasMessages = messages !== undefined && messages !== null;
    if (hasPrompt === hasMessages) return badRequest(engine, "Exactly one of 'prompt' or 'messages' must be provided.");
    let text: string;
    let count: number;
    if (hasMessages) {
      if (!validMessages(messages)) return badRequest(engine, "'messages' must be a non-empty list of objects");
      text = renderChatTemplate(messages);
      count = chatPromptTokens(messages);
    } else {
      if (typeof prompt !== "string") return badRequest(engine, "'prompt' must be a string");
      text = prompt;
      count = countTokens(prompt);
    }
    return jsonResponse(200, { count, max_model_len: o.maxModelLen, tokens: promptTokenIds(text, count) });
  };
  const paths = engine === "sglang" ? ["/v1/tokenize", "/tokenize"] : ["/tokenize"];
  for (const path of paths) app.post(path, (c) => handler(c.req.raw));
  return paths;
}
