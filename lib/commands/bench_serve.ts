/**
 * `ik bench serve`: the client-side streaming benchmark of one OpenAI-compatible server. Single
 * mode: one request at a time, rounds over a prompt set, per-bucket medians and p95 with CIs over
 * rounds, written as an evidence record (seed 000). Exit 0 when the benchmark ran (failed
 * requests are counted in the record), 69 when the server is unreachable, 130 when interrupted.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, negatableFlag, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { ExitCode } from "../cli/exit_codes.ts";
import { MAX_DURATION_S } from "../cli/limits.ts";
import { APIS } from "../client/mod.ts";
import { ENGINE_KIND_CHOICES, TOKEN_ID_MODES } from "../engines/mod.ts";
import { renderSingleRecord } from "../report/serve_table.ts";
import { prepareSingle } from "./bench_serve_setup.ts";
import { runSingle } from "../bench/serve_single.ts";
import type { CommandContext } from "./context.ts";

const flags = {
  baseUrl: option("--base-url", string({ metavar: "URL" }), {
    description: message`Server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine). Never stored: records keep an HMAC of it under a per-machine key.`,
  }),
  model: option("--model", string({ metavar: "MODEL" }), { description: message`Model name the server expects (as /v1/models lists it).` }),
  prompts: optional(option("--prompts", string({ metavar: "FILE" }), {
    description: message`Prompt set, JSONL or .jsonl.gz (see 'ik prompts --help'); default the built-in set builtin:default.`,
  })),
  mode: withDefault(option("--mode", choice(["single"] as const, { metavar: "MODE" }), {
    description: message`single = one request at a time, rounds over the prompt set, CIs over rounds.`,
  }), "single" as const),
  api: withDefault(option("--api", choice(APIS, { metavar: "API" }), { description: message`OpenAI endpoint to call.` }), "chat" as const),
  engineKind: withDefault(option("--engine-kind", choice(ENGINE_KIND_CHOICES, { metavar: "KIND" }), {
    description: message`Server type (body fields for exact length and token ids); auto = detect from what the server says about itself.`,
  }), "auto" as const),
  maxTokens: optional(option("--max-tokens", integer({ min: 2, metavar: "N" }), {
    description: message`Tokens per request, at least 2 (default: each prompt's max_tokens, else 256).`,
  })),
  rounds: withDefault(option("--rounds", integer({ min: 1, max: 10000, metavar: "N" }), { description: message`Timed passes over the prompt set.` }), 5),
  warmup: withDefault(option("--warmup", integer({ min: 0, max: 10000, metavar: "N" }), {
    description: message`Untimed requests first, each with a unique prompt tag.`,
  }), 2),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Seed (recorded; bootstrap resampling).` }), 0),
  label: optional(option("--label", string({ metavar: "NAME" }), {
    description: message`Name of this engine configuration in outputs/ (default: the engine kind).`,
  })),
  runDir: optional(option("--run-dir", string({ metavar: "DIR" }), {
    description: message`Also write outputs/<label>/..., inputs/ and metrics/<label>.json there (index.json merged across runs).`,
  })),
  buckets: multiple(option("--buckets", string({ metavar: "A,B" }), { description: message`Only these buckets (comma list or repeated).` })),
  limitPerBucket: withDefault(option("--limit-per-bucket", integer({ min: 0, metavar: "N" }), {
    description: message`Only the first N prompts of each bucket (0 = all).`,
  }), 0),
  tokenIds: withDefault(option("--token-ids", choice(TOKEN_ID_MODES, { metavar: "MODE" }), {
    description: message`auto = ask for streamed ids where free; logprobs = also through logprobs (can slow decode); off = never.`,
  }), "auto" as const),
  exactLength: withDefault(negatableFlag({ positive: "--exact-length", negative: "--no-exact-length" }, {
    description: message`Ask the engine to generate exactly max_tokens (ignore_eos / min_tokens).`,
  }), true),
  cacheSalt: withDefault(negatableFlag({ positive: "--cache-salt", negative: "--no-cache-salt" }, {
    description: message`Rounds after the first prefix each prompt with a unique tag (cold-prefill TTFT); --no-cache-salt resends identical prompts (warm cache).`,
  }), true),
  extraBody: optional(option("--extra-body", string({ metavar: "JSON" }), {
    description: message`JSON object merged into every request body; secret-looking keys are stored redacted.`,
  })),
  chatTemplateKwargs: optional(option("--chat-template-kwargs", string({ metavar: "JSON" }), {
    description: message`JSON object sent as chat_template_kwargs on chat requests (merged per key; a prompt's own field wins).`,
  })),
  tokenizer: optional(option("--tokenizer", string({ metavar: "PATH" }), {
    description: message`Local tokenizer.json (or its folder) to re-count tokens when a server sends neither ids nor usage.`,
  })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), {
    description: message`Environment variable holding the API key (never stored or printed).`,
  })),
  engineVersion: optional(option("--engine-version", string({ metavar: "V" }), { description: message`Engine version, recorded in the identity.` })),
  timeoutS: withDefault(option("--timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`Per-request limit, seconds (at most ${text(String(MAX_DURATION_S))}).`,
  }), 600),
  idleTimeoutS: withDefault(option("--idle-timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), {
    description: message`Limit on a silence with no byte received, seconds.`,
  }), 60),
  resamples: withDefault(option("--resamples", integer({ min: 100, max: 100000, metavar: "N" }), { description: message`Bootstrap resamples for CIs.` }), 2000),
  extend: optional(option("--extend", string({ metavar: "ID" }), {
    description: message`Evidence id of an earlier run of the same configuration: its rounds are kept and new rounds appended.`,
  })),
  allowIncomplete: withDefault(negatableFlag({ positive: "--allow-incomplete", negative: "--no-allow-incomplete" }, {
    description: message`Let --extend build on an interrupted (incomplete) record.`,
  }), false),
  gpuName: optional(option("--gpu-name", string({ metavar: "NAME" }), { description: message`GPU model, when the server is not on this machine (else read with nvidia-smi).` })),
  gpuCount: withDefault(option("--gpu-count", integer({ min: 1, max: 4096, metavar: "N" }), { description: message`GPUs behind the server.` }), 1),
  json: option("--json", { description: message`Print the record as one JSON object on stdout.` }),
};

/** Parser for `ik bench serve`. */
export const benchServeCommand = command("serve", object({ cmd: constant("bench-serve" as const), ...flags }), {
  brief: message`Benchmark one server: single-user latency with CIs over rounds.`,
  description: message`Single mode (--mode single): warm-up, then --rounds passes over the prompt set one request at a time; per bucket the median and p95 of TTFT, TPOT, decode tok/s and e2e with 95% CIs (t-scaled cluster bootstrap over rounds). Writes an evidence record under $IK_RUNS_DIR (else ./runs).`,
});

/** The parsed flags of `ik bench serve`. */
export type BenchServeFlags = InferValue<typeof benchServeCommand>;

/** Runs `ik bench serve`. */
export async function runBenchServe(ctx: CommandContext, f: BenchServeFlags): Promise<number> {
  const prep = await prepareSingle(ctx, f);
  try {
    const { record, dir, interrupted } = await runSingle({ ...prep.run, signal: ctx.signal, progress: (l) => ctx.err(`bench serve: ${l}\n`) });
    const clean = (s: string) => prep.clean(s);
    if (ctx.json) ctx.out(clean(JSON.stringify(record)) + "\n");
    else ctx.out(clean(renderSingleRecord(record, dir)));
    if (interrupted) {
      ctx.err(`ik: bench serve: interrupted; the record ${record.evidence_id} is marked incomplete\n`);
      return ExitCode.INTERRUPTED;
    }
    return ExitCode.OK;
  } catch (e) {
    throw prep.sanitizeError(e);
  }
}
