/**
 * ShareGPT (the ShareGPT_V3 JSON: a top-level array of `{id, conversations: [{from, value}]}`),
 * read as vLLM's ShareGPT dataset reads it: the prompt is the first human turn (vLLM's own pair, the
 * first two turns whatever their roles, with `firstTwoTurns`), max_tokens the token length of the
 * recorded answer that follows it (or `outputLen`), and vLLM's filters drop a
 * pair whose prompt or answer is under 4 tokens, whose prompt is over 1024 tokens, or whose
 * prompt + answer is over 2048 (the answer's minimum is not checked when `outputLen` is given).
 * Lengths are the bare texts' tokens, as vLLM counts `tokenizer(text).input_ids`.
 *
 * The file is streamed (one element's text at a time); only a seeded pool of candidate pairs is
 * held, and the pairs are examined in the pool's seeded order until `numPrompts` pass. When the
 * pool runs out first, the file is read again with a pool four times larger (the same seed gives
 * the same set either way). With `numPrompts` 0 every pair is held and counted.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { openSource, type SourceInfo } from "./_source.ts";
import { JsonArrayReader } from "./_json_array.ts";
import { SeededPool } from "./_pool.ts";
import type { DatasetLine, DatasetOptions, DatasetRead, FilterCount } from "./types.ts";

/** vLLM's `is_valid_sequence` bounds. */
export const SHAREGPT_LIMITS = { minLen: 4, maxPromptLen: 1024, maxTotalLen: 2048 } as const;

const HUMAN = new Set(["human", "user"]);
const NOT_ANSWER = new Set(["human", "user", "system"]);

interface Pair {
  line: number;
  sourceId: string | null;
  prompt: string;
  answer: string;
}

interface Pass {
  pairs: { index: number; item: Pair }[];
  evicted: number;
  rows: number;
  noTurns: number;
  noPair: number;
  info: SourceInfo;
}

/** The first human turn and the answer after it (or the first two turns), or why there is none. */
function pairOf(entry: unknown, where: string, firstTwo: boolean): Omit<Pair, "line"> | "no_turns" | "no_pair" {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) throw dataError(where, "each element must be an object with 'conversations'");
  const e = entry as Record<string, unknown>;
  const conv = e.conversations;
  if (conv === undefined) return "no_turns";
  if (!Array.isArray(conv)) throw dataError(where, "'conversations' must be a list of {from, value}");
  for (const t of conv) {
    if (t === null || typeof t !== "object" || typeof (t as Record<string, unknown>).from !== "string" || typeof (t as Record<string, unknown>).value !== "string") {
      throw dataError(where, "each turn of 'conversations' must be {\"from\": string, \"value\": string}");
    }
  }
  if (conv.length < 2) return "no_turns";
  const turns = conv as { from: string; value: string }[];
  const sourceId = typeof e.id === "string" || typeof e.id === "number" ? String(e.id) : null;
  if (firstTwo) return { sourceId, prompt: turns[0].value, answer: turns[1].value };
  const h = turns.findIndex((t) => HUMAN.has(t.from.toLowerCase()));
  if (h === -1 || h + 1 >= turns.length || NOT_ANSWER.has(turns[h + 1].from.toLowerCase())) return "no_pair";
  return { sourceId, prompt: turns[h].value, answer: turns[h + 1].value };
}

async function readPass(path: string, seed: number, poolSize: number, firstTwo: boolean): Promise<Pass> {
  const src = await openSource(path);
  const pool = new SeededPool<Pair>(poolSize, seed);
  let noTurns = 0, noPair = 0, rows = 0;
  const reader = new JsonArrayReader(src.name, (value, line, index) => {
    rows++;
    const p = pairOf(value, `${src.name}:${line}`, firstTwo);
    if (p === "no_turns") noTurns++;
    else if (p === "no_pair") noPair++;
    else pool.offer(index, { ...p, line });
  });
  for await (const text of src.chunks) reader.push(text);
  reader.end();
  return { pairs: pool.sorted(), evicted: pool.evicted, rows, noTurns, noPair, info: src.info() };
}

/** Reads a ShareGPT file into prompt lines (see the module note). */
export async function readShareGpt(o: DatasetOptions): Promise<DatasetRead & { source: SourceInfo }> {
  const { minLen, maxPromptLen, maxTotalLen } = SHAREGPT_LIMITS;
  const want = o.numPrompts;
  let poolSize = want === 0 ? 0 : Math.max(2 * want, want + 256);
  const cache = new Map<number, [number, number | null]>();
  for (;;) {
    const pass = await readPass(o.path, o.seed, poolSize, o.firstTwoTurns === true);
    const drop = { short: 0, long: 0, total: 0 };
    const lines: DatasetLine[] = [];
    let examined = 0;
    for (const { index, item } of pass.pairs) {
      if (want !== 0 && lines.length >= want) break;
      examined++;
      let lens = cache.get(index);
      if (!lens) {
        lens = [await o.counter.text(item.prompt), o.outputLen === undefined ? await o.counter.text(item.answer) : null];
        cache.set(index, lens);
      }
      const [promptLen, answerLen] = lens;
      const outLen = o.outputLen ?? (answerLen as number);
      if (promptLen < minLen || (o.outputLen === undefined && outLen < minLen)) {
        drop.short++;
        continue;
      }
      if (promptLen > maxPromptLen) {
        drop.long++;
        continue;
      }
      if (promptLen + outLen > maxTotalLen) {
        drop.total++;
        continue;
      }
      const extra: Record<string, unknown> = {
        input_tokens: await o.counter.request(item.prompt),
        prompt_text_tokens: promptLen,
        length_method: o.counter.method,
        source_line: item.line,
      };
      if (answerLen !== null) extra.answer_tokens = answerLen;
      if (item.sourceId !== null) extra.source_id = item.sourceId;
      lines.push({ id: `sharegpt-${index}`, messages: [{ role: "user", content: item.prompt }], maxTokens: Math.max(1, outLen), extra });
    }
    if (want !== 0 && lines.length < want && pass.evicted > 0) {
      poolSize *= 4;
      continue;
    }
    const filters: FilterCount[] = [
      { filter: "fewer than 2 turns (vLLM: entries without two conversation turns)", dropped: pass.noTurns },
      { filter: "no human turn followed by an answer", dropped: pass.noPair },
      { filter: `prompt${o.outputLen === undefined ? " or answer" : ""} under ${minLen} tokens`, dropped: drop.short },
      { filter: `prompt over ${maxPromptLen} tokens`, dropped: drop.long },
      { filter: `prompt + ${o.outputLen === undefined ? "answer" : "output_len"} over ${maxTotalLen} tokens`, dropped: drop.total },
    ];
    const notes: string[] = [];
    if (want !== 0 && lines.length < want) notes.push(`only ${lines.length} of the ${want} prompts asked for passed the filters (no row is repeated)`);
    if (examined < pass.pairs.length) notes.push(`the length filters were applied to the ${examined} pairs examined in the seeded order until ${want} passed, not to every row`);
    return {
      lines, rows: pass.rows, examined, filters, notes, source: pass.info,
      options: { output_len: o.outputLen ?? null, min_len: minLen, max_prompt_len: maxPromptLen, max_total_len: maxTotalLen, prompt: o.firstTwoTurns ? "the first turn (and the second as the answer), whatever their roles, as vLLM" : "first human turn", max_tokens: o.outputLen === undefined ? "the answer's tokens" : "output_len" },
    };
  }
}
