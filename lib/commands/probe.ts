/**
 * `ik probe`: one streamed request through the real client, printed as its measured row (TTFT,
 * TPOT, e2e, tokens and how they were counted, tokens per event, finish reason, failure kind).
 * Exit 0 when the request succeeded, 1 when it failed, 69 when the server could not be reached,
 * 64 for usage errors, 65 for a malformed prompt set.
 * @module
 */
import Table from "cli-table3";
import pc from "picocolors";
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { formatErrorLine, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import {
  APIS,
  isUnreachable,
  parseEndpoint,
  type RequestRow,
  requestRow,
  streamCompletion,
} from "../client/mod.ts";
import { buildBody, type ChatMessage, ENGINE_KINDS, TOKEN_ID_MODES } from "../engines/mod.ts";
import { loadPromptSet } from "../prompts/mod.ts";
import type { CommandContext } from "./context.ts";

const DEFAULT_PROMPT = "Write a short story about a fox who learns to read.";
const DEFAULT_MAX_TOKENS = 256;

const flags = {
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
    option("--prompts", string({ metavar: "FILE" }), {
      description: message`Prompt set (JSONL or .jsonl.gz); needs --id.`,
    }),
  ),
  id: optional(option("--id", string({ metavar: "ID" }), { description: message`Prompt id in --prompts.` })),
  engineKind: withDefault(
    option("--engine-kind", choice(ENGINE_KINDS, { metavar: "KIND" }), {
      description: message`Server type: picks the body fields for exact length and token ids.`,
    }),
    "generic" as const,
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
    option("--timeout-s", float({ min: 0.001, metavar: "S" }), {
      description: message`Whole-request limit, seconds.`,
    }),
    600,
  ),
  idleTimeoutS: withDefault(
    option("--idle-timeout-s", float({ min: 0.001, metavar: "S" }), {
      description: message`Limit on a silence with no byte received, seconds.`,
    }),
    60,
  ),
  extraBody: optional(
    option("--extra-body", string({ metavar: "JSON" }), {
      description: message`JSON object merged last into the request body.`,
    }),
  ),
  json: option("--json", { description: message`Print the row as one JSON object.` }),
};

/** Parser for `ik probe`. */
export const probeCommand = command("probe", object({ cmd: constant("probe" as const), ...flags }), {
  description:
    message`Send one streamed request and print its measured row (TTFT, TPOT, tokens and how they were counted, failure kind).`,
});

/** The parsed flags of `ik probe`. */
export type ProbeFlags = InferValue<typeof probeCommand>;

interface ChosenPrompt {
  id: string | null;
  bucket: string | null;
  messages: ChatMessage[];
  maxTokens: number | null;
}

async function choosePrompt(f: ProbeFlags): Promise<ChosenPrompt> {
  if (f.prompt !== undefined && f.prompts !== undefined) {
    throw usageError("--prompt", "--prompt and --prompts cannot be used together", "give one of them");
  }
  if (f.prompts === undefined) {
    if (f.id !== undefined) {
      throw usageError("--id", "--id needs --prompts FILE", "add --prompts or drop --id");
    }
    return {
      id: null,
      bucket: null,
      messages: [{ role: "user", content: f.prompt ?? DEFAULT_PROMPT }],
      maxTokens: null,
    };
  }
  if (f.id === undefined) {
    throw usageError("--prompts", "missing --id: which prompt of the set to send", "add --id ID");
  }
  const set = await loadPromptSet(f.prompts);
  const p = set.prompts.find((x) => x.id === f.id);
  if (!p) throw usageError("--id", `no prompt '${f.id}' in ${set.name}`, "use an id from the file");
  return { id: p.id, bucket: p.bucket, messages: p.messages.map((m) => ({ ...m })), maxTokens: p.maxTokens };
}

function parseExtraBody(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw usageError(
      "--extra-body",
      `not valid JSON (${(e as Error).message})`,
      "pass a JSON object, e.g. '{\"top_p\":0.9}'",
    );
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw usageError("--extra-body", "must be a JSON object", "pass a JSON object, e.g. '{\"top_p\":0.9}'");
  }
  return v as Record<string, unknown>;
}

/** Runs `ik probe`: one request, printed as its row. Usage (64) and data (65) errors are thrown as IkError. */
export async function runProbe(ctx: CommandContext, f: ProbeFlags): Promise<number> {
  const ep = parseEndpoint(f.baseUrl);
  const extra = parseExtraBody(f.extraBody);
  let apiKey: string | undefined;
  if (f.apiKeyEnv !== undefined) {
    apiKey = ctx.runtime.env(f.apiKeyEnv);
    if (!apiKey) {
      throw usageError(
        "--api-key-env",
        `environment variable ${f.apiKeyEnv} is not set or empty`,
        `export ${f.apiKeyEnv}=... or drop the flag`,
      );
    }
  }
  const chosen = await choosePrompt(f);
  const maxTokens = f.maxTokens ?? chosen.maxTokens ?? DEFAULT_MAX_TOKENS;
  const { body, asked } = buildBody(f.api, f.engineKind, f.model, chosen.messages, maxTokens, {
    tokenIds: f.tokenIds,
    extra,
  });
  const result = await streamCompletion(ep, f.api, body, {
    signal: ctx.signal,
    apiKey,
    timeoutMs: f.timeoutS * 1000,
    idleTimeoutMs: f.idleTimeoutS * 1000,
    id: chosen.id ?? "probe",
    bucket: chosen.bucket,
  });
  const row = requestRow(result, {
    engine_kind: f.engineKind,
    api: f.api,
    model: f.model,
    max_tokens: maxTokens,
    asked,
  });
  if (ctx.json) ctx.out(JSON.stringify(row) + "\n");
  else {ctx.out(
      formatProbe(
        row,
        result.text + (result.toolArguments ? ` [tool arguments: ${result.toolArguments}]` : ""),
      ),
    );}
  if (isUnreachable(result)) {
    ctx.err(
      formatErrorLine(
        "probe",
        `server at ${ep.origin} not reachable (${result.error})`,
        "start it, or check --base-url",
      ) + "\n",
    );
    return ExitCode.UNAVAILABLE;
  }
  return result.ok ? ExitCode.OK : ExitCode.VERDICT_NEGATIVE;
}

function ms(v: number | null, unit = "ms"): string {
  return v === null ? "-" : `${v.toFixed(2)} ${unit}`;
}

function dash(v: unknown): string {
  return v === null || v === undefined ? "-" : String(v);
}

/** The human form of a probe row: a two-column table and the start of the text. */
export function formatProbe(row: RequestRow, text: string): string {
  const t = new Table({ style: { head: [], border: [] } });
  const asked = row.asked as {
    exact_length: string[] | null;
    token_ids: { via: string; fields: string[] } | null;
  } | undefined;
  const verdict = row.ok ? pc.green("ok") : pc.red(`FAILED (${row.error_kind})`);
  const lines: [string, string][] = [
    ["result", verdict],
    ...(row.ok ? [] : [["error", String(row.error)] as [string, string]]),
    ["HTTP status", row.status ? String(row.status) : "-"],
    ["TTFT", row.ttft_ms === null ? "-" : `${ms(row.ttft_ms)} (includes connection set-up)`],
    ["TPOT", ms(row.tpot_ms, "ms/token")],
    ["decode", row.decode_tok_s === null ? "-" : `${row.decode_tok_s.toFixed(1)} tok/s`],
    ["end-to-end", ms(row.e2e_ms)],
    ["tokens", row.n_tokens === null ? "-" : `${row.n_tokens} (${row.token_count_method})`],
    [
      "ids / usage",
      `${dash(row.n_ids)} / ${dash(row.n_usage)}${
        row.count_mismatch ? pc.yellow(`  mismatch: ${row.count_mismatch}`) : ""
      }`,
    ],
    [
      "token events",
      `${row.n_token_events} (first event ${dash(row.k_first)} token(s), max ${
        dash(row.tokens_per_event_max)
      } ids per event)`,
    ],
    ["finish reason", dash(row.finish_reason)],
    ["ended with [DONE]", row.ended_with_done ? "yes" : "no"],
    [
      "asked",
      asked
        ? `exact length: ${asked.exact_length?.join(",") ?? "none"}; token ids: ${
          asked.token_ids ? `${asked.token_ids.fields.join(",")} (${asked.token_ids.via})` : "none"
        }`
        : "-",
    ],
  ];
  for (const [k, v] of lines) t.push([k, v]);
  const head = `ik probe: ${dash(row.engine_kind)} profile, ${dash(row.api)} API, model ${
    dash(row.model)
  }, max_tokens ${dash(row.max_tokens)}\n`;
  const snippet = text.length > 240 ? text.slice(0, 239) + "…" : text;
  return head + t.toString() + "\n" + (snippet ? `text: ${JSON.stringify(snippet)}\n` : "");
}
