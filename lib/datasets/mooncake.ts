/**
 * The Mooncake trace (JSONL, one request a line: `timestamp` in ms, `input_length`,
 * `output_length`, `hash_ids`: the ids of the request's 512-token blocks, where requests sharing an
 * id share that block's content). Each row becomes a prompt whose text is its blocks' texts in
 * order: a block's text is made from its hash id alone (seeded words, sized to 512 tokens with the
 * counter's bare-text count less the special tokens, such as a BOS, that an empty text counts), so
 * rows sharing a leading run of ids share that prefix word for word and the trace's prefix reuse
 * reaches the server (as AIPerf replays it). Every hash id gives the same text wherever it appears,
 * a row's last block too when it is full (input_length a multiple of 512); only a partial last
 * block is sized, so that the whole request counts `input_length` (exact with --tokenize-via). max_tokens is `output_length` (lengths at most
 * 1,000,000), `arrival_s` the row's timestamp (ms, 0 or more) from the first chosen row's, in
 * seconds. A seeded sample of rows is kept (all of them with num_prompts 0, as a replay wants; the
 * first num_prompts in time order with `timeWindow`, as `bench serve --mode trace` takes them),
 * written in arrival order (a file out of time order is sorted, and a note says so).
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { fitWords, type LengthEstimate } from "../prompts/exact_length.ts";
import { SeededRng } from "../stats/mod.ts";
import { tokenLength, traceTime } from "./_bounds.ts";
import { SeededPool } from "./_pool.ts";
import { type TraceSelection, WindowPool } from "./_window.ts";
import { TIME_WINDOW_SELECTION } from "../schedule/trace_schedule.ts";
import { openSource, type SourceInfo, sourceLines } from "./_source.ts";
import type { DatasetLine, DatasetOptions, DatasetRead, FilterCount, LengthReport } from "./types.ts";

/** Tokens per hash block in Mooncake traces. */
export const MOONCAKE_BLOCK_TOKENS = 512;

interface Row {
  line: number;
  timestampMs: number;
  input: number;
  output: number;
  hashIds: number[];
}

const ROW_HINT = "a Mooncake trace line is {\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, 47, ...]}";

function rowOf(v: unknown, where: string, line: number): Row {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw dataError(where, "each line must be a JSON object with timestamp, input_length, output_length and hash_ids");
  const o = v as Record<string, unknown>;
  const timestampMs = traceTime(o.timestamp, "timestamp", "ms", where, ROW_HINT);
  const input = tokenLength(o.input_length, 1, "input_length", where, ROW_HINT);
  const output = tokenLength(o.output_length, 0, "output_length", where, ROW_HINT);
  const ids = o.hash_ids;
  if (!Array.isArray(ids) || !ids.every((x) => Number.isSafeInteger(x))) throw dataError(where, "'hash_ids' must be a list of whole numbers");
  return { line, timestampMs, input, output, hashIds: ids as number[] };
}

/** Reads a Mooncake trace into prompt lines (see the module note). */
export async function readMooncake(o: DatasetOptions & TraceSelection): Promise<DatasetRead & { source: SourceInfo }> {
  const src = await openSource(o.path);
  const inWindow = o.timeWindow === true && o.numPrompts > 0;
  const pool = inWindow ? new WindowPool<Row>(o.numPrompts, (r) => r.timestampMs) : new SeededPool<Row>(o.numPrompts, o.seed);
  const drop = { failed: 0, blank: 0, blocks: 0 };
  let rows = 0, passed = 0, latest = -Infinity, unsortedAt: number | null = null;
  for await (const { line, lineNo } of sourceLines(src)) {
    const where = `${src.name}:${lineNo}`;
    if (line.trim() === "") {
      drop.blank++;
      continue;
    }
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      throw dataError(where, `not valid JSON: ${(e as Error).message}`, "each line of a Mooncake trace is one JSON object");
    }
    rows++;
    const r = rowOf(v, where, lineNo);
    if (r.timestampMs < latest) unsortedAt ??= lineNo;
    latest = Math.max(latest, r.timestampMs);
    if (r.output <= 0) {
      drop.failed++;
      continue;
    }
    // hash_ids cover the input in 512-token blocks: ceil(input / 512) of them.
    if (r.hashIds.length !== Math.ceil(r.input / MOONCAKE_BLOCK_TOKENS)) {
      throw dataError(where, `${r.hashIds.length} hash_ids for input_length ${r.input}: a Mooncake row has ceil(input_length / ${MOONCAKE_BLOCK_TOKENS}) = ${Math.ceil(r.input / MOONCAKE_BLOCK_TOKENS)}`, "check that the file is a Mooncake trace (512-token blocks)");
    }
    passed++;
    pool.offer(rows - 1, r);
  }
  const info = src.info();
  if (rows === 0) throw dataError(`${src.name}:1`, "empty trace: no request lines", "a Mooncake trace has one JSON object a line");
  const chosen = pool.sorted().sort((a, b) => a.item.timestampMs - b.item.timestampMs || a.index - b.index);
  const t0 = chosen.length ? chosen[0].item.timestampMs : 0;
  // One text per hash id, sized to 512 bare tokens once and shared by every row that names it.
  // Its own tokens: the bare count less what an empty text counts (a BOS the tokenizer adds is the
  // request's, not the block's), so a block is 512 tokens of the prompt, not 511 and a BOS.
  const blocks = new Map<number, string>();
  const special = await o.counter.text("");
  const blockEst: LengthEstimate = { base: special, perWord: 1.3 };
  const blockText = async (id: number) => {
    let t = blocks.get(id);
    if (t === undefined) {
      t = (await fitWords((ws) => ws.join(" "), (x) => o.counter.text(x), special + MOONCAKE_BLOCK_TOKENS, new SeededRng(o.seed, id, 0xb10c), blockEst, 12)).text;
      blocks.set(id, t);
    }
    return t;
  };
  const floor = await o.counter.request("");
  const est: LengthEstimate = { base: floor, perWord: 1.3 };
  const rep: LengthReport = { n: 0, exact: 0, max_abs_off_target: 0, floor_tokens: floor, raised_to_floor: 0 };
  const lines: DatasetLine[] = [];
  // Rows ending on a full block that miss input_length (the template's tokens, where the counter counts them).
  const fullLast = { n: 0, off: 0 };
  for (const { index, item } of chosen) {
    // A last block that holds all 512 tokens is a block like any other: its id's one text, so a
    // later row that extends this one shares it (AIPerf caches each id's tokens). Only a partial
    // last block is fitted, to make the request count input_length.
    const whole = item.input === item.hashIds.length * MOONCAKE_BLOCK_TOKENS;
    const full = whole ? item.hashIds : item.hashIds.slice(0, -1);
    const head = (await Promise.all(full.map(blockText))).join(" ");
    const last = item.hashIds[item.hashIds.length - 1];
    let target = item.input;
    const headTokens = head ? await o.counter.request(head) : floor;
    let fit: { text: string; tokens: number; exact: boolean };
    if (whole) {
      fit = { text: head, tokens: headTokens, exact: headTokens === target };
      if (!fit.exact) {
        fullLast.n++;
        fullLast.off = Math.max(fullLast.off, Math.abs(headTokens - target));
      }
    } else {
      if (target <= headTokens) {
        target = headTokens + 1;
        rep.raised_to_floor++;
      }
      // The partial last block: seeded by its own id, so rows with the same ids and length get the same text.
      // The search starts from what the shared blocks already count (its zero-word base).
      const rowEst: LengthEstimate = { base: headTokens, perWord: est.perWord };
      fit = await fitWords((ws) => (head ? (ws.length ? `${head} ${ws.join(" ")}` : head) : ws.join(" ")), (t) => o.counter.request(t), target, new SeededRng(o.seed, last, target, 0x1a57), rowEst, 12);
      est.perWord = rowEst.perWord;
    }
    rep.n++;
    if (fit.exact) rep.exact++;
    rep.max_abs_off_target = Math.max(rep.max_abs_off_target, Math.abs(fit.tokens - target));
    const extra: Record<string, unknown> = {
      input_tokens: fit.tokens, length_method: o.counter.method, trace_input_tokens: item.input,
      arrival_s: Number(((item.timestampMs - t0) / 1000).toFixed(6)), trace_timestamp: item.timestampMs, source_line: item.line,
      hash_ids: item.hashIds,
    };
    if (!fit.exact || target !== item.input) extra.target_input_tokens = target;
    lines.push({ id: `mooncake-${index}`, messages: [{ role: "user", content: fit.text }], maxTokens: item.output, extra });
  }
  const filters: FilterCount[] = [{ filter: "output_length 0", dropped: drop.failed }, { filter: "blank lines", dropped: drop.blank }];
  const notes: string[] = [];
  if (rep.exact < rep.n) notes.push(`${rep.n - rep.exact} of ${rep.n} prompts missed the trace's input length by up to ${rep.max_abs_off_target} token(s); their input_tokens are the true counts`);
  if (unsortedAt !== null) notes.push(`the trace's rows are not in time order (line ${unsortedAt} is earlier than a line before it): the prompts are written in time order`);
  if (rep.raised_to_floor) notes.push(`${rep.raised_to_floor} trace input length(s) did not exceed their shared blocks' own count and were raised by one token past it`);
  if (fullLast.n) notes.push(`${fullLast.n} of the prompts that missed end on a full ${MOONCAKE_BLOCK_TOKENS}-token block, kept as that hash id's shared text (not fitted, so a later row naming it shares it): off by up to ${fullLast.off} token(s), the chat template's where the counter counts it`);
  return {
    lines, rows, examined: rows, passed, source: info, filters, notes, lengths: rep,
    options: { block_tokens: MOONCAKE_BLOCK_TOKENS, unique_blocks: blocks.size, arrival_s: "the row's timestamp (ms) from the first chosen row's, in seconds", order: "arrival", file_in_time_order: unsortedAt === null, ...(inWindow ? { selection: TIME_WINDOW_SELECTION } : {}) },
  };
}
