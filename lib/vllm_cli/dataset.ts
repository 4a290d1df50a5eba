/**
 * vLLM's `--dataset-name` to an ik prompt set, in one function ({@link promptSetFor}), so the file
 * datasets (sharegpt, sonnet, custom: `lib/datasets/`, built by `ik prompts build`) plug in at one
 * place. `random` is built in memory with ik's synth (lib/prompts `synthExact`): N prompts of the
 * input length (±range ratio, after a shared prefix of P tokens), each with max_tokens the output
 * length (±range ratio), counted by the target server's /tokenize when it has one (exact: the
 * whole request as the server counts it, template included), else as words (approximate, said so).
 * @module
 */
import { createHash } from "node:crypto";
import { type IkError, usageError } from "../cli/errors.ts";
import { parsePromptSetText, type PromptSet } from "../prompts/mod.ts";
import { type LengthCounter, synthExact } from "../prompts/synth_exact.ts";

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

/** What {@link promptSetFor} needs. */
export interface DatasetRequest {
  datasetName: string;
  datasetPath: string | undefined;
  random: RandomSpec;
  /** Opens the length counter (the server's /tokenize, or words); called only for random. */
  counter: () => Promise<LengthCounter>;
}

/** A prompt set made for one run, with what it cannot promise. */
export interface DatasetSet {
  set: PromptSet;
  /** How lengths were counted (`server_tokenize:vllm`, `words`). */
  lengthMethod: string;
  limitations: string[];
}

/** The file datasets another module builds (`ik prompts build`). */
export const FILE_DATASETS = ["sharegpt", "sonnet", "custom"] as const;

/** vLLM's other dataset names: known, and refused by name. */
const OTHER_VLLM = ["burstgpt", "random-mm", "random-rerank", "hf", "prefix_repetition", "spec_bench", "txt-slices"];

/**
 * The prompt set for `--dataset-name`.
 * @throws IkError 64 for a file dataset (until lib/datasets is wired here), an unknown name, or
 *   `--dataset-path` with random (as vLLM refuses it)
 */
export async function promptSetFor(r: DatasetRequest): Promise<DatasetSet> {
  const name = r.datasetName;
  if ((FILE_DATASETS as readonly string[]).includes(name)) {
    throw usageError(`--dataset-name ${name}`, `build the set with 'ik prompts build --dataset ${name} --dataset-path FILE' and pass it with ik bench serve --prompts`, "");
  }
  if (OTHER_VLLM.includes(name)) throw bad(`--dataset-name ${name}`, "ik cannot honour this vLLM dataset", "use --dataset-name random, or a prompt set with ik bench serve --prompts");
  if (name !== "random") throw bad("--dataset-name", `'${name}' is not a vLLM dataset name`, "use random, sharegpt, sonnet or custom");
  if (r.datasetPath !== undefined) {
    throw bad("--dataset-path", "cannot be used with --dataset-name random (as vLLM refuses it)", "drop --dataset-path, or name the dataset it holds");
  }
  return await randomSet(r.random, await r.counter());
}

/** vLLM's random dataset as an ik prompt set (bucket `random`, ids `random-<i>`). */
export async function randomSet(s: RandomSpec, counter: LengthCounter): Promise<DatasetSet> {
  // vLLM's total input is prefix + a length drawn around --random-input-len; ik's synth draws the
  // whole request's length, so the prefix is added to the mean.
  const bucket = { name: "random", inputTokens: s.inputLen + s.prefixLen, outputTokens: s.outputLen };
  let made;
  try {
    made = await synthExact({
      buckets: [bucket], perBucket: s.numPrompts, seed: s.seed, counter, prefixLen: s.prefixLen,
      spread: s.rangeRatio > 0 ? { kind: "range", ratio: s.rangeRatio } : { kind: "fixed" },
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
  if (s.prefixLen > 0 && s.rangeRatio > 0) limitations.push("with --random-prefix-len and --random-range-ratio, ik draws the whole input length within the ratio (vLLM draws only the part after the prefix)");
  return { set: { name, path: name, sha256, prompts, manifest: null }, lengthMethod: counter.method, limitations };
}
