/**
 * The shapes shared by the dataset readers: how lengths are counted, what a reader is asked for,
 * and what it gives back (prompt lines and the filters that dropped rows).
 * @module
 */

/** The dataset formats ik reads from local files. */
export const DATASET_NAMES = ["sharegpt", "sonnet", "jsonl", "burstgpt", "azure", "mooncake"] as const;

/** One of {@link DATASET_NAMES}. */
export type DatasetName = typeof DATASET_NAMES[number];

/** Token counts, as the chosen method knows them (the server's /tokenize, a local tokenizer, or words). */
export interface DatasetCounter {
  /** `server_tokenize:<engine>`, `tokenizer` or `words`. */
  method: string;
  /** Prompt tokens of a request whose only user message is this text (the chat template included when the method knows it). */
  request(text: string): Promise<number>;
  /** Tokens of the bare text (no template), as vLLM's `tokenizer(text).input_ids` counts ShareGPT turns. */
  text(text: string): Promise<number>;
}

/** What to build. */
export interface DatasetOptions {
  name: DatasetName;
  /** The local file (plain or .gz). */
  path: string;
  counter: DatasetCounter;
  /** Prompts wanted (0 = every row that passes the filters). */
  numPrompts: number;
  /** Seeds the sample, the sonnet line choices and the words of trace prompts. */
  seed: number;
  /** max_tokens for every prompt (sharegpt: instead of the answer's length; jsonl: instead of output_tokens; sonnet: default 150). */
  outputLen?: number;
  /** sonnet: input tokens per prompt (default 550). */
  inputLen?: number;
  /** sonnet: tokens of the shared prefix (default 200). */
  prefixLen?: number;
  /**
   * sharegpt: the pair is the first two turns whatever their roles, as vLLM's ShareGPTDataset
   * takes them (`conversations[0]`, `conversations[1]`); default: the first human turn and the
   * answer after it.
   */
  firstTwoTurns?: boolean;
}

/** One prompt made from a row. */
export interface DatasetLine {
  id: string;
  messages: { role: string; content: unknown; [k: string]: unknown }[];
  maxTokens: number;
  /** Extra fields of the prompt-set line (input_tokens, source_line, arrival_s, ...). */
  extra: Record<string, unknown>;
}

/** A filter and how many rows it dropped. */
export interface FilterCount {
  filter: string;
  dropped: number;
}

/** How prompts built to a target length came out (burstgpt, azure). */
export interface LengthReport {
  n: number;
  exact: number;
  max_abs_off_target: number;
  floor_tokens: number;
  raised_to_floor: number;
}

/** What a reader gives back. */
export interface DatasetRead {
  lines: DatasetLine[];
  /** Rows (entries, lines) in the file. */
  rows: number;
  /** Rows looked at in the seeded order before enough passed (all rows when every one was needed). */
  examined: number;
  filters: FilterCount[];
  /**
   * Rows that passed every filter, where the reader looks at every row (the traces: the pool a
   * sample is drawn from). Blank lines are not rows: their filter entry counts lines, not rows.
   */
  passed?: number;
  /** Reader options as used (defaults filled in). */
  options: Record<string, unknown>;
  /** Things a person should know about the set (also printed on stderr). */
  notes: string[];
  lengths?: LengthReport;
}
