/**
 * `vllm bench serve` flags that `ik bench vllm` parses but cannot honour, each with what ik does:
 * `warn` (accepted, one stderr line: the flag changes nothing ik measures, e.g. how vLLM loads its
 * local tokenizer) or `refuse` (exit 64, one line: running without it would measure something
 * else than the user asked for, e.g. a ramp-up). Read from vLLM's `vllm/benchmarks/serve.py`
 * (`add_cli_args`) and `vllm/benchmarks/datasets.py` (`add_dataset_parser`).
 * @module
 */

/** What ik does with one such flag. */
export interface NotHonoured {
  /** `flag`: takes no value; `value`: one value; `list`: one or more (vLLM's nargs). */
  takes: "flag" | "value" | "list";
  action: "warn" | "refuse";
  /** Why, and what to use instead (one clause). */
  why: string;
}

const LOCAL_TOKENIZER = "ik loads no local tokenizer: token counts come from the server (ids or usage), prompt lengths from its /tokenize";
const FILE_DATASET = "ik's dataset readers always take a seeded sample without repeats (reused with a unique prefix tag when the file has too few rows), stream, and send the chat request the server templates";
const HF = "ik reads local files only (no Hugging Face download): --dataset-name hf is refused";
/** A vLLM dataset's own option, for a dataset ik refuses by name. */
const OTHER_DATASET = (name: string) => `it applies only to --dataset-name ${name}, which ik does not read (random, sharegpt, sonnet and custom are read)`;

/** The table, by flag name. */
export const NOT_HONOURED: Readonly<Record<string, NotHonoured>> = {
  "--tokenizer-mode": { takes: "value", action: "warn", why: LOCAL_TOKENIZER },
  "--trust-remote-code": { takes: "flag", action: "warn", why: LOCAL_TOKENIZER },
  "--skip-tokenizer-init": { takes: "flag", action: "warn", why: LOCAL_TOKENIZER },
  "--disable-tqdm": { takes: "flag", action: "warn", why: "ik's progress line is on stderr only when it is a terminal" },
  "--request-id-prefix": { takes: "value", action: "warn", why: "ik sends no request ids; its rows are numbered by seq" },
  "--ready-check-timeout-sec": { takes: "value", action: "warn", why: "ik checks the server once before the first request and exits 69 when it is not ready" },
  "--no-stream": { takes: "flag", action: "warn", why: FILE_DATASET },
  "--no-oversample": { takes: "flag", action: "warn", why: FILE_DATASET },
  "--disable-shuffle": { takes: "flag", action: "warn", why: FILE_DATASET },
  "--skip-chat-template": { takes: "flag", action: "warn", why: FILE_DATASET },
  "--hf-subset": { takes: "value", action: "warn", why: HF },
  "--hf-split": { takes: "value", action: "warn", why: HF },
  "--hf-output-len": { takes: "value", action: "warn", why: HF },
  "--profile": { takes: "flag", action: "refuse", why: "ik does not drive the server's /start_profile and /stop_profile; profile on the server side" },
  "--ramp-up-strategy": { takes: "value", action: "refuse", why: "ik runs one rate per invocation here; for a grid of rates use 'ik bench serve --mode load --rates R,S'" },
  "--ramp-up-start-rps": { takes: "value", action: "refuse", why: "ik runs one rate per invocation here; for a grid of rates use 'ik bench serve --mode load --rates R,S'" },
  "--ramp-up-end-rps": { takes: "value", action: "refuse", why: "ik runs one rate per invocation here; for a grid of rates use 'ik bench serve --mode load --rates R,S'" },
  "--lora-modules": { takes: "list", action: "refuse", why: "ik sends every request to one model; benchmark each adapter with its own --served-model-name" },
  "--lora-assignment": { takes: "value", action: "refuse", why: "ik sends every request to one model; benchmark each adapter with its own --served-model-name" },
  "--use-beam-search": { takes: "flag", action: "refuse", why: "ik measures streamed sampling only" },
  "--logprobs": { takes: "value", action: "refuse", why: "ik asks for logprobs only to count tokens ('ik bench serve --token-ids logprobs')" },
  "--header": { takes: "list", action: "refuse", why: "ik sends no custom headers; give the API key with --api-key-env NAME" },
  "--insecure": { takes: "flag", action: "refuse", why: "ik always verifies TLS certificates" },
  "--plot-timeline": { takes: "flag", action: "refuse", why: "ik draws no plots; 'ik report' renders a record" },
  "--plot-dataset-stats": { takes: "flag", action: "refuse", why: "ik draws no plots; 'ik report' renders a record" },
  "--timeline-itl-thresholds": { takes: "value", action: "refuse", why: "ik draws no plots; 'ik report' renders a record" },
  "--probe-request-rate": { takes: "value", action: "refuse", why: "ik sends no probe requests beside the workload" },
  "--self-timed": { takes: "flag", action: "refuse", why: "ik replays no timed traces" },
  "--random-batch-size": { takes: "value", action: "refuse", why: "ik benchmarks generation, not embedding batches" },
  "--chat-template-kwargs": { takes: "value", action: "refuse", why: "ik applies no chat template itself; send them in the request: --extra-body '{\"chat_template_kwargs\": {...}}'" },
  "--no-self-timed": { takes: "flag", action: "warn", why: "ik replays no timed traces here: arrivals follow --request-rate, as without --self-timed" },
  "--hf-name": { takes: "value", action: "warn", why: HF },
  "--no-reranker": { takes: "flag", action: "warn", why: OTHER_DATASET("random-rerank") },
  "--spec-bench-output-len": { takes: "value", action: "warn", why: OTHER_DATASET("spec_bench") },
  "--spec-bench-category": { takes: "value", action: "warn", why: OTHER_DATASET("spec_bench") },
  "--blazedit-min-distance": { takes: "value", action: "warn", why: OTHER_DATASET("hf (blazedit)") },
  "--blazedit-max-distance": { takes: "value", action: "warn", why: OTHER_DATASET("hf (blazedit)") },
  "--random-mm-base-items-per-request": { takes: "value", action: "warn", why: OTHER_DATASET("random-mm") },
  "--random-mm-num-mm-items-range-ratio": { takes: "value", action: "warn", why: OTHER_DATASET("random-mm") },
  "--random-mm-limit-mm-per-prompt": { takes: "value", action: "warn", why: OTHER_DATASET("random-mm") },
  "--random-mm-bucket-config": { takes: "value", action: "warn", why: OTHER_DATASET("random-mm") },
  "--txt-slices-input-len": { takes: "value", action: "warn", why: OTHER_DATASET("txt-slices") },
  "--txt-slices-output-len": { takes: "value", action: "warn", why: OTHER_DATASET("txt-slices") },
  "--prefix-repetition-prefix-len": { takes: "value", action: "warn", why: OTHER_DATASET("prefix_repetition") },
  "--prefix-repetition-suffix-len": { takes: "value", action: "warn", why: OTHER_DATASET("prefix_repetition") },
  "--prefix-repetition-num-prefixes": { takes: "value", action: "warn", why: OTHER_DATASET("prefix_repetition") },
  "--prefix-repetition-output-len": { takes: "value", action: "warn", why: OTHER_DATASET("prefix_repetition") },
};

/** The one line for a flag of the table that was given: a warning (null action) or the refusal's reason. */
export function notHonouredLine(flag: string): string {
  const n = NOT_HONOURED[flag];
  return n.action === "warn" ? `${flag} is accepted and changes nothing here: ${n.why}` : `ik cannot honour it: ${n.why}`;
}

/** kebab `--tokenizer-mode` → camel `tokenizerMode` (the parsed value's key). */
export function camelOf(flag: string): string {
  return flag.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
