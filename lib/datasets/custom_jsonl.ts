/**
 * JSONL of prompts: vLLM's custom dataset fields (`{"prompt": "...", "output_tokens": N}`, the
 * latter optional) or OpenAI chat `{"messages": [...]}`. max_tokens is `outputLen` when given,
 * else the line's `output_tokens`, else 256 (vLLM's --custom-output-len default). A seeded sample
 * of `numPrompts` lines is kept while the file streams.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { isTokenCount, MAX_PROMPT_TOKENS } from "../prompts/limits.ts";
import { openSource, type SourceInfo, sourceLines } from "./_source.ts";
import { SeededPool } from "./_pool.ts";
import type { DatasetLine, DatasetOptions, DatasetRead } from "./types.ts";

/** vLLM's --custom-output-len default. */
export const CUSTOM_DEFAULT_OUTPUT_LEN = 256;

interface Row {
  line: number;
  messages: DatasetLine["messages"];
  outputTokens: number | null;
}

function rowOf(obj: unknown, where: string, line: number): Row {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) throw dataError(where, "each line must be a JSON object with 'prompt' or 'messages'");
  const o = obj as Record<string, unknown>;
  let messages: Row["messages"];
  if (o.prompt !== undefined) {
    if (typeof o.prompt !== "string" || o.prompt === "") throw dataError(where, "'prompt' must be a non-empty string");
    messages = [{ role: "user", content: o.prompt }];
  } else if (o.messages !== undefined) {
    const m = o.messages;
    if (!Array.isArray(m) || m.length === 0 || !m.every((x) => x !== null && typeof x === "object" && !Array.isArray(x) && typeof (x as { role?: unknown }).role === "string")) {
      throw dataError(where, "'messages' must be a non-empty list of {role, content} objects");
    }
    messages = m as Row["messages"];
  } else throw dataError(where, "needs 'prompt' (vLLM's custom dataset) or 'messages' (OpenAI chat)");
  const ot = o.output_tokens;
  if (ot !== undefined && ot !== null && !isTokenCount(ot, 1)) {
    throw dataError(where, `'output_tokens' must be a positive integer, at most ${MAX_PROMPT_TOKENS}${typeof ot === "number" ? ` (got ${ot})` : ""}`);
  }
  return { line, messages, outputTokens: typeof ot === "number" ? ot : null };
}

/** Reads a JSONL dataset into prompt lines (see the module note). */
export async function readCustomJsonl(o: DatasetOptions): Promise<DatasetRead & { source: SourceInfo }> {
  const src = await openSource(o.path);
  const pool = new SeededPool<Row>(o.numPrompts, o.seed);
  let rows = 0, blank = 0;
  for await (const { line, lineNo } of sourceLines(src)) {
    if (line.trim() === "") {
      blank++;
      continue;
    }
    const where = `${src.name}:${lineNo}`;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw dataError(where, `not JSON (${(e as Error).message.replace(/\s+/g, " ").slice(0, 120)})`);
    }
    pool.offer(rows++, rowOf(obj, where, lineNo));
  }
  const info = src.info();
  const lines: DatasetLine[] = [];
  for (const { index, item } of pool.sorted()) {
    const extra: Record<string, unknown> = { source_line: item.line };
    const m = item.messages;
    // Only a lone user message is counted: a conversation's template cannot be counted from one text.
    if (m.length === 1 && typeof m[0].content === "string") {
      extra.input_tokens = await o.counter.request(m[0].content);
      extra.length_method = o.counter.method;
    }
    if (item.outputTokens !== null) extra.output_tokens = item.outputTokens;
    lines.push({ id: `jsonl-${index}`, messages: m, maxTokens: o.outputLen ?? item.outputTokens ?? CUSTOM_DEFAULT_OUTPUT_LEN, extra });
  }
  return {
    lines, rows, examined: lines.length, source: info, notes: [],
    filters: [{ filter: "blank lines", dropped: blank }],
    options: { output_len: o.outputLen ?? null, default_output_len: CUSTOM_DEFAULT_OUTPUT_LEN, max_tokens: o.outputLen !== undefined ? "output_len" : "output_tokens, else the default" },
  };
}
