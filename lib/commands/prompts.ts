/**
 * `ik prompts validate|info|synth|build`: check a prompt set, show what is in it, make a synthetic
 * one, or build one from a local dataset file (prompts_build.ts).
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, resolve } from "node:path";
import { checkWritable, writeWhole } from "../evidence/mod.ts";
import { gzipSync } from "node:zlib";
import { object, or } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { loadPromptSet, manifestPath, type PromptSet, setBuckets, setStem } from "../prompts/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { parseSynthBucket, type SynthBucket } from "../prompts/synth.ts";
import { lengthCounter, synthLimitations, synthSpread } from "./prompts_synth.ts";
import { synthExact } from "../prompts/synth_exact.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { TOKENIZE_ENGINES } from "../tokenize_remote/engines.ts";
import type { CommandContext } from "./context.ts";
import { buildCommand, runPromptsBuild } from "./prompts_build.ts";

/** The format, as `ik prompts --help` shows it. */
export const PROMPT_FORMAT_HELP =
  `A prompt set is JSONL (or .jsonl.gz), one request per line: {"id", "bucket", "messages", "max_tokens"?, "kind"?, ...extra}. ` +
  `id and bucket: non-empty, no '/', not starting with '.'; ids unique. messages: a non-empty list of {"role", "content"}. ` +
  `max_tokens: a positive integer (else the command's default). Its identity is the sha256 of the uncompressed bytes; an optional ` +
  `<name>.manifest.json beside it with "sha256" must match. Buckets sort very_short, short, medium, long, then the rest. Example file: ` +
  `{"id":"s-1","bucket":"short","messages":[{"role":"user","content":"Why is the sky blue?"}],"max_tokens":64} ` +
  `{"id":"s-2","bucket":"short","messages":[{"role":"user","content":"Name three rivers."}],"max_tokens":64} ` +
  `{"id":"l-1","bucket":"long","messages":[{"role":"user","content":"Summarise this report: ..."}],"max_tokens":256}`;

const fileArg = argument(string({ metavar: "FILE" }), { description: message`Prompt set (JSONL or .jsonl.gz), or builtin:default.` });

const validate = command("validate", object({ cmd: constant("prompts-validate" as const), file: fileArg, json: option("--json", { description: message`Print the result as one JSON object.` }) }), {
  brief: message`Check a prompt set: exit 0, or 65 with file:line and what is wrong.`,
  description: message`${text(PROMPT_FORMAT_HELP)} Example: ik prompts validate prompts.jsonl`,
});

const info = command("info", object({ cmd: constant("prompts-info" as const), file: fileArg, json: option("--json", { description: message`Print the counts as one JSON object.` }) }), {
  brief: message`Counts per bucket, max_tokens range, name and sha256 of a prompt set.`,
  description: message`${text(PROMPT_FORMAT_HELP)} Example: ik prompts info builtin:default`,
});

const synth = command("synth", object({
  cmd: constant("prompts-synth" as const),
  buckets: multiple(option("--bucket", string({ metavar: "NAME:IN:OUT" }), {
    description: message`A bucket of IN input tokens and OUT output tokens (max_tokens); repeat or comma-separate, e.g. short:128:64,long:2048:256.`,
  }), { min: 1 }),
  perBucket: withDefault(option("--per-bucket", integer({ min: 1, max: 100000, metavar: "N" }), { description: message`Prompts per bucket.` }), 8),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Seed of the generated text.` }), 0),
  tokenizer: optional(option("--tokenizer", string({ metavar: "PATH" }), {
    description: message`Count input tokens with this local tokenizer.json (or its folder): the message text only (the chat template is not counted).`,
  })),
  tokenizeVia: optional(option("--tokenize-via", string({ metavar: "URL" }), {
    description: message`Make lengths exact with this server's own tokenizer (vLLM or SGLang /tokenize with messages, llama.cpp /apply-template + /tokenize): input tokens are what the server's usage.prompt_tokens will report, chat template included.`,
  })),
  tokenizeEngine: withDefault(option("--tokenize-engine", choice(["auto", ...TOKENIZE_ENGINES] as const, { metavar: "ENGINE" }), {
    description: message`Which engine's tokenize endpoints --tokenize-via speaks (auto: detected as --engine-kind auto).`,
  }), "auto" as const),
  api: withDefault(option("--api", choice(["chat", "completions"] as const, { metavar: "API" }), {
    description: message`The API the set is sized for with --tokenize-via (chat counts the template; completions the bare prompt).`,
  }), "chat" as const),
  model: optional(option("--model", string({ metavar: "NAME" }), { description: message`The served model --tokenize-via names in its calls (default: the first one /v1/models lists).` })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable with the bearer token for --tokenize-via.` })),
  prefixLen: withDefault(option("--prefix-len", integer({ min: 0, max: 1000000, metavar: "P" }), {
    description: message`A shared prefix of P tokens in every prompt of a bucket (vLLM --random-prefix-len); the cache tag of later rounds goes after it, so the prefix can be cached while the rest stays cold. Part of IN.`,
  }), 0),
  rangeRatio: optional(option("--range-ratio", float({ min: 0, max: 0.999, metavar: "R" }), {
    description: message`Draw each prompt's input and output length uniformly in [L*(1-R), L*(1+R)] (vLLM --random-range-ratio).`,
  })),
  inputStddev: optional(option("--input-stddev", float({ min: 0, metavar: "N" }), { description: message`Draw each input length from a normal with mean IN and this stddev (AIPerf's mean/stddev).` })),
  outputStddev: optional(option("--output-stddev", float({ min: 0, metavar: "N" }), { description: message`Draw each output length from a normal with mean OUT and this stddev.` })),
  out: option("--out", string({ metavar: "FILE" }), { description: message`Where to write the JSONL (a <name>.manifest.json with its sha256 is written beside it).` }),
  json: option("--json", { description: message`Print what was written (path, sha256, count, length method, lengths per bucket, limitations) as one JSON object.` }),
}), {
  brief: message`Make a synthetic prompt set of given input/output token lengths.`,
  description: message`Input lengths are made exact with the server's tokenizer (--tokenize-via), else counted by a local --tokenizer, else by words (approximate: a token is a run of non-whitespace, as the mock counts). Each line records its length_method. Example: ik prompts synth --tokenize-via http://127.0.0.1:8000 --bucket in512:512:128 --per-bucket 16 --out synth.jsonl`,
});

/** Parser for `ik prompts …`. */
export const promptsCommand = command("prompts", or(validate, info, synth, buildCommand), {
  brief: message`Validate, inspect, synthesise prompt sets, or build one from a dataset file.`,
  description: message`${text(PROMPT_FORMAT_HELP)}`,
});

/** The parsed flags of `ik prompts …`. */
export type PromptsFlags = InferValue<typeof promptsCommand>;

async function load(ctx: CommandContext, file: string): Promise<PromptSet> {
  return file === BUILTIN_NAME ? loadBuiltinPromptSet() : await loadPromptSet(resolve(ctx.runtime.cwd(), file));
}

function describe(set: PromptSet): Record<string, unknown> {
  const buckets: Record<string, { n: number; max_tokens: [number | null, number | null] }> = {};
  for (const b of setBuckets(set)) {
    const ps = set.prompts.filter((p) => p.bucket === b);
    const mt = ps.map((p) => p.maxTokens).filter((v): v is number => v !== null);
    buckets[b] = { n: ps.length, max_tokens: [mt.length ? Math.min(...mt) : null, mt.length ? Math.max(...mt) : null] };
  }
  return { name: set.name, path: set.path, sha256: set.sha256, n: set.prompts.length, buckets };
}

/** Runs `ik prompts …`. */
export async function runPrompts(ctx: CommandContext, f: PromptsFlags): Promise<number> {
  if (f.cmd === "prompts-validate") {
    const set = await load(ctx, f.file);
    const d = describe(set);
    if (ctx.json) ctx.out(JSON.stringify({ ok: true, ...d }) + "\n");
    else ctx.out(`ok: ${set.prompts.length} prompts in ${Object.keys(d.buckets as object).length} bucket(s), sha256 ${set.sha256} (${escapeTerminalLine(set.name)})\n`);
    return ExitCode.OK;
  }
  if (f.cmd === "prompts-info") {
    const set = await load(ctx, f.file);
    const d = describe(set);
    if (ctx.json) ctx.out(JSON.stringify(d) + "\n");
    else {
      const lines = [`${escapeTerminalLine(set.name)}: ${set.prompts.length} prompts, sha256 ${set.sha256}`];
      for (const [b, v] of Object.entries(d.buckets as Record<string, { n: number; max_tokens: [number | null, number | null] }>)) {
        const mt = v.max_tokens[0] === null ? "default" : v.max_tokens[0] === v.max_tokens[1] ? String(v.max_tokens[0]) : `${v.max_tokens[0]}-${v.max_tokens[1]}`;
        lines.push(`  ${escapeTerminalLine(b).padEnd(12)} ${String(v.n).padStart(6)} prompts  max_tokens ${mt}`);
      }
      ctx.out(lines.join("\n") + "\n");
    }
    return ExitCode.OK;
  }
  if (f.cmd === "prompts-build") return await runPromptsBuild(ctx, f);
  let buckets: SynthBucket[];
  try {
    buckets = f.buckets.flatMap((b) => b.split(",")).filter((s) => s.trim()).map(parseSynthBucket);
  } catch (e) {
    throw usageError("--bucket", (e as Error).message);
  }
  const names = buckets.map((b) => b.name);
  if (new Set(names).size !== names.length) throw usageError("--bucket", `bucket names repeat (${names.join(", ")})`, "give each bucket once");
  const out = resolve(ctx.runtime.cwd(), f.out);
  await checkWritable([dirname(out)]);
  const spread = synthSpread(f);
  const counter = await lengthCounter(ctx, f);
  let made;
  try {
    made = await synthExact({ buckets, perBucket: f.perBucket, seed: f.seed, counter, prefixLen: f.prefixLen, spread });
  } catch (e) {
    if (e instanceof RangeError) throw usageError(f.prefixLen > 0 ? "--prefix-len" : "--bucket", e.message, "give a larger IN or a shorter prefix");
    throw e;
  }
  const text = made.text;
  const sha256 = createHash("sha256").update(text).digest("hex");
  const limitations = synthLimitations(counter.method, made.report, f.api);
  await writeWhole(out, /\.gz$/i.test(out) ? gzipSync(text) : text, 0o644);
  await writeWhole(manifestPath(out), JSON.stringify({
    name: setStem(out), sha256, buckets, per_bucket: f.perBucket, seed: f.seed,
    length_method: counter.method, ...counter.info, api: f.api, prefix_len: f.prefixLen, spread,
    lengths: made.report, limitations,
  }, null, 1) + "\n", 0o644);
  for (const l of limitations) ctx.err(`ik: prompts synth: ${l}\n`);
  if (ctx.json) ctx.out(JSON.stringify({ path: out, sha256, n: buckets.length * f.perBucket, length_method: counter.method, ...counter.info, lengths: made.report, limitations }) + "\n");
  else ctx.out(`wrote ${out}: ${buckets.length * f.perBucket} prompts, sha256 ${sha256}, lengths by ${counter.method}\n`);
  return ExitCode.OK;
}
