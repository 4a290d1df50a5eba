/**
 * The flags and parsers of `ik prompts validate|info|synth|build` (build's are in
 * prompts_build_flags.ts), the prompt-set format their help shows, and their parsed type. Parser
 * only: the commands are prompts.ts.
 * @module
 */
import { object, or } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { TOKENIZE_ENGINES } from "../tokenize_remote/engines.ts";
import { buildCommand } from "./prompts_build_flags.ts";
import { pathValue } from "../cli/path_value.ts";

/** The format, as `ik prompts --help` shows it. */
export const PROMPT_FORMAT_HELP =
  `A prompt set is JSONL (or .jsonl.gz), one request per line: {"id", "bucket", "messages", "max_tokens"?, "kind"?, ...extra}. ` +
  `id and bucket: non-empty, no '/', not starting with '.'; ids unique. messages: a non-empty list of {"role", "content"}. ` +
  `max_tokens: a positive integer (else the command's default). Its identity is the sha256 of the uncompressed bytes; an optional ` +
  `<name>.manifest.json beside it with "sha256" must match. Buckets sort very_short, short, medium, long, then the rest. Example file: ` +
  `{"id":"s-1","bucket":"short","messages":[{"role":"user","content":"Why is the sky blue?"}],"max_tokens":64} ` +
  `{"id":"s-2","bucket":"short","messages":[{"role":"user","content":"Name three rivers."}],"max_tokens":64} ` +
  `{"id":"l-1","bucket":"long","messages":[{"role":"user","content":"Summarise this report: ..."}],"max_tokens":256}`;

const fileArg = () => argument(pathValue("FILE"), { description: message`Prompt set (JSONL or .jsonl.gz), or builtin:default.` });

const validate = () => command("validate", object({ cmd: constant("prompts-validate" as const), file: fileArg(), json: option("--json", { description: message`Print the result as one JSON object.` }) }), {
  brief: message`Check a prompt set: exit 0, or 65 with file:line and what is wrong.`,
  description: message`${text(PROMPT_FORMAT_HELP)} Example: ik prompts validate prompts.jsonl`,
});

const info = () => command("info", object({ cmd: constant("prompts-info" as const), file: fileArg(), json: option("--json", { description: message`Print the counts as one JSON object.` }) }), {
  brief: message`Counts per bucket, max_tokens range, name and sha256 of a prompt set.`,
  description: message`${text(PROMPT_FORMAT_HELP)} Example: ik prompts info builtin:default`,
});

const synth = () => command("synth", object({
  cmd: constant("prompts-synth" as const),
  buckets: multiple(option("--bucket", string({ metavar: "NAME:IN:OUT" }), {
    description: message`A bucket of IN input tokens and OUT output tokens (max_tokens); repeat or comma-separate, e.g. short:128:64,long:2048:256.`,
  }), { min: 1 }),
  perBucket: withDefault(option("--per-bucket", integer({ min: 1, max: 100000, metavar: "N" }), { description: message`Prompts per bucket.` }), 8),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Seed of the generated text.` }), 0),
  tokenizer: optional(option("--tokenizer", pathValue("PATH"), {
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
  out: option("--out", pathValue("FILE"), { description: message`Where to write the JSONL (a <name>.manifest.json with its sha256 is written beside it).` }),
  json: option("--json", { description: message`Print what was written (path, sha256, count, length method, lengths per bucket, limitations) as one JSON object.` }),
}), {
  brief: message`Make a synthetic prompt set of given input/output token lengths.`,
  description: message`Input lengths are made exact with the server's tokenizer (--tokenize-via), else counted by a local --tokenizer, else by words (approximate: a token is a run of non-whitespace, as the mock counts). Each line records its length_method. Example: ik prompts synth --tokenize-via http://127.0.0.1:8000 --bucket in512:512:128 --per-bucket 16 --out synth.jsonl`,
});

/** Builds the parser for `ik prompts …` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const promptsCommand = () => command("prompts", or(validate(), info(), synth(), buildCommand()), {
  brief: message`Validate, inspect, synthesise prompt sets, or build one from a dataset file.`,
  description: message`${text(PROMPT_FORMAT_HELP)}`,
});

/** The parsed flags of `ik prompts …`. */
export type PromptsFlags = InferValue<ReturnType<typeof promptsCommand>>;
