/**
 * `ik probe`: one streamed request through the real client, printed as its measured row (TTFT,
 * TPOT, e2e, tokens and how they were counted, tokens per event, finish reason, failure kind).
 * Exit 0 when the request succeeded, 1 when it failed, 69 when the server could not be reached,
 * 64 for usage errors, 65 for a malformed prompt set.
 * @module
 */
import Table from "cli-table3";
import pc from "picocolors";
import { formatErrorLine, unavailableError, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import {
  type Endpoint,
  isUnreachable,
  listModels,
  type ModelsAnswer,
  parseEndpoint,
  type RequestRow,
  requestRow,
  streamCompletion,
  type StreamOptions,
} from "../client/mod.ts";
import {
  buildBody,
  type ChatMessage,
  type DetectedEngine,
  detectEngine,
} from "../engines/mod.ts";
import { loadPromptSet } from "../prompts/mod.ts";
import { escapeTerminal, escapeTerminalLine } from "../report/escape.ts";
import { cleanStrings, makeSanitizer, type Sanitize, sanitizedError } from "../report/sanitize.ts";
import { startWaitLine } from "../report/terminal/wait_line.ts";
import type { CommandContext } from "./context.ts";
import { checkExtraBody } from "../engines/extra_body.ts";
import type { ProbeFlags } from "./probe_flags.ts";

const DEFAULT_PROMPT = "Write a short story about a fox who learns to read.";
const DEFAULT_MAX_TOKENS = 256;

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

/** Runs `ik probe`: one request, printed as its row. Usage (64) and data (65) errors are thrown as IkError. */
export async function runProbe(ctx: CommandContext, f: ProbeFlags): Promise<number> {
  let apiKey: string | undefined;
  if (f.apiKeyEnv !== undefined) apiKey = ctx.runtime.env(f.apiKeyEnv) || undefined;
  const clean = makeSanitizer(f.baseUrl, apiKey);
  try {
    return await probe(ctx, f, apiKey, clean);
  } catch (e) {
    throw sanitizedError(e, clean);
  }
}

const MODELS_TIMEOUT_MS = 5000;

async function probe(
  ctx: CommandContext,
  f: ProbeFlags,
  apiKey: string | undefined,
  clean: Sanitize,
): Promise<number> {
  const ep = parseEndpoint(f.baseUrl);
  if (ep.note) ctx.err(`ik probe: note: ${escapeTerminalLine(clean(ep.note))}\n`);
  const extra = checkExtraBody(f.extraBody);
  if (f.apiKeyEnv !== undefined && !apiKey) {
    throw usageError(
      "--api-key-env",
      `environment variable ${f.apiKeyEnv} is not set or empty`,
      `export ${f.apiKeyEnv}=... or drop the flag`,
    );
  }
  const chosen = await choosePrompt(f);
  const models = await listModels(ep, { signal: ctx.signal, apiKey, timeoutMs: MODELS_TIMEOUT_MS });
  checkModelServed(ep, f.model, models, clean);
  const engine = await resolveEngine(ep, f, models, apiKey, ctx.signal);
  const fromExtra = extra?.max_tokens;
  const maxTokens = typeof fromExtra === "number" && Number.isInteger(fromExtra) && fromExtra >= 1
    ? fromExtra
    : f.maxTokens ?? chosen.maxTokens ?? DEFAULT_MAX_TOKENS;
  const { body, asked } = buildBody(f.api, engine.kind, f.model, chosen.messages, maxTokens, {
    tokenIds: f.tokenIds,
    extra,
  });
  const waitLine = ctx.runtime.isTerminal("stderr")
    ? startWaitLine(
      (t) => ctx.err(t),
      `waiting for response headers from ${escapeTerminalLine(clean(ep.baseUrl))}`,
    )
    : null;
  const streamOpts: StreamOptions = {
    signal: ctx.signal,
    apiKey,
    timeoutMs: f.timeoutS * 1000,
    idleTimeoutMs: f.idleTimeoutS * 1000,
    id: chosen.id ?? "probe",
    bucket: chosen.bucket,
    onHeaders: () => waitLine?.stop(),
  };
  let result;
  try {
    result = await streamCompletion(ep, f.api, body, streamOpts);
  } finally {
    waitLine?.stop();
  }
  // The row describes the body actually sent (--extra-body may have overridden any field).
  const row = requestRow(result, {
    engine_kind: engine.kind,
    engine_kind_source: engine.source,
    engine_kind_detail: engine.detail,
    api: f.api,
    model: typeof body.model === "string" ? body.model : f.model,
    max_tokens: body.max_tokens ?? null,
    asked,
  });
  if (ctx.json) ctx.out(JSON.stringify(cleanStrings(row, clean)) + "\n");
  else {
    const generated = result.text +
      (result.toolArguments ? ` [tool arguments: ${result.toolArguments}]` : "");
    ctx.out(formatProbe(row, clean(generated), clean));
  }
  if (isUnreachable(result)) {
    ctx.err(
      escapeTerminalLine(clean(formatErrorLine(
        "probe",
        `server at ${ep.origin} not reachable (${result.error})`,
        "start it, or check --base-url",
      ))) + "\n",
    );
    return ExitCode.UNAVAILABLE;
  }
  return result.ok ? ExitCode.OK : ExitCode.VERDICT_NEGATIVE;
}

/** The most served model names listed in the wrong-model error. */
const MAX_LISTED_MODELS = 10;

/** Fails (69) when /v1/models answered a list that does not hold the model; silent when it did not answer. */
function checkModelServed(ep: Endpoint, model: string, models: ModelsAnswer, clean: Sanitize): void {
  if (!models.ok || models.models.length === 0) return;
  const ids = models.models.map((m) => m.id);
  if (ids.includes(model)) return;
  const shown = ids.slice(0, MAX_LISTED_MODELS).map((id) => `'${escapeTerminalLine(clean(id))}'`).join(", ");
  const more = ids.length > MAX_LISTED_MODELS ? ` and ${ids.length - MAX_LISTED_MODELS} more` : "";
  throw unavailableError(
    "--model",
    `'${escapeTerminalLine(clean(model))}' is not served by ${clean(ep.baseUrl)}; it serves ${shown}${more}`,
    "pass one of those to --model",
  );
}

async function resolveEngine(
  ep: Endpoint,
  f: ProbeFlags,
  models: ModelsAnswer,
  apiKey: string | undefined,
  signal: AbortSignal,
): Promise<DetectedEngine> {
  if (f.engineKind !== "auto") return { kind: f.engineKind, source: "flag", detail: "--engine-kind" };
  if (!models.ok && models.errorKind === "network") {
    return { kind: "generic", source: "fallback", detail: "server not reachable" };
  }
  return await detectEngine(ep, { apiKey, signal, models });
}

function ms(v: number | null, unit = "ms"): string {
  return v === null ? "-" : `${v.toFixed(2)} ${unit}`;
}

function dash(v: unknown): string {
  return v === null || v === undefined ? "-" : String(v);
}

/**
 * The human form of a probe row: a two-column table and the start of the text. Server text (error,
 * model, finish reason, generated text) is passed through `clean` and has terminal escapes made visible.
 * @param row the row (as printed with --json)
 * @param text the generated text
 * @param clean redaction applied to every server-supplied string (default: none)
 */
export function formatProbe(row: RequestRow, text: string, clean: (s: string) => string = (s) => s): string {
  const safe = (v: unknown) => escapeTerminalLine(clean(dash(v)));
  const t = new Table({ style: { head: [], border: [] } });
  const asked = row.asked as {
    exact_length: string[] | null;
    token_ids: { via: string; fields: string[] } | null;
  } | undefined;
  const verdict = row.ok ? pc.green("ok") : pc.red(`FAILED (${safe(row.error_kind)})`);
  const lines: [string, string][] = [
    ["result", verdict],
    ...(row.ok ? [] : [["error", safe(row.error)] as [string, string]]),
    ["HTTP status", row.status ? String(row.status) : "-"],
    ["TTFT", row.ttft_ms === null ? "-" : `${ms(row.ttft_ms)} (includes connection set-up)`],
    ["TPOT", ms(row.tpot_ms, "ms/token")],
    ["decode", row.decode_tok_s === null ? "-" : `${row.decode_tok_s.toFixed(1)} tok/s`],
    ["end-to-end", ms(row.e2e_ms)],
    ["tokens", row.n_tokens === null ? "-" : `${row.n_tokens} (${row.token_count_method})`],
    [
      "ids / usage",
      `${dash(row.n_ids)} / ${dash(row.n_usage)}${
        row.count_mismatch ? pc.yellow(`  mismatch: ${safe(row.count_mismatch)}`) : ""
      }`,
    ],
    [
      "token events",
      `${row.n_token_events} (first event ${dash(row.k_first)} token(s)${row.k_first_assumed ? ", assumed: no ids" : ""}, max ${
        dash(row.tokens_per_event_max)
      } ids per event)${
        row.k_first_assumed && row.n_tokens !== null && row.n_token_events >= 2 && row.n_tokens > row.n_token_events + 1
          ? pc.yellow(`  ${row.n_tokens} tokens in ${row.n_token_events} events: several tokens an event, so TPOT reads low`)
          : ""
      }`,
    ],
    ["finish reason", safe(row.finish_reason)],
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
  if (row.engine_kind_source !== undefined) {
    const how = row.engine_kind_source === "flag"
      ? "--engine-kind"
      : safe(row.engine_kind_detail);
    lines.push(["engine kind", `${safe(row.engine_kind)} (${how})`]);
  }
  for (const [k, v] of lines) t.push([k, v]);
  const head = `ik probe: ${safe(row.engine_kind)} profile, ${safe(row.api)} API, model ${
    safe(row.model)
  }, max_tokens ${safe(row.max_tokens)}\n`;
  const snippet = text.length > 240 ? text.slice(0, 239) + "…" : text;
  // JSON.stringify escapes C0 controls; escapeTerminal catches what it leaves (DEL, C1, bidi overrides).
  return head + t.toString() + "\n" +
    (snippet ? `text: ${escapeTerminal(JSON.stringify(clean(snippet)))}\n` : "");
}
