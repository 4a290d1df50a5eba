/**
 * `--tokenize-via URL`: a server's own tokenizer, asked over HTTP, so synthetic prompts can be
 * sized to the exact `usage.prompt_tokens` that server will report (chat template included) on a
 * host with no tokenizer file. The shapes, read from each engine's source:
 *
 * - vLLM (`vllm/entrypoints/openai/protocol.py` TokenizeChatRequest / TokenizeCompletionRequest,
 *   served by `serving_tokenization.py` at `POST /tokenize`): `{model, messages,
 *   add_generation_prompt: true, add_special_tokens: false}` or `{model, prompt,
 *   add_special_tokens}` → `{count, max_model_len, tokens}`.
 * - SGLang (`python/sglang/srt/entrypoints/openai/serving_tokenize.py`, `POST /v1/tokenize` and
 *   `/tokenize`): exactly one of `prompt` or `messages`; `messages` is validated as a chat request
 *   and tokenized as one (template included) → `{tokens, count, max_model_len}`. Older builds take
 *   `prompt` only (a 4xx here).
 * - llama.cpp (`tools/server`, `POST /apply-template` `{messages}` → `{prompt}`, then
 *   `POST /tokenize` `{content, add_special, parse_special}` → `{tokens}`): a chat request is
 *   the template's text tokenized with special tokens added (BOS), as the chat path does.
 *
 * Every call is bounded (timeout, capped body); an unreachable server or one that cannot tokenize
 * is one line, exit 69.
 * @module
 */
import { unavailableError } from "../cli/errors.ts";
import { type Endpoint, rootUrl } from "../client/endpoint.ts";
import { listModels } from "../client/models.ts";
import { readCappedText } from "../client/read_capped.ts";
import { detectEngine } from "../engines/detect.ts";
import { redactUrl, scrubSecret } from "../evidence/redact.ts";
import { scrubText } from "../evidence/scrub.ts";
import { TOKENIZE_ENGINES, type TokenizeEngine } from "./engines.ts";


/** A chat message as sent. */
export interface CountMessage {
  role: string;
  content: string;
}

/** Counts tokens with a server's own tokenizer. */
export interface RemoteCounter {
  engine: TokenizeEngine;
  /** How the engine was chosen (`flag`, or detection's evidence). */
  engineSource: string;
  /** The served model named in the calls (vLLM/SGLang), or null. */
  model: string | null;
  /** The prompt tokens a chat request with these messages will report (template included). */
  countChat(messages: readonly CountMessage[]): Promise<number>;
  /** The prompt tokens a completions request with this prompt will report (special tokens added as the engine does). */
  countPrompt(text: string): Promise<number>;
  /** Tokens of a bare text: no template, no special tokens (a shared prefix's own length). */
  countText(text: string): Promise<number>;
  /** Tokenize calls made so far (each HTTP request counts). */
  calls(): number;
}

/** Options for {@link openRemoteCounter}. */
export interface RemoteCounterOptions {
  /** `auto` detects from the server (as `--engine-kind auto`). */
  engine?: TokenizeEngine | "auto";
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  apiKey?: string;
  /** Limit per call in ms (default 30 000: a long prompt takes a while on a busy server). */
  timeoutMs?: number;
  /** The served model to name in the calls (default: the first one `/v1/models` lists). */
  model?: string;
  /** Flag named in errors (default `--tokenize-via`). */
  flag?: string;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Connects to a server's tokenizer: checks it answers, picks the engine (flag or detection) and
 * the model, and proves the tokenize route works with one call.
 * @throws IkError 69 when the server is unreachable, is not one of the engines, or cannot tokenize
 */
export async function openRemoteCounter(ep: Endpoint, opts: RemoteCounterOptions = {}): Promise<RemoteCounter> {
  const flag = opts.flag ?? "--tokenize-via";
  const shown = redactUrl(ep.origin + ep.prefix);
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const models = await listModels(ep, { fetch: opts.fetch, apiKey: opts.apiKey, timeoutMs: Math.min(timeoutMs, 10_000) });
  if (models.status === 0) {
    throw unavailableError(`${flag} ${shown}`, `cannot reach the server (${models.error ?? "no answer"})`);
  }
  let engine: TokenizeEngine;
  let engineSource: string;
  if (opts.engine && opts.engine !== "auto") {
    engine = opts.engine;
    engineSource = "flag";
  } else {
    const d = await detectEngine(ep, { fetch: opts.fetch, apiKey: opts.apiKey, models });
    if (!(TOKENIZE_ENGINES as readonly string[]).includes(d.kind)) {
      throw unavailableError(
        `${flag} ${shown}`,
        `the server looks like '${d.kind}' (${d.detail}), and ik knows the tokenize endpoints of vllm, sglang and llamacpp only`,
        "name it with --tokenize-engine vllm|sglang|llamacpp, or use --tokenizer FILE",
      );
    }
    engine = d.kind as TokenizeEngine;
    engineSource = `${d.source}: ${d.detail}`;
  }
  const model = opts.model ?? models.models[0]?.id ?? null;
  let calls = 0;
  /** Server text as it may be shown: the API key and every scrubber rule applied BEFORE it is cut. */
  const shownText = (text: string, max: number): string => {
    const flat = scrubText(scrubSecret(text, opts.apiKey)).replace(/\s+/g, " ").trim();
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  };

  async function post(path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    calls++;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    let status = 0;
    let text = "";
    try {
      const res = await doFetch(rootUrl(ep, path), {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      const read = await readCappedText(res, MAX_BODY_BYTES);
      text = read.text;
    } catch (e) {
      throw unavailableError(`${flag} ${shown}${path}`, `no answer (${shownText((e as Error).message.split("\n")[0], 300)})`);
    }
    if (status !== 200) {
      const why = shownText(text, 200);
      throw unavailableError(
        `${flag} ${shown}${path}`,
        `the ${engine} server cannot tokenize: HTTP ${status}${why ? ` ${why}` : ""}`,
        engine === "sglang" && status >= 400 && status < 500 && "messages" in body
          ? "this SGLang build's /tokenize takes no messages (newer SGLang does); use --tokenizer FILE or omit --tokenize-via"
          : "check --tokenize-engine and the URL, or use --tokenizer FILE",
      );
    }
    try {
      const v = JSON.parse(text);
      if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch { /* below */ }
    throw unavailableError(`${flag} ${shown}${path}`, `the answer is not a JSON object (${shownText(text, 80)})`);
  }

  const countOf = (v: Record<string, unknown>, path: string): number => {
    if (typeof v.count === "number" && Number.isInteger(v.count) && v.count >= 0) return v.count;
    if (Array.isArray(v.tokens)) return v.tokens.length;
    throw unavailableError(`${flag} ${shown}${path}`, "the answer has neither 'count' nor a 'tokens' list");
  };
  const withModel = (b: Record<string, unknown>) => (model ? { model, ...b } : b);

  const llama = {
    async tokenize(content: string, addSpecial: boolean): Promise<number> {
      return countOf(await post("/tokenize", { content, add_special: addSpecial, parse_special: true }), "/tokenize");
    },
    async template(messages: readonly CountMessage[]): Promise<string> {
      const v = await post("/apply-template", { messages });
      if (typeof v.prompt !== "string") throw unavailableError(`${flag} ${shown}/apply-template`, "the answer has no 'prompt' text");
      return v.prompt;
    },
  };
  const tokenizePath = engine === "sglang" ? "/v1/tokenize" : "/tokenize";

  const counter: RemoteCounter = {
    engine,
    engineSource,
    model,
    calls: () => calls,
    async countChat(messages) {
      if (engine === "llamacpp") return llama.tokenize(await llama.template(messages), true);
      const body = engine === "vllm"
        ? withModel({ messages, add_generation_prompt: true, add_special_tokens: false })
        : withModel({ messages });
      return countOf(await post(tokenizePath, body), tokenizePath);
    },
    async countPrompt(text) {
      if (engine === "llamacpp") return llama.tokenize(text, true);
      return countOf(await post(tokenizePath, withModel({ prompt: text, add_special_tokens: true })), tokenizePath);
    },
    async countText(text) {
      if (engine === "llamacpp") return llama.tokenize(text, false);
      return countOf(await post(tokenizePath, withModel({ prompt: text, add_special_tokens: false })), tokenizePath);
    },
  };
  // One call now, so a server without the route fails before any work, with its answer.
  await counter.countText("hello");
  return counter;
}
