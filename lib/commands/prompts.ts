/**
 * `ik prompts validate|info|synth`: check a prompt set, show what is in it, or make a synthetic one.
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, resolve } from "node:path";
import { checkWritable, writeWhole } from "../evidence/mod.ts";
import { gzipSync } from "node:zlib";
import { object, or } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { integer, string } from "@optique/core/valueparser";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { loadPromptSet, manifestPath, type PromptSet, setBuckets, setStem } from "../prompts/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { parseSynthBucket, pseudoTokens, type SynthBucket, synthPromptSet } from "../prompts/synth.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { loadTokenizer } from "../tokenizer/load_tokenizer.ts";
import type { CommandContext } from "./context.ts";

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

const validate = command("validate", object({ cmd: constant("prompts-validate" as const), file: fileArg, json: option("--json") }), {
  brief: message`Check a prompt set: exit 0, or 65 with file:line and what is wrong.`,
  description: message`${PROMPT_FORMAT_HELP} Example: ik prompts validate prompts.jsonl`,
});

const info = command("info", object({ cmd: constant("prompts-info" as const), file: fileArg, json: option("--json") }), {
  brief: message`Counts per bucket, max_tokens range, name and sha256 of a prompt set.`,
  description: message`${PROMPT_FORMAT_HELP} Example: ik prompts info builtin:default`,
});

const synth = command("synth", object({
  cmd: constant("prompts-synth" as const),
  buckets: multiple(option("--bucket", string({ metavar: "NAME:IN:OUT" }), {
    description: message`A bucket of IN input tokens and OUT output tokens (max_tokens); repeat or comma-separate, e.g. short:128:64,long:2048:256.`,
  }), { min: 1 }),
  perBucket: withDefault(option("--per-bucket", integer({ min: 1, max: 100000, metavar: "N" }), { description: message`Prompts per bucket.` }), 8),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Seed of the generated text.` }), 0),
  tokenizer: optional(option("--tokenizer", string({ metavar: "PATH" }), {
    description: message`Count input tokens with this local tokenizer.json (or its folder) instead of the mock's pseudo-tokenizer.`,
  })),
  out: option("--out", string({ metavar: "FILE" }), { description: message`Where to write the JSONL (a <name>.manifest.json with its sha256 is written beside it).` }),
  json: option("--json"),
}), {
  brief: message`Make a synthetic prompt set of given input/output token lengths.`,
  description: message`Input lengths are counted with the mock's pseudo-tokenizer (a token is a run of non-whitespace) unless --tokenizer is given. Example: ik prompts synth --bucket short:128:64 --bucket long:2048:256 --per-bucket 16 --out synth.jsonl`,
});

/** Parser for `ik prompts …`. */
export const promptsCommand = command("prompts", or(validate, info, synth), {
  brief: message`Validate, inspect and synthesise prompt sets.`,
  description: message`${PROMPT_FORMAT_HELP}`,
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
  const tok = f.tokenizer ? await loadTokenizer(resolve(ctx.runtime.cwd(), f.tokenizer)) : null;
  const text = synthPromptSet(buckets, f.perBucket, f.seed, tok ? tok.count : pseudoTokens, tok ? `tokenizer ${tok.sha256.slice(0, 12)}` : "pseudo");
  const sha256 = createHash("sha256").update(text).digest("hex");
  await writeWhole(out, /\.gz$/i.test(out) ? gzipSync(text) : text, 0o644);
  await writeWhole(manifestPath(out), JSON.stringify({ name: setStem(out), sha256, buckets, per_bucket: f.perBucket, seed: f.seed }, null, 1) + "\n", 0o644);
  if (ctx.json) ctx.out(JSON.stringify({ path: out, sha256, n: buckets.length * f.perBucket }) + "\n");
  else ctx.out(`wrote ${out}: ${buckets.length * f.perBucket} prompts, sha256 ${sha256}\n`);
  return ExitCode.OK;
}
