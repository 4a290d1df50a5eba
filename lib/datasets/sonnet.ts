/**
 * Sonnet (a text file of poem lines), built as vLLM's sonnet dataset builds it: a fixed
 * instruction, then the file's first lines as a shared prefix of about `prefixLen` tokens, then
 * lines drawn at random (with replacement) up to about `inputLen` tokens; a draw over `inputLen`
 * (the whole request counted) is drawn again. The lines are Python's `readlines()`: each keeps its
 * newline (a last line without one stays without), and blank lines are lines too. The number of
 * lines comes from the average tokens per line: vLLM averages `len(tokenizer(line).input_ids)`
 * over the lines, so each line counts the tokenizer's special tokens (a BOS) too; so does ik, line
 * by line (each distinct line counted once).
 * `cache_salt_at` marks the end of the shared prefix, so a cache tag goes after it.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { SeededRng } from "../stats/mod.ts";
import { openSource, type SourceInfo, sourceLines } from "./_source.ts";
import type { DatasetLine, DatasetOptions, DatasetRead } from "./types.ts";
import { SONNET_DEFAULTS } from "./defaults.ts";

/** vLLM's instruction in front of the poem lines. */
export const SONNET_BASE_PROMPT = "Pick as many lines as you can from these poem lines:\n";

/** Reads a sonnet text file into prompt lines (see the module note). */
export async function readSonnet(o: DatasetOptions): Promise<DatasetRead & { source: SourceInfo }> {
  const inputLen = o.inputLen ?? SONNET_DEFAULTS.inputLen;
  const prefixLen = o.prefixLen ?? SONNET_DEFAULTS.prefixLen;
  const outputLen = o.outputLen ?? SONNET_DEFAULTS.outputLen;
  const src = await openSource(o.path);
  const data: string[] = [];
  let rows = 0, blank = 0;
  for await (const { line, ended } of sourceLines(src)) {
    rows++;
    if (line.trim() === "") blank++;
    data.push(ended ? line + "\n" : line);
  }
  const info = src.info();
  if (data.length === blank) throw usageError("--dataset-path", `${info.file} has no non-blank lines`, "give a text file of poem lines");
  const base = await o.counter.request(SONNET_BASE_PROMPT);
  if (inputLen <= base) throw usageError("--input-len", `${inputLen} is not more than the ${base} tokens of the instruction alone`, "give a larger --input-len");
  if (prefixLen >= inputLen) throw usageError("--prefix-len", `${prefixLen} is not less than --input-len ${inputLen}`, "give a shorter prefix");
  const counts = await countDistinct(data, (t) => o.counter.text(t));
  const total = data.reduce((a, line) => a + (counts.get(line) as number), 0);
  const avg = Math.max(1e-9, total / data.length);
  const nInput = Math.max(1, Math.round((inputLen - base) / avg));
  const nPrefix = Math.min(nInput, Math.max(Math.round((prefixLen - base) / avg), 0));
  // vLLM's prefix is `data[:num_prefix_lines]`: a file shorter than that gives all its lines, once.
  const prefix = SONNET_BASE_PROMPT + data.slice(0, nPrefix).join("");
  const rng = new SeededRng(o.seed, 0x50e7);
  const want = o.numPrompts === 0 ? 1 : o.numPrompts;
  const lines: DatasetLine[] = [];
  const maxDraws = want * 50 + 100;
  let draws = 0, over = 0;
  while (lines.length < want && draws < maxDraws) {
    draws++;
    let text = prefix;
    for (let k = 0; k < nInput - nPrefix; k++) text += data[rng.int(data.length)];
    const n = await o.counter.request(text);
    if (n > inputLen) {
      over++;
      continue;
    }
    lines.push({
      id: `sonnet-${lines.length}`,
      messages: [{ role: "user", content: text }],
      maxTokens: outputLen,
      extra: { input_tokens: n, length_method: o.counter.method, prefix_lines: nPrefix, cache_salt_at: prefix.length },
    });
  }
  if (lines.length < want) {
    throw usageError("--input-len", `after ${draws} draws only ${lines.length} of ${want} prompts fit in ${inputLen} tokens`, "give a larger --input-len");
  }
  const notes = o.numPrompts === 0 ? ["sonnet prompts are drawn, not read: numPrompts 0 made one"] : [];
  if (blank) notes.push(`${blank} blank line(s) kept as lines, as vLLM's readlines() keeps them (drawn like any other line)`);
  return {
    lines, rows, examined: draws, source: info, notes,
    filters: [{ filter: `draws over ${inputLen} tokens, drawn again`, dropped: over }],
    options: { input_len: inputLen, prefix_len: prefixLen, output_len: outputLen, base_prompt: SONNET_BASE_PROMPT, base_tokens: base, avg_line_tokens: Number(avg.toFixed(3)), input_lines: nInput, prefix_lines: nPrefix },
  };
}

/** In flight at once while counting lines (a server's /tokenize is one round trip per line). */
const COUNT_CONCURRENCY = 16;

/** Counts each distinct text once, {@link COUNT_CONCURRENCY} at a time. */
async function countDistinct(texts: readonly string[], count: (t: string) => Promise<number>): Promise<Map<string, number>> {
  const distinct = [...new Set(texts)];
  const out = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < distinct.length) {
      const t = distinct[next++];
      out.set(t, await count(t));
    }
  };
  await Promise.all(Array.from({ length: Math.min(COUNT_CONCURRENCY, distinct.length) }, worker));
  return out;
}
