/**
 * `ik prompts build --dataset NAME --dataset-path FILE --out SET.jsonl`: a prompt set made from a
 * local dataset file (lib/datasets), with its manifest. Lengths are counted as `prompts synth`
 * counts them: the server's tokenizer (--tokenize-via), a local --tokenizer, else words.
 * @module
 */
import { dirname, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { dataError, usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { checkWritable, writeWhole } from "../evidence/mod.ts";
import { type BucketBy, buildDataset, DATASET_NAMES, parseBucketBy, type DatasetCounter, datasetAlias } from "../datasets/mod.ts";
import { manifestPath, setStem } from "../prompts/mod.ts";
import type { CommandContext } from "./context.ts";
import { lengthCounter, type SynthFlags } from "./prompts_synth.ts";
import type { BuildFlags } from "./prompts_build_flags.ts";

/**
 * The counter the flags ask for: `request` as `prompts synth` counts a message, and `text` the bare
 * text as a completions prompt, special tokens included (with --tokenize-via or --tokenizer a
 * second, completions-API counter opened when first needed).
 */
export async function datasetCounter(ctx: CommandContext, f: SynthFlags): Promise<DatasetCounter & { info: Record<string, unknown> }> {
  const req = await lengthCounter(ctx, f);
  // Bare text is counted as a completions prompt (special tokens included, vLLM's count): the same
  // counter only where requests are counted so already, or where no tokenizer counts at all (words).
  const same = f.api === "completions" || (f.tokenizeVia === undefined && f.tokenizer === undefined);
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
