/**
 * Engine request profiles (vllm, sglang, llamacpp, trtllm, generic) and the body builder.
 *
 * @example
 * ```ts
 * import { buildBody, profileForPersonality } from "./mod.ts";
 * const kind = profileForPersonality("openai"); // "generic"
 * const { body } = buildBody("completions", kind, "m", [{ role: "user", content: "Paris is" }], 8);
 * ```
 * @module
 */
export {
  ENGINE_KIND_CHOICES,
  ENGINE_KINDS,
  type EngineKind,
  type EngineKindChoice,
  type EngineProfile,
  type FieldsPerApi,
  isEngineKind,
  MAX_TOKENS_PLACEHOLDER,
  profileForPersonality,
  PROFILES,
  TOKEN_ID_MODES,
  type TokenIdMode,
} from "./profiles.ts";
export {
  type AskedFor,
  buildBody,
  type BuildBodyOptions,
  type BuiltBody,
  type ChatMessage,
  completionPrompt,
} from "./build_body.ts";
export {
  DETECT_TIMEOUT_MS,
  type DetectedEngine,
  detectEngine,
  engineVersion,
  type EngineVersion,
  type DetectOptions,
  type EngineKindSource,
  kindFromMetricNames,
  kindFromOwnedBy,
} from "./detect.ts";
