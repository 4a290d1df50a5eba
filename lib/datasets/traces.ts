/**
 * Request traces that carry only lengths and times: BurstGPT (CSV `Timestamp, Model, Request
 * tokens, Response tokens, Total tokens, Log Type`; vLLM keeps `Model == GPT-4` rows with a
 * positive `Response tokens`, a failed request having 0) and the Azure LLM inference trace (CSV
 * `TIMESTAMP, ContextTokens, GeneratedTokens`). A seeded sample of rows is kept (with `timeWindow`
 * the first num_prompts in time order, as `bench serve --mode trace` takes them); each becomes a
 * prompt built to the row's input length with the exact-length search (the counter's own count:
 * exact with --tokenize-via), max_tokens the row's output length, and `arrival_s` (seconds, from
 * the trace's earliest row for Azure; BurstGPT's own Timestamp, 0 or more) kept for a later trace
 * replay. The prompts are written in arrival order: a file whose rows are not in time order is
 * sorted by time (as a timestamp replay schedules it), and a note says so. Lengths above
 * 1,000,000 tokens, impossible dates and non-decimal numbers are refused (65, `file:line`).
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { fitWords, type LengthEstimate } from "../prompts/exact_length.ts";
import { SeededRng } from "../stats/mod.ts";
import { openSource, type SourceInfo, sourceLines } from "./_source.ts";
import { csvHeader, csvNumber, splitCsvLine } from "./_csv.ts";
import { SeededPool } from "./_pool.ts";
import { type TraceSelection, WindowPool } from "./_window.ts";
import { TIME_WINDOW_SELECTION } from "../schedule/trace_schedule.ts";
import { tokenLength, traceTime } from "./_bounds.ts";
import type { DatasetLine, DatasetOptions, DatasetRead, FilterCount, LengthReport } from "./types.ts";

/** The model vLLM's BurstGPT reader keeps. */
export const BURSTGPT_MODEL = "GPT-4";

interface TraceRow {
  line: number;
  arrivalS: number;
  timestamp: string;
  inTokens: number;
  outTokens: number;
  model?: string;
}

/**
 * An Azure trace's TIMESTAMP in seconds since the epoch, or NaN: the 2023 files' `2023-11-16
 * 18:15:46.6805900` (UTC, 7 fraction digits), the 2024 files' `2024-05-10 00:00:00.009930+00:00`
 * (an offset, 6 digits, or none at all: `…00:00+00:00`), `Z` too. A date or time that does not
 * exist (`2023-02-30`, hour 25, an offset past 23:59) is NaN.
 */
export function azureTimestampS(s: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(s.trim());
  if (!m) return NaN;
  const f = [+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]] as const;
  const d = new Date(Date.UTC(...f));
  // Date.UTC rolls over (Feb 30 is Mar 2, hour 25 the next day, year 50 is 1950): refuse what moved.
  if (d.getUTCFullYear() !== f[0] || d.getUTCMonth() !== f[1] || d.getUTCDate() !== f[2] || d.getUTCHours() !== f[3] || d.getUTCMinutes() !== f[4] || d.getUTCSeconds() !== f[5]) return NaN;
  const whole = d.getTime() / 1000;
  let offsetS = 0;
  if (m[8] && m[8] !== "Z") {
    const z = /^([+-])(\d\d):?(\d\d)$/.exec(m[8]) as RegExpExecArray;
    if (Number(z[2]) > 23 || Number(z[3]) > 59) return NaN;
    offsetS = (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 3600 + Number(z[3]) * 60);
  }
  return whole - offsetS + (m[7] ? Number("0" + m[7]) : 0);
}

const COLUMNS = {
  burstgpt: ["Timestamp", "Model", "Request tokens", "Response tokens"],
  azure: ["TIMESTAMP", "ContextTokens", "GeneratedTokens"],
} as const;

/** Reads a BurstGPT or Azure trace CSV into prompt lines (see the module note). */
export async function readTrace(o: DatasetOptions & TraceSelection & { name: "burstgpt" | "azure" }): Promise<DatasetRead & { source: SourceInfo }> {
  const src = await openSource(o.path);
  const inWindow = o.timeWindow === true && o.numPrompts > 0;
  const pool = inWindow ? new WindowPool<TraceRow>(o.numPrompts, (r) => r.arrivalS) : new SeededPool<TraceRow>(o.numPrompts, o.seed);
  const burst = o.name === "burstgpt";
  const drop = { model: 0, failed: 0, noInput: 0, blank: 0 };
  let header: ReturnType<typeof csvHeader> | null = null;
  let rows = 0, passed = 0, t0 = Infinity, latest = -Infinity, unsortedAt: number | null = null;
  for await (const { line, lineNo } of sourceLines(src)) {
    const where = `${src.name}:${lineNo}`;
    if (line.trim() === "") {
      if (header) drop.blank++;
      continue;
    }
    if (!header) {
      header = csvHeader(line, where, COLUMNS[o.name]);
      continue;
    }
    const f = splitCsvLine(line, where);
    if (f.length < header.width) throw dataError(where, `${f.length} field(s), the header has ${header.width}`);
    rows++;
    let row: TraceRow;
    if (burst) {
      const ts = csvNumber(f, header, "Timestamp", where);
      row = { line: lineNo, arrivalS: ts, timestamp: f[header.index.get("Timestamp") as number], inTokens: csvNumber(f, header, "Request tokens", where), outTokens: csvNumber(f, header, "Response tokens", where), model: f[header.index.get("Model") as number] };
      if (row.model !== BURSTGPT_MODEL) {
        drop.model++;
        continue;
      }
      traceTime(ts, "Timestamp", "s", where);
    } else {
      const raw = f[header.index.get("TIMESTAMP") as number];
      const ts = azureTimestampS(raw);
      if (!Number.isFinite(ts)) throw dataError(where, `'TIMESTAMP' is not a date and time ('${raw.slice(0, 40)}'), e.g. 2023-11-16 18:15:46.6805900`);
      // Seconds since the epoch for now; made relative to the trace's earliest row once every row was read.
      t0 = Math.min(t0, ts);
      row = { line: lineNo, arrivalS: ts, timestamp: raw, inTokens: csvNumber(f, header, "ContextTokens", where), outTokens: csvNumber(f, header, "GeneratedTokens", where) };
    }
    if (row.arrivalS < latest) unsortedAt ??= lineNo;
    latest = Math.max(latest, row.arrivalS);
    tokenLength(row.inTokens, 0, burst ? "Request tokens" : "ContextTokens", where);
    tokenLength(row.outTokens, 0, burst ? "Response tokens" : "GeneratedTokens", where);
    if (row.outTokens <= 0) {
      drop.failed++;
      continue;
    }
    if (row.inTokens <= 0) {
      drop.noInput++;
      continue;
    }
    passed++;
    pool.offer(rows - 1, row);
  }
  const info = src.info();
  if (!header) throw dataError(`${src.name}:1`, "empty file: no header line", `a ${o.name} trace starts with ${COLUMNS[o.name].join(",")}`);
  const chosen = pool.sorted().sort((a, b) => a.item.arrivalS - b.item.arrivalS || a.index - b.index);
  // Azure: seconds from the trace's earliest row (not its first line: a file need not be in time order).
  if (!burst) for (const { item } of chosen) item.arrivalS = Number((item.arrivalS - t0).toFixed(6));
  const floor = await o.counter.request("");
  const est: LengthEstimate = { base: floor, perWord: 1.3 };
  const rep: LengthReport = { n: 0, exact: 0, max_abs_off_target: 0, floor_tokens: floor, raised_to_floor: 0 };
  const lines: DatasetLine[] = [];
  for (const { index, item } of chosen) {
    let target = item.inTokens;
    if (target <= floor) {
      target = floor + 1;
      rep.raised_to_floor++;
    }
    const fit = await fitWords((ws) => ws.join(" "), (t) => o.counter.request(t), target, new SeededRng(o.seed, index, 0x7ace), est, 12);
    rep.n++;
    if (fit.exact) rep.exact++;
    rep.max_abs_off_target = Math.max(rep.max_abs_off_target, Math.abs(fit.tokens - target));
    const extra: Record<string, unknown> = {
      input_tokens: fit.tokens, length_method: o.counter.method, trace_input_tokens: item.inTokens,
      arrival_s: item.arrivalS, trace_timestamp: item.timestamp, source_line: item.line,
    };
    if (!fit.exact || target !== item.inTokens) extra.target_input_tokens = target;
    lines.push({ id: `${o.name}-${index}`, messages: [{ role: "user", content: fit.text }], maxTokens: item.outTokens, extra });
  }
  const filters: FilterCount[] = burst
    ? [{ filter: `Model is not ${BURSTGPT_MODEL} (vLLM)`, dropped: drop.model }, { filter: "failed: Response tokens 0 (vLLM)", dropped: drop.failed }, { filter: "Request tokens 0", dropped: drop.noInput }]
    : [{ filter: "GeneratedTokens 0", dropped: drop.failed }, { filter: "ContextTokens 0", dropped: drop.noInput }];
  filters.push({ filter: "blank lines", dropped: drop.blank });
  const notes: string[] = [];
  if (rep.exact < rep.n) notes.push(`${rep.n - rep.exact} of ${rep.n} prompts missed the trace's input length by up to ${rep.max_abs_off_target} token(s); their input_tokens are the true counts`);
  if (unsortedAt !== null) notes.push(`the trace's rows are not in time order (line ${unsortedAt} is earlier than a line before it): the prompts are written in time order${burst ? "" : ", arrival_s from the earliest row"}`);
  if (rep.raised_to_floor) notes.push(`${rep.raised_to_floor} trace input length(s) were not more than the ${floor} tokens an empty message counts and were raised to ${floor + 1}`);
  return {
    lines, rows, examined: rows, passed, source: info, filters, notes, lengths: rep,
    options: { columns: COLUMNS[o.name], arrival_s: burst ? "the trace's Timestamp (seconds)" : "seconds since the trace's earliest row", order: "arrival", file_in_time_order: unsortedAt === null, ...(burst ? { model: BURSTGPT_MODEL } : {}), ...(inWindow ? { selection: TIME_WINDOW_SELECTION } : {}) },
  };
}
