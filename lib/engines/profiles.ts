/**
 * Per-engine request profiles: which documented body fields make each server generate exactly
 * max_tokens, and how it can be asked to stream token ids (seed 002 profiles.py). The client
 * never reads the profile to count: it counts from whatever the stream carries.
 *
 * Sources, as the seed lists them: vLLM ChatCompletionRequest (ignore_eos, min_tokens,
 * return_token_ids >= 0.10.2, return_tokens_as_token_ids); SGLang protocol.py (ignore_eos,
 * min_tokens; return_token_ids is rejected with stream=true); llama.cpp tools/server (ignore_eos,
 * no min_tokens, ids only through logprobs, which cost decode time); TRT-LLM openai_protocol.py
 * (ignore_eos, min_tokens; no chat ids field, and unknown fields are a 400); generic = plain OpenAI.
 * @module
 */
import type { Api } from "../client/types.ts";

/** The engine kinds a profile exists for. */
export type EngineKind = "vllm" | "sglang" | "llamacpp" | "trtllm" | "generic";

/** The engine kinds, in help order. */
export const ENGINE_KINDS: readonly EngineKind[] = [
  "vllm",
  "sglang",
  "llamacpp",
  "trtllm",
  "generic",
] as const;

/** What `--engine-kind` accepts: a kind, or `auto` (detected from the server, see detect.ts). */
export type EngineKindChoice = EngineKind | "auto";

/** The `--engine-kind` choices, in help order (`auto` first: the default). */
export const ENGINE_KIND_CHOICES: readonly EngineKindChoice[] = ["auto", ...ENGINE_KINDS] as const;

/** How to ask for token ids: only where free (auto), also through logprobs, or never (off). */
export type TokenIdMode = "auto" | "logprobs" | "off";

/** The token-id modes, in help order. */
export const TOKEN_ID_MODES: readonly TokenIdMode[] = ["auto", "logprobs", "off"] as const;

/** Placeholder in {@link EngineProfile.exactLength} replaced by the request's max_tokens. */
export const MAX_TOKENS_PLACEHOLDER = "{n}";

/** Body fields per API. */
export type FieldsPerApi = Partial<Record<Api, Record<string, unknown>>>;

/** One engine's request profile. */
export interface EngineProfile {
  /** The engine kind. */
  name: EngineKind;
  /** Fields that force exactly max_tokens ("{n}" becomes max_tokens). */
  exactLength: Record<string, unknown>;
  /** Fields that stream token ids at (near) zero cost, per API. */
  idsFree: FieldsPerApi;
  /** Fields that stream token ids through logprobs (may slow decode), per API. */
  idsLogprobs: FieldsPerApi;
  /** Where ids and usage come from with this engine, for people reading a record. */
  note: string;
}

/** Every profile, by engine kind. */
export const PROFILES: Readonly<Record<EngineKind, EngineProfile>> = {
  vllm: {
    name: "vllm",
    exactLength: { ignore_eos: true, min_tokens: MAX_TOKENS_PLACEHOLDER },
    idsFree: { chat: { return_token_ids: true }, completions: { return_token_ids: true } },
    idsLogprobs: {
      chat: { logprobs: true, top_logprobs: 0, return_tokens_as_token_ids: true },
      completions: { logprobs: 0, return_tokens_as_token_ids: true },
    },
    note: "token ids from choices[].token_ids (return_token_ids, vLLM >= 0.10.2)",
  },
  sglang: {
    name: "sglang",
    exactLength: { ignore_eos: true, min_tokens: MAX_TOKENS_PLACEHOLDER },
    idsFree: {},
    idsLogprobs: {},
    note:
      "return_token_ids is not supported with streaming; tokens counted from usage unless the server adds " +
      "sglext.output_ids",
  },
  llamacpp: {
    name: "llamacpp",
    exactLength: { ignore_eos: true },
    idsFree: {},
    idsLogprobs: { chat: { logprobs: true, top_logprobs: 1 }, completions: { logprobs: 1 } },
    note: "no min_tokens; ids only through logprobs (costs decode time), else usage",
  },
  trtllm: {
    name: "trtllm",
    exactLength: { ignore_eos: true, min_tokens: MAX_TOKENS_PLACEHOLDER },
    idsFree: {},
    idsLogprobs: {},
    note: "completions stream choices may carry token_ids; chat has none, so usage is used",
  },
  generic: {
    name: "generic",
    exactLength: {},
    idsFree: {},
    idsLogprobs: {},
    note: "standard OpenAI fields only: no exact-length control",
  },
};

/** Mock personalities whose name differs from the client profile that talks to them. */
const PERSONALITY_TO_PROFILE: Readonly<Record<string, EngineKind>> = { openai: "generic" };

/**
 * The profile to use against a mock personality (`ik mock --engine X`): the same name, except
 * "openai", which real OpenAI-compatible clients reach with plain fields ("generic").
 * @throws RangeError for a name that is neither a personality nor a profile
 */
export function profileForPersonality(personality: string): EngineKind {
  const mapped = PERSONALITY_TO_PROFILE[personality];
  if (mapped) return mapped;
  if (isEngineKind(personality)) return personality;
  throw new RangeError(`no engine profile for personality '${personality}'`);
}

/** Type guard for {@link EngineKind}. */
export function isEngineKind(s: string): s is EngineKind {
  return (ENGINE_KINDS as readonly string[]).includes(s);
}
