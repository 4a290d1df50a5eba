/**
 * The flags and parser of `ik probe`, and their parsed type. Parser only: the request is probe.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { MAX_DURATION_S } from "../cli/limits.ts";
import { APIS } from "../client/types.ts";
import { ENGINE_KIND_CHOICES, TOKEN_ID_MODES } from "../engines/profiles.ts";
import { pathValue } from "../cli/path_value.ts";

const flags = () => ({
  baseUrl: option("--base-url", string({ metavar: "URL" }), {
    description: message`Server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine).`,
  }),
  model: option("--model", string({ metavar: "MODEL" }), {
    description: message`Model name the server expects.`,
  }),
  prompt: optional(
    option("--prompt", string({ metavar: "TEXT" }), {
      description: message`Prompt text (one user message).`,
    }),
  ),
  prompts: optional(
    option("--prompts", pathValue("FILE"), {
      description: message`Prompt set (JSONL or .jsonl.gz); needs --id.`,
    }),
  ),
  id: optional(option("--id", string({ metavar: "ID" }), { description: message`Prompt id in --prompts.` })),
  engineKind: withDefault(
    option("--engine-kind", choice(ENGINE_KIND_CHOICES, { metavar: "KIND" }), {
      description:
        message`Server type: picks the body fields for exact length and token ids. auto = ask the server (/v1/models owned_by, version endpoints, /metrics names), else generic.`,
    }),
    "auto" as const,
  ),
  api: withDefault(
    option("--api", choice(APIS, { metavar: "API" }), { description: message`OpenAI endpoint to call.` }),
    "chat" as const,
  ),
  maxTokens: optional(
    option("--max-tokens", integer({ min: 1, metavar: "N" }), {
      description: message`Tokens to generate (default: the prompt's max_tokens, else 256).`,
    }),
  ),
  tokenIds: withDefault(
    option("--token-ids", choice(TOKEN_ID_MODES, { metavar: "MODE" }), {
      description:
        message`auto = ask for streamed ids where free; logprobs = also through logprobs (can slow decode); off = never.`,
    }),
    "auto" as const,
  ),
  apiKeyEnv: optional(
    option("--api-key-env", string({ metavar: "NAME" }), {
      description: message`Environment variable holding the API key (sent as a Bearer token).`,
    }),
  ),
  timeoutS: withDefault(
    option("--timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
      description: message`Whole-request limit, seconds (at most ${text(String(MAX_DURATION_S))}).`,
    }),
    600,
  ),
  idleTimeoutS: withDefault(
    option("--idle-timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
      description: message`Limit on a silence with no byte received, seconds (at most ${
        text(String(MAX_DURATION_S))
      }).`,
    }),
    60,
  ),
  extraBody: optional(
    option("--extra-body", string({ metavar: "JSON" }), {
      description: message`JSON object merged last into the request body.`,
    }),
  ),
  json: option("--json", { description: message`Print the row as one JSON object.` }),
});

/** Builds the parser for `ik probe` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const probeCommand = () => command("probe", object({ cmd: constant("probe" as const), ...flags() }), {
  description:
    message`Send one streamed request and print its measured row (TTFT, TPOT, tokens and how they were counted, failure kind).`,
});

/** The parsed flags of `ik probe`. */
export type ProbeFlags = InferValue<ReturnType<typeof probeCommand>>;
