/**
 * A prompt set built from a dataset file: the readers' lines written as prompt-set JSONL (one
 * bucket named after the dataset, or input-length bins with `bucketBy`), its sha256, and the manifest fields that say where it came
 * from (the source file's name and sha256, the filters and how many rows each dropped, the
 * length method and sample).
 * @module
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { parsePromptSetText, type PromptSet } from "../prompts/mod.ts";
import type { SourceInfo } from "./_source.ts";
import { type BucketBy, bucketFor } from "./bucket_by.ts";
import { readCustomJsonl } from "./custom_jsonl.ts";
import { readShareGpt } from "./sharegpt.ts";
import { readSonnet } from "./sonnet.ts";
import { readMooncake } from "./mooncake.ts";
import { readTrace } from "./traces.ts";
import { DATASET_NAMES, type DatasetName, type DatasetOptions, type DatasetRead } from "./types.ts";

/** A built set. */
export interface DatasetBuild {
  /** The prompt-set JSONL. */
  text: string;
  /** sha256 (hex) of `text`: the set's identity. */
  sha256: string;
  n: number;
  /** The buckets, in the order they first appear (one, the dataset's name, without `bucketBy`). */
  buckets: string[];
  source: SourceInfo;
  /** What the manifest's `dataset` field holds. */
  dataset: Record<string, unknown>;
  /** What the set cannot promise (for the manifest and stderr). */
  limitations: string[];
}

/** `custom` (vLLM's name for the JSONL dataset) is `jsonl`. */
export function datasetAlias(name: string): DatasetName | null {
  const n = name === "custom" ? "jsonl" : name;
  return DATASET_NAMES.find((d) => d === n) ?? null;
}

async function read(o: DatasetOptions): Promise<DatasetRead & { source: SourceInfo }> {
  switch (o.name) {
    case "sharegpt":
      return await readShareGpt(o);
    case "sonnet":
      return await readSonnet(o);
    case "jsonl":
      return await readCustomJsonl(o);
    case "burstgpt":
    case "azure":
      return await readTrace({ ...o, name: o.name });
    case "mooncake":
      return await readMooncake(o);
  }
}

/** The limitation a length method carries. */
export function methodLimitation(method: string): string | null {
  if (method === "words") return "lengths are approximate: tokens were counted as words (runs of non-whitespace, as ik mock counts), not by the server's tokenizer; ik prompts build --tokenize-via URL (or --tokenizer) counts real tokens";
  if (method === "tokenizer") return "input tokens count the message text with the local tokenizer; the chat template's tokens are not counted (--tokenize-via counts them)";
  return null;
}

/**
 * Reads a local dataset file and builds a prompt set from it.
 *
 * @example
 * ```ts
 * const b = await buildDataset({ name: "sharegpt", path: "ShareGPT_V3_unfiltered_cleaned_split.json", counter: wordCounter(), numPrompts: 100, seed: 0 });
 * console.log(b.n, b.sha256, b.dataset.filters);
 * ```
 * @throws IkError usage (64) for a missing file or impossible lengths; data (65) naming `file:line` for a malformed file
 */
export async function buildDataset(o: DatasetOptions & { bucketBy?: BucketBy }): Promise<DatasetBuild> {
  const r = await read(o);
  const buckets: string[] = [];
  const text = r.lines.map((l) => {
    const bucket = bucketFor(o.name, o.bucketBy, l.extra.input_tokens);
    if (!buckets.includes(bucket)) buckets.push(bucket);
    return JSON.stringify({ id: l.id, bucket, messages: l.messages, max_tokens: l.maxTokens, ...l.extra, dataset: o.name });
  }).join("\n") + (r.lines.length ? "\n" : "");
  const sha256 = createHash("sha256").update(text).digest("hex");
  const limitations = [...r.notes];
  const m = methodLimitation(o.counter.method);
  if (m) limitations.unshift(m);
  const dataset: Record<string, unknown> = {
    name: o.name,
    source: { file: r.source.file, sha256: r.source.sha256, bytes: r.source.bytes, gzip: r.source.gzip },
    rows: r.rows,
    examined: r.examined,
    ...(r.passed !== undefined ? { passed: r.passed } : {}),
    filters: r.filters,
    chosen: r.lines.length,
    num_prompts: o.numPrompts,
    seed: o.seed,
    sample: o.numPrompts === 0 ? "every row that passed" : "seeded: rows in the seed's shuffled order, the first num_prompts that pass",
    length_method: o.counter.method,
    options: r.options,
  };
  if (r.lengths) dataset.lengths = r.lengths;
  dataset.bucket_by = o.bucketBy ? { by: o.bucketBy.by, edges: o.bucketBy.edges } : null;
  return { text, sha256, n: r.lines.length, buckets: buckets.length ? buckets : [o.name], source: r.source, dataset, limitations };
}

/**
 * Builds a dataset's prompt set in memory (for `bench serve --dataset`), as if it had been
 * written and loaded: the same lines, the same sha256.
 */
export async function buildDatasetPromptSet(o: DatasetOptions): Promise<{ set: PromptSet; build: DatasetBuild }> {
  const build = await buildDataset(o);
  const prompts = parsePromptSetText(build.text, `dataset:${o.name}`);
  const set: PromptSet = {
    name: `dataset:${o.name}`,
    path: resolve(o.path),
    sha256: build.sha256,
    prompts,
    manifest: { name: `dataset:${o.name}`, sha256: build.sha256, dataset: build.dataset, limitations: build.limitations },
  };
  return { set, build };
}
