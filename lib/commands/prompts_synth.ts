/**
 * The pieces of `ik prompts synth` that pick how lengths are made: the server's tokenizer
 * (`--tokenize-via`), a local tokenizer file, or words; the per-prompt length spread; and the
 * limitations the set carries in its manifest.
 * @module
 */
import { resolve } from "node:path";
import { usageError } from "../cli/errors.ts";
import { parseEndpoint } from "../client/endpoint.ts";
import type { BucketReport, LengthCounter, LengthSpread } from "../prompts/synth_exact.ts";
import { pseudoTokens } from "../prompts/synth.ts";
import { openRemoteCounter, type RemoteCounter } from "../tokenize_remote/remote_counter.ts";
import type { TokenizeEngine } from "../tokenize_remote/engines.ts";
import type { CommandContext } from "./context.ts";

/** The synth flags these helpers read. */
export interface SynthFlags {
  tokenizer?: string;
  tokenizeVia?: string;
  tokenizeEngine: "auto" | TokenizeEngine;
  api: "chat" | "completions";
  apiKeyEnv?: string;
  model?: string;
  rangeRatio?: number;
  inputStddev?: number;
  outputStddev?: number;
}

/** The length spread the flags ask for. */
export function synthSpread(f: SynthFlags): LengthSpread {
  const normal = f.inputStddev !== undefined || f.outputStddev !== undefined;
  if (f.rangeRatio !== undefined && normal) {
    throw usageError("--range-ratio", "cannot be combined with --input-stddev/--output-stddev", "give a uniform range or a normal spread, not both");
  }
  if (f.rangeRatio !== undefined && f.rangeRatio > 0) return { kind: "range", ratio: f.rangeRatio };
  if (normal) return { kind: "normal", inputStddev: f.inputStddev ?? 0, outputStddev: f.outputStddev ?? 0 };
  return { kind: "fixed" };
}

/** The counter the flags ask for, with what the manifest records about it. */
export async function lengthCounter(ctx: CommandContext, f: SynthFlags): Promise<LengthCounter & { info: Record<string, unknown>; remote?: RemoteCounter }> {
  if (f.tokenizeVia !== undefined && f.tokenizer !== undefined) {
    throw usageError("--tokenize-via", "cannot be combined with --tokenizer", "give the server (exact, template included) or the local file, not both");
  }
  for (const [flag, given] of [["--tokenize-engine", f.tokenizeEngine !== "auto"], ["--model", f.model !== undefined], ["--api-key-env", f.apiKeyEnv !== undefined]] as const) {
    if (f.tokenizeVia === undefined && given) throw usageError(flag, "needs --tokenize-via URL", `add --tokenize-via or drop ${flag}`);
  }
  if (f.tokenizeVia !== undefined) {
    const ep = parseEndpoint(f.tokenizeVia, "--tokenize-via");
    const apiKey = f.apiKeyEnv !== undefined ? ctx.runtime.env(f.apiKeyEnv) || undefined : undefined;
    if (f.apiKeyEnv !== undefined && !apiKey) {
      throw usageError("--api-key-env", `environment variable ${f.apiKeyEnv} is not set or empty`, `export ${f.apiKeyEnv}=... or drop the flag`);
    }
    const rc = await openRemoteCounter(ep, { engine: f.tokenizeEngine, apiKey, model: f.model });
    const request = f.api === "chat" ? (t: string) => rc.countChat([{ role: "user", content: t }]) : (t: string) => rc.countPrompt(t);
    return {
      method: `server_tokenize:${rc.engine}`,
      request,
      remote: rc,
      get info() {
        return { tokenize: { engine: rc.engine, engine_source: rc.engineSource, model: rc.model, api: f.api, calls: rc.calls() } };
      },
    };
  }
  if (f.tokenizer !== undefined) {
    // The tokenizer library is loaded only for --tokenizer (this module is in every bench command's graph).
    const { loadTokenizer } = await import("../tokenizer/load_tokenizer.ts");
    const tok = await loadTokenizer(resolve(ctx.runtime.cwd(), f.tokenizer));
    // A completions server counts its prompt with the tokenizer's special tokens (a BOS); a chat
    // message's own text has none (its template is not counted either way).
    const count = f.api === "completions" ? (t: string) => Promise.resolve(tok.countPrompt(t)) : (t: string) => Promise.resolve(tok.count(t));
    return { method: "tokenizer", request: count, info: { tokenizer: { sha256: tok.sha256 } } };
  }
  const words = (t: string) => Promise.resolve(pseudoTokens(t));
  return { method: "words", request: words, info: {} };
}

/** What a set made this way cannot promise, for its manifest and stderr. */
export function synthLimitations(method: string, report: Record<string, BucketReport>, api: "chat" | "completions"): string[] {
  const out: string[] = [];
  if (method === "words") {
    out.push("lengths are approximate: input tokens were counted as words (runs of non-whitespace, as ik mock counts), not by the server's tokenizer, and the chat template is not counted; give --tokenize-via URL for exact lengths");
  } else if (method === "tokenizer") {
    out.push(`input tokens count the message text with the local tokenizer only${api === "chat" ? ": the chat template's tokens are not counted (--tokenize-via counts them)" : ""}`);
  }
  for (const [b, r] of Object.entries(report)) {
    if (r.exact < r.n) out.push(`bucket ${b}: ${r.n - r.exact} of ${r.n} prompts missed their target by up to ${r.max_abs_off_target} token(s) within the tokenize budget; their input_tokens are the true counts`);
    if (r.raised_to_floor) out.push(`bucket ${b}: ${r.raised_to_floor} drawn length(s) were below the ${r.floor_tokens} tokens an empty message counts and were raised to ${r.floor_tokens + 1}`);
  }
  return out;
}
