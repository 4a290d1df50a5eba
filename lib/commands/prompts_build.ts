/**
 * `ik prompts build --dataset NAME --dataset-path FILE --out SET.jsonl`: a prompt set made from a
 * local dataset file (lib/datasets), with its manifest. Lengths are counted as `prompts synth`
 * counts them: the server's tokenizer (--tokenize-via), a local --tokenizer, else words.
 * @module
 */
import { dirname, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import { command, constant, option } from "@optique/core/primitives";
import { choice, integer, string } from "@optique/core/valueparser";
import { dataError, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { checkWritable, writeWhole } from "../evidence/mod.ts";
import { type BucketBy, buildDataset, DATASET_NAMES, parseBucketBy, type DatasetCounter, datasetAlias, DEFAULT_NUM_PROMPTS, SONNET_DEFAULTS } from "../datasets/mod.ts";
import { manifestPath, setStem } from "../prompts/mod.ts";
import { TOKENIZE_ENGINES } from "../tokenize_remote/engines.ts";
import type { CommandContext } from "./context.ts";
import { lengthCounter, type SynthFlags } from "./prompts_synth.ts";

/** The dataset names the flag takes (`custom` is vLLM's name for `jsonl`). */
export const DATASET_CHOICES = [...DATASET_NAMES, "custom"] as const;

/** Parser for `ik prompts build`. */
export const buildCommand = command("build", object({
  cmd: constant("prompts-build" as const),
  dataset: option("--dataset", choice(DATASET_CHOICES, { metavar: "NAME" }), {
    description: message`sharegpt (ShareGPT_V3 JSON), sonnet (text of poem lines), jsonl (lines with "prompt" and optional "output_tokens", or "messages"; also "custom"), burstgpt (BurstGPT CSV), azure (Azure LLM inference trace CSV), mooncake (Mooncake trace JSONL: timestamp, input_length, output_length, hash_ids; rows sharing a hash id share that 512-token block's text).`,
  }),
  datasetPath: option("--dataset-path", string({ metavar: "FILE" }), { description: message`The local dataset file (plain or .gz). Never downloaded.` }),
  numPrompts: withDefault(option("--num-prompts", "--limit", integer({ min: 0, max: 10_000_000, metavar: "N" }), {
    description: message`Prompts to keep: a seeded sample (the first N rows of the seed's shuffled order that pass the filters); 0 = every row that passes.`,
  }), DEFAULT_NUM_PROMPTS),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Seed of the sample (and of sonnet's line draws and the trace prompts' words).` }), 0),
  outputLen: optional(option("--output-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), {
    description: message`max_tokens of every prompt: sharegpt instead of the answer's length (vLLM --sharegpt-output-len), jsonl instead of output_tokens (--custom-output-len), sonnet (default ${text(String(SONNET_DEFAULTS.outputLen))}). Not for traces: their lengths are the point.`,
  })),
  inputLen: optional(option("--input-len", integer({ min: 1, max: 1_000_000, metavar: "N" }), { description: message`sonnet: input tokens per prompt (default ${text(String(SONNET_DEFAULTS.inputLen))}).` })),
  prefixLen: optional(option("--prefix-len", integer({ min: 0, max: 1_000_000, metavar: "N" }), { description: message`sonnet: tokens of the shared prefix lines (default ${text(String(SONNET_DEFAULTS.prefixLen))}).` })),
  bucketBy: optional(option("--bucket-by", string({ metavar: "input:E1,E2" }), {
    description: message`Bucket by counted input tokens instead of one bucket per dataset: input:128,512,2048 makes <name>-le128, -le512, -le2048 and -gt2048.`,
  })),
  tokenizer: optional(option("--tokenizer", string({ metavar: "PATH" }), { description: message`Count tokens with this local tokenizer.json (or its folder).` })),
  tokenizeVia: optional(option("--tokenize-via", string({ metavar: "URL" }), {
    description: message`Count tokens with this server's own tokenizer (vLLM, SGLang, llama.cpp): trace prompts get exactly the trace's input length as the server counts it, chat template included.`,
  })),
  tokenizeEngine: withDefault(option("--tokenize-engine", choice(["auto", ...TOKENIZE_ENGINES] as const, { metavar: "ENGINE" }), {
    description: message`Which engine's tokenize endpoints --tokenize-via speaks.`,
  }), "auto" as const),
  api: withDefault(option("--api", choice(["chat", "completions"] as const, { metavar: "API" }), { description: message`The API input_tokens are counted for with --tokenize-via.` }), "chat" as const),
  model: optional(option("--model", string({ metavar: "NAME" }), { description: message`The served model --tokenize-via names.` })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable with the bearer token for --tokenize-via.` })),
  out: option("--out", string({ metavar: "FILE" }), { description: message`Where to write the JSONL (.gz to compress); a <name>.manifest.json is written beside it.` }),
  json: option("--json", { description: message`Print what was written as one JSON object.` }),
}), {
  brief: message`Make a prompt set from a local dataset file (ShareGPT, sonnet, JSONL, BurstGPT, Azure or Mooncake trace).`,
  description: message`Reads the file as vLLM's benchmark datasets do (ShareGPT: first human turn, the answer's tokens as max_tokens, prompts under 4 or over 1024 tokens and pairs over 2048 dropped; BurstGPT: GPT-4 rows, failed ones dropped) and writes an ordinary prompt set, one bucket named after the dataset (or --bucket-by bins), whose sha256 identifies it. Its manifest records the dataset, the source file's name and sha256, each filter and how many rows it dropped, and the length method. Trace rows (burstgpt, azure, mooncake) become prompts of the trace's input length with arrival_s kept (bench serve --mode trace replays them). Malformed files exit 65 naming file:line. Example: ik prompts build --dataset sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 500 --out sharegpt.jsonl`,
});

/** The parsed flags of `ik prompts build`. */
export interface BuildFlags extends SynthFlags {
  dataset: typeof DATASET_CHOICES[number];
  datasetPath: string;
  numPrompts: number;
  seed: number;
  outputLen?: number;
  inputLen?: number;
  prefixLen?: number;
  bucketBy?: string;
  out: string;
  json: boolean;
}

/**
 * The counter the flags ask for: `request` as `prompts synth` counts a message, and `text` the bare
 * text (with --tokenize-via a second, completions-API counter opened when first needed).
 */
export async function datasetCounter(ctx: CommandContext, f: SynthFlags): Promise<DatasetCounter & { info: Record<string, unknown> }> {
  const req = await lengthCounter(ctx, f);
  const same = f.tokenizeVia === undefined || f.api === "completions";
  let bare: Awaited<ReturnType<typeof lengthCounter>> | null = same ? req : null;
  return {
    method: req.method,
    request: req.request,
    async text(t: string) {
      bare ??= await lengthCounter(ctx, { ...f, api: "completions" });
      return await bare.request(t);
    },
    get info() {
      const info = req.info;
      // The bare-text counts (ShareGPT's filters, sonnet's line average) went through their own counter.
      const tk = info.tokenize as Record<string, unknown> | undefined;
      if (!same && bare && tk) return { ...info, tokenize: { ...tk, text_calls: (bare.info.tokenize as Record<string, unknown>).calls } };
      return info;
    },
  };
}

/** Runs `ik prompts build`. */
export async function runPromptsBuild(ctx: CommandContext, f: BuildFlags): Promise<number> {
  const name = datasetAlias(f.dataset);
  if (!name) throw usageError("--dataset", `unknown dataset '${f.dataset}'`, `one of ${DATASET_NAMES.join(", ")}`);
  const trace = name === "burstgpt" || name === "azure" || name === "mooncake";
  if (trace && f.outputLen !== undefined) throw usageError("--output-len", `is not for ${name}: a trace's output lengths are its max_tokens`, "drop --output-len");
  for (const [flag, v] of [["--input-len", f.inputLen], ["--prefix-len", f.prefixLen]] as const) {
    if (v !== undefined && name !== "sonnet") throw usageError(flag, "is for --dataset sonnet", `drop ${flag}`);
  }
  if (name === "sonnet" && f.numPrompts === 0) throw usageError("--num-prompts", "0 (every row) is not for sonnet: its prompts are drawn, not read", "give the number of prompts to draw");
  let bucketBy: BucketBy | undefined;
  try {
    bucketBy = f.bucketBy === undefined ? undefined : parseBucketBy(f.bucketBy);
  } catch (e) {
    throw usageError("--bucket-by", (e as Error).message);
  }
  const out = resolve(ctx.runtime.cwd(), f.out);
  await checkWritable([dirname(out)]);
  const counter = await datasetCounter(ctx, f);
  const b = await buildDataset({
    name, path: resolve(ctx.runtime.cwd(), f.datasetPath), counter, numPrompts: f.numPrompts, seed: f.seed,
    outputLen: f.outputLen, inputLen: f.inputLen, prefixLen: f.prefixLen, bucketBy,
  });
  if (b.n === 0) throw dataError(b.source.file, `no row passed the ${name} filters (${b.dataset.rows} rows read)`, "check the file and the flags; nothing was written");
  await writeWhole(out, /\.gz$/i.test(out) ? gzipSync(b.text) : b.text, 0o644);
  const manifest = {
    name: setStem(out), sha256: b.sha256, n: b.n, buckets: b.buckets, dataset: b.dataset,
    length_method: counter.method, ...counter.info, api: f.api, limitations: b.limitations,
  };
  await writeWhole(manifestPath(out), JSON.stringify(manifest, null, 1) + "\n", 0o644);
  for (const l of b.limitations) ctx.err(`ik: prompts build: ${l}\n`);
  if (ctx.json) ctx.out(JSON.stringify({ path: out, sha256: b.sha256, n: b.n, dataset: b.dataset, limitations: b.limitations }) + "\n");
  else {
    const dropped = (b.dataset.filters as { filter: string; dropped: number }[]).filter((x) => x.dropped > 0).map((x) => `${x.dropped} ${x.filter}`);
    ctx.out(`wrote ${out}: ${b.n} prompts from ${b.source.file} (${name}), sha256 ${b.sha256}, lengths by ${counter.method}${dropped.length ? `; dropped: ${dropped.join("; ")}` : ""}\n`);
  }
  return ExitCode.OK;
}
