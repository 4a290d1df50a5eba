/**
 * vLLM's `--dataset-name` to an ik prompt set, in one function ({@link promptSetFor}): the file
 * datasets (sharegpt, sonnet, custom) are read by `lib/datasets/` (as `ik prompts build` does),
 * with vLLM's filters and a seeded sample of --num-prompts. `random` is built in memory with ik's synth (lib/prompts `synthExact`): N prompts of the
 * input length (±range ratio, after a shared prefix of P tokens), each with max_tokens the output
 * length (±range ratio), counted by the target server's /tokenize when it has one (exact: the
 * whole request as the server counts it, template included), else as words (approximate, said so).
 * @module
 */
import { createHash } from "node:crypto";
import { type IkError, usageError } from "../cli/errors.ts";
import { parsePromptSetText, type PromptSet } from "../prompts/mod.ts";
import { type LengthCounter, synthExact } from "../prompts/synth_exact.ts";
import { buildDatasetPromptSet, type DatasetCounter, datasetAlias, requestCounter } from "../datasets/mod.ts";
import type { RemoteCounter } from "../tokenize_remote/remote_counter.ts";

/** A usage error (64) whose hint ends with this command's own help. */
function bad(flag: string, what: string, hint = ""): IkError {
  return usageError(flag, what, hint ? `${hint}; see 'ik bench vllm --help'` : "see 'ik bench vllm --help'");
}

/** The random dataset's knobs (vLLM's --random-* flags). */
export interface RandomSpec {
  inputLen: number;
  outputLen: number;
  rangeRatio: number;
  prefixLen: number;
  numPrompts: number;
  seed: number;
}

/** A length counter, with the server's tokenizer behind it when there is one. */
export type VllmCounter = LengthCounter & { remote?: Pick<RemoteCounter, "countPrompt" | "countText"> };

/** What {@link promptSetFor} needs. */
export interface DatasetRequest {
  datasetName: string;
  datasetPath: string | undefined;
  /** The requests' API (chat: the random text is the message; the server's template comes on top). */
  api: "chat" | "completions";
  random: RandomSpec;
  /** Opens the length counter (the server's /tokenize, or words). */
  counter: () => Promise<VllmCounter>;
  /** The file datasets' own lengths (vLLM's --sharegpt-output-len, --custom-output-len, --sonnet-*). */
  file?: { sharegptOutputLen?: number; customOutputLen?: number; sonnetInputLen?: number; sonnetOutputLen?: number; sonnetPrefixLen?: number };
}

/** A prompt set made for one run, with what it cannot promise. */
export interface DatasetSet {
  set: PromptSet;
  /** How lengths were counted (`server_tokenize:vllm`, `words`). */
  lengthMethod: string;
  limitations: string[];
}

/** The file datasets, read by lib/datasets (as `ik prompts build` reads them). */
export const FILE_DATASETS = ["sharegpt", "sonnet", "custom"] as const;

/** vLLM's other dataset names: known, and refused by name. */
const OTHER_VLLM = ["burstgpt", "random-mm", "random-rerank", "hf", "prefix_repetition", "spec_bench", "txt-slices"];

/**
 * The prompt set for `--dataset-name`.
 * @throws IkError 64 for an unknown name, a file dataset without --dataset-path, or
 *   `--dataset-path` with random (as vLLM refuses it); 65 for a malformed file (`file:line`)
 */
export async function promptSetFor(r: DatasetRequest): Promise<DatasetSet> {
  const name = r.datasetName;
  if ((FILE_DATASETS as readonly string[]).includes(name)) {
    if (r.datasetPath === undefined) throw bad("--dataset-path", `is needed with --dataset-name ${name}`, `give the ${name} file`);
    return await fileSet(name as typeof FILE_DATASETS[number], r.datasetPath, r, await r.counter());
  }
  if (OTHER_VLLM.includes(name)) throw bad(`--dataset-name ${name}`, "ik cannot honour this vLLM dataset", "use --dataset-name random, or a prompt set with ik bench serve --prompts");
  if (name !== "random") throw bad("--dataset-name", `'${name}' is not a vLLM dataset name`, "use random, sharegpt, sonnet or custom");
  if (r.datasetPath !== undefined) {
    throw bad("--dataset-path", "cannot be used with --dataset-name random (as vLLM refuses it)", "drop --dataset-path, or name the dataset it holds");
  }
  return await randomSet(r.random, await r.counter(), r.api);
}

/**
 * vLLM's random dataset as an ik prompt set (bucket `random`, ids `random-<i>`).
 * @param api chat: the message text is made to vLLM's length (its bare tokens, --random-input-len
 *   less the tokenizer's special tokens), the server's template on top; completions: the whole
 *   prompt as the server counts it, specials included (the same thing for a completions request)
 */
export async function randomSet(s: RandomSpec, counter: VllmCounter, api: "chat" | "completions" = "completions"): Promise<DatasetSet> {
  // vLLM's total input is prefix + a length drawn around --random-input-len: the prefix is added to
  // the bucket's length and left out of the draw.
  let inputLen = s.inputLen;
  if (api === "chat" && counter.remote) {
    const remote = counter.remote;
    const specials = Math.max(0, (await remote.countPrompt("")) - (await remote.countText("")));
    inputLen = Math.max(1, s.inputLen - specials);
    counter = { method: counter.method, request: (t) => remote.countText(t) };
  }
  const bucket = { name: "random", inputTokens: inputLen + s.prefixLen, outputTokens: s.outputLen };
  let made;
  try {
    made = await synthExact({
      buckets: [bucket], perBucket: s.numPrompts, seed: s.seed, counter, prefixLen: s.prefixLen,
      spread: s.rangeRatio > 0 ? { kind: "range", ratio: s.rangeRatio, fixedInput: s.prefixLen } : { kind: "fixed" },
    });
  } catch (e) {
    if (e instanceof RangeError) throw bad("--random-input-len", e.message, "give a longer --random-input-len or a shorter --random-prefix-len");
    throw e;
  }
  const prompts = parsePromptSetText(made.text, "vllm-random");
  const sha256 = createHash("sha256").update(made.text).digest("hex");
  const name = `vllm-random-in${s.inputLen}-out${s.outputLen}-r${s.rangeRatio}-p${s.prefixLen}-n${s.numPrompts}-seed${s.seed}`;
  const limitations: string[] = [];
  const rep = made.report.random;
  if (counter.method === "words") {
    limitations.push("random prompt lengths are approximate: the server has no /tokenize ik knows, so input tokens were counted as words; the record's prompt_tokens are what the server reported");
  }
  if (rep && rep.exact < rep.n) limitations.push(`${rep.n - rep.exact} of ${rep.n} random prompts missed their input length by up to ${rep.max_abs_off_target} token(s)`);
  if (rep && rep.raised_to_floor) limitations.push(`${rep.raised_to_floor} drawn input length(s) were below the ${rep.floor_tokens} tokens an empty request counts and were raised`);
  return { set: { name, path: name, sha256, prompts, manifest: null }, lengthMethod: counter.method, limitations };
}

/**
 * The datasets' counter with vLLM's text length, `len(tokenizer(text).input_ids)`: the text as a
 * completions prompt counts it (the tokenizer's special tokens included) where the server can say;
 * requests as the server counts them.
 */
export function vllmDatasetCounter(lc: VllmCounter): DatasetCounter {
  const base = requestCounter(lc.method, (t) => lc.request(t));
  const remote = lc.remote;
  return remote ? { ...base, text: (t) => remote.countPrompt(t) } : base;
}

/**
 * sharegpt, sonnet or custom (vLLM's name for the jsonl reader) from a local file, lengths counted
 * as vLLM's datasets count them ({@link vllmDatasetCounter}): ShareGPT's filters and answer lengths
 * and sonnet's line average on `len(tokenizer(text).input_ids)`, BOS included.
 */
async function fileSet(name: typeof FILE_DATASETS[number], path: string, r: DatasetRequest, lc: VllmCounter): Promise<DatasetSet> {
  const f = r.file ?? {};
  const outputLen = name === "sharegpt" ? f.sharegptOutputLen : name === "custom" ? f.customOutputLen : f.sonnetOutputLen;
  const { set, build } = await buildDatasetPromptSet({
    name: datasetAlias(name) ?? "jsonl", path, counter: vllmDatasetCounter(lc), numPrompts: r.random.numPrompts, seed: r.random.seed, outputLen,
    ...(name === "sonnet" ? { inputLen: f.sonnetInputLen, prefixLen: f.sonnetPrefixLen } : {}),
    // vLLM's ShareGPTDataset: conversations[0] is the prompt and [1] the completion, whatever their roles.
    ...(name === "sharegpt" ? { firstTwoTurns: true } : {}),
  });
  const limitations = [...build.limitations];
  if (build.n < r.random.numPrompts) limitations.push(`--num-prompts ${r.random.numPrompts}: only ${build.n} rows of ${path} passed the filters; they are reused (each reuse with a unique prefix tag) to send ${r.random.numPrompts} requests, as vLLM oversamples`);
  return { set, lengthMethod: lc.method, limitations };
}
