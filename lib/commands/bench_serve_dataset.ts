/**
 * `bench serve --dataset NAME --dataset-path FILE`: the prompt set built in memory from a local
 * dataset file (lib/datasets), exactly the lines and sha256 `ik prompts build` would write, and
 * what the record's args say about it. Lengths are counted by --tokenizer when given, else by the
 * target server's own /tokenize (vLLM, SGLang, llama.cpp: exact, template included), else words
 * (a server without one; said on stderr and in the record).
 * @module
 */
import { resolve } from "node:path";
import { dataError, usageError } from "../cli/errors.ts";
import { buildDatasetPromptSet, type DatasetCounter, datasetAlias, DATASET_NAMES, type DatasetOptions, DEFAULT_NUM_PROMPTS, tokenizerCounter, wordCounter } from "../datasets/mod.ts";
import type { TraceSelection } from "../datasets/_window.ts";
import { IkError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { datasetCounter } from "./prompts_build.ts";
import type { PromptSet } from "../prompts/mod.ts";
import type { LoadedTokenizer } from "../tokenizer/load_tokenizer.ts";
import type { CommandContext } from "./context.ts";

/** The flags this reads. */
export interface ServeDatasetFlags {
  dataset?: string;
  datasetPath?: string;
  prompts?: string;
  limitPerBucket: number;
  buckets: readonly string[];
  seed: number;
  /** A replay takes every row by default (a sample would thin the trace's arrivals). */
  mode?: string;
}

/** Usage rules of the dataset flags (64); null when no dataset is asked for. */
export function checkDatasetFlags(f: ServeDatasetFlags): { name: string; path: string } | null {
  if (f.dataset === undefined && f.datasetPath === undefined) return null;
  if (f.dataset === undefined) throw usageError("--dataset-path", "needs --dataset NAME", `one of ${DATASET_NAMES.join(", ")}`);
  if (f.datasetPath === undefined) throw usageError("--dataset", "needs --dataset-path FILE (a local file; nothing is downloaded)");
  if (f.prompts !== undefined) throw usageError("--dataset", "cannot be used with --prompts", "give a prompt set or a dataset, not both");
  return { name: f.dataset, path: f.datasetPath };
}

/** The datasets that are request traces (rows with arrival times). */
const TRACE_DATASETS: readonly string[] = ["mooncake", "azure", "burstgpt"];

/**
 * Builds the set: the first `--limit-per-bucket` prompts of the seeded sample (default 1000, vLLM's
 * --num-prompts; every row for --mode trace), seeded by --seed. From a trace (mooncake, azure,
 * burstgpt) `--limit-per-bucket N` keeps its first N rows in time order instead, a window of the
 * trace as AIPerf's fixed schedule takes one (a seeded subset would thin its arrivals), and as
 * `--prompts SET --limit-per-bucket N` takes the first N of a set written in arrival order.
 */
export async function datasetPromptSet(
  ctx: CommandContext,
  f: ServeDatasetFlags,
  tok: LoadedTokenizer | null,
  server: { baseUrl: string; api: "chat" | "completions"; model: string; apiKeyEnv?: string },
): Promise<{ set: PromptSet; args: Record<string, unknown> }> {
  const d = checkDatasetFlags(f) as { name: string; path: string };
  const name = datasetAlias(d.name);
  if (!name) throw usageError("--dataset", `unknown dataset '${d.name}'`, `one of ${DATASET_NAMES.join(", ")}`);
  const counter = tok ? tokenizerCounter(tok.count, tok.countPrompt) : await serverCounter(ctx, server);
  const trace = TRACE_DATASETS.includes(name);
  const numPrompts = f.limitPerBucket || (f.mode === "trace" ? 0 : DEFAULT_NUM_PROMPTS);
  // timeWindow is the trace readers' own option (mooncake.ts, traces.ts); buildDataset hands it on.
  const opts: DatasetOptions & TraceSelection = { name, path: resolve(ctx.runtime.cwd(), d.path), counter, numPrompts, seed: f.seed, timeWindow: trace };
  const { set, build } = await buildDatasetPromptSet(opts);
  if (trace && numPrompts > 0) build.dataset.sample = "the first num_prompts rows in time order that pass (a window of the trace, as a replay takes it)";
  const buckets = f.buckets.flatMap((b) => b.split(",")).map((s) => s.trim()).filter(Boolean);
  if (buckets.length && !buckets.some((b) => build.buckets.includes(b))) throw usageError("--buckets", `a ${name} set has one bucket, '${build.buckets[0]}'`, "drop --buckets");
  if (build.n === 0) throw dataError(build.source.file, `no row passed the ${name} filters (${build.dataset.rows} rows read)`, "check the file");
  for (const l of build.limitations) ctx.err(`ik bench serve: dataset: ${l}\n`);
  const ds = build.dataset;
  return {
    set,
    // The notes said on stderr are the record's too (a load or trace run lists them in its limitations).
    args: { dataset: { name, file: build.source.file, source_sha256: build.source.sha256, rows: ds.rows, chosen: ds.chosen, sample: ds.sample, filters: ds.filters, length_method: ds.length_method, set_sha256: build.sha256, notes: build.limitations } },
  };
}

/**
 * The target server's /tokenize as the datasets' counter, or words (with a warning) where it has
 * none: the counter `ik prompts build --tokenize-via` makes (requests as the API counts them, bare
 * text through the completions API, BOS included as vLLM's `tokenizer(text).input_ids` counts it),
 * so both build the same lines and sha256 from the same file.
 */
async function serverCounter(ctx: CommandContext, s: { baseUrl: string; api: "chat" | "completions"; model: string; apiKeyEnv?: string }): Promise<DatasetCounter> {
  try {
    return await datasetCounter(ctx, { tokenizeVia: s.baseUrl, tokenizeEngine: "auto", api: s.api, model: s.model, apiKeyEnv: s.apiKeyEnv });
  } catch (e) {
    if (!(e instanceof IkError) || e.code !== ExitCode.UNAVAILABLE) throw e;
    ctx.err(`ik bench serve: dataset: the server cannot count tokens for ik (${e.message}): lengths are counted as words (approximate)\n`);
    return wordCounter();
  }
}
