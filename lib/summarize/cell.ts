/**
 * One cell of a unit (seed 003): the headline and diagnostic numbers from vLLM's result file and
 * the cell's container lines, and the integrity lines the cell raises. Pure: the caller reads
 * the files.
 * @module
 */
import type { ContainerLog, ContainerRec } from "./container_log.ts";
import { type ClientRow, requestRows, type RowsLayout } from "./request_rows.ts";
import type { RunRow } from "./runs_table.ts";
import type { ReadResult } from "./vllm_result.ts";
import { impossibleValues, pickNumber } from "./vllm_result.ts";

/** The container log of a cell: where it was looked for, and what was in it (null: not found). */
export interface CellContainer {
  /** The path looked for, or null when runs.tsv names none and --container was not given. */
  path: string | null;
  log: ContainerLog | null;
}

/** One cell's numbers (the JSON output's `runs[]`, snake_case). Null: not available. */
export interface CellRow {
  tag: string;
  pass: string;
  dataset: string;
  conc: number;
  /**
   * True when conc is a request rate (req/s), not a concurrency: the cell is an `ik export` of an
   * open-loop rate level (its result file carries ik_evidence_id, the dataset ends in `-rate`,
   * request_rate equals conc, no max_concurrency). vLLM's own files never carry ik_evidence_id.
   */
  conc_is_rate: boolean;
  rc: string;
  /** False when the result file is missing or unreadable (then every number is null). */
  has_result: boolean;
  /** "detailed" (per-request arrays with latencies), "legacy" (without), "none" (no arrays). */
  result_layout: RowsLayout | null;
  /** Objects in the result file (more than 1: `--append-result`; the last is used). */
  appended: number | null;
  container_log: string | null;
  n_prompts: number | null;
  completed: number | null;
  /** Null when the file does not say (no `failed` key and no per-request arrays). */
  failed: number | null;
  duration: number | null;
  out_tps: number | null;
  total_tps: number | null;
  req_s: number | null;
  ttft_p50: number | null;
  ttft_p99: number | null;
  tpot_p50: number | null;
  tpot_p99: number | null;
  /** 1000 / TPOT p50, tok/s. */
  per_stream: number | null;
  itl_p50: number | null;
  e2el_p50_s: number | null;
  mean_in: number | null;
  mean_out: number | null;
  /** gen / (gen - accepted) over the measured container lines. */
  tau: number | null;
  /** proposed / (gen - accepted). */
  depth: number | null;
  /** sum(output_len - 1) / sum(frames after the first), from the client's ITL arrays. */
  tau_client: number | null;
  acc_prop: number | null;
  /** Measured container lines (warm-ups dropped). */
  mtp_n: number;
  prompt_tok: number | null;
  cached_tok: number | null;
  cached_share: number | null;
  /** Measured requests with any cached prompt token. */
  cached_n: number;
  client_out: number | null;
  container_gen: number | null;
}

/** What a cell needs. */
export interface CellInput {
  run: RunRow;
  result: ReadResult;
  container: CellContainer;
  /** --sb-out: the forced Spec-Bench output length. */
  sbOut: number;
  /** --cache-max: the largest cached share of prompt tokens allowed. */
  cacheMax: number;
}

/** A summarised cell. */
export interface CellOutcome {
  row: CellRow;
  integrity: string[];
  cacheBad: string[];
  /** The cell's measured container lines, in serial order. */
  meas: ContainerRec[];
  /** The client's per-request rows, or null without arrays. */
  rows: ClientRow[] | null;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: readonly number[]) => (xs.length ? sum(xs) / xs.length : null);

function emptyRow(run: RunRow): CellRow {
  return {
    tag: run.tag, pass: run.pass, dataset: run.dataset, conc: run.conc, conc_is_rate: false, rc: run.rc, has_result: false, result_layout: null, appended: null,
    container_log: null, n_prompts: null, completed: null, failed: null, duration: null, out_tps: null, total_tps: null, req_s: null,
    ttft_p50: null, ttft_p99: null, tpot_p50: null, tpot_p99: null, per_stream: null, itl_p50: null, e2el_p50_s: null, mean_in: null,
    mean_out: null, tau: null, depth: null, tau_client: null, acc_prop: null, mtp_n: 0, prompt_tok: null, cached_tok: null,
    cached_share: null, cached_n: 0, client_out: null, container_gen: null,
  };
}

/**
 * Whether runs.tsv's conc of this cell is the rate of an `ik export`ed rate level (see
 * CellRow.conc_is_rate): the file's request_rate is that rate, or below it where a partial merge
 * scaled the level's target to the share of its schedule that was sent.
 */
function concIsRate(run: RunRow, res: Record<string, unknown>): boolean {
  const rate = res.request_rate;
  return typeof res.ik_evidence_id === "string" && run.dataset.endsWith("-rate") && typeof rate === "number" && rate > 0 && rate <= run.conc &&
    res.max_concurrency == null;
}

/** Summarises one cell. */
export function summarizeCell(x: CellInput): CellOutcome {
  const { run } = x;
  const tag = run.tag;
  const row = emptyRow(run);
  const integrity: string[] = [], cacheBad: string[] = [];
  if (!x.result.ok) {
    integrity.push(`${tag}: no result JSON (${x.result.reason}); rc ${run.rc || "None"}`);
    return { row, integrity, cacheBad, meas: [], rows: null };
  }
  const res = x.result.result;
  if (!["0", "None", ""].includes(run.rc)) integrity.push(`${tag}: client rc ${run.rc}`);
  if (typeof res.ik_interrupted === "string") integrity.push(`${tag}: interrupted run (${res.ik_interrupted})`);
  for (const why of impossibleValues(res)) integrity.push(`${tag}: ${why}`);
  const { rows, layout } = requestRows(res);
  const ok = rows ? rows.filter((r) => r.ok) : [];
  const mine = x.container.log ? x.container.log.recs.filter((r) => run.serialLo < r.serial && r.serial <= run.serialHi) : [];
  const meas = mine.slice(run.warmups);
  const gen = sum(meas.map((r) => r.gen)), acc = sum(meas.map((r) => r.acc)), prop = sum(meas.map((r) => r.prop));
  const steps = gen - acc;
  const withFrames = ok.filter((r) => r.frames !== null);
  const frames = sum(withFrames.map((r) => r.frames!));
  const ptok = sum(meas.map((r) => r.prompt)), ctok = sum(meas.map((r) => r.cached));
  const completed = pickNumber(res, "completed") ?? (rows ? ok.length : null);
  // null: the file does not say (v0.9–v0.11 without --save-detailed have neither `failed` nor arrays)
  const failed = pickNumber(res, "failed") ?? (rows ? rows.length - ok.length : null);
  const tpot50 = pickNumber(res, "p50_tpot_ms", "median_tpot_ms");
  const e2e50 = pickNumber(res, "p50_e2el_ms", "median_e2el_ms");
  const haveLog = x.container.log !== null;
  const inputs = ok.map((r) => r.inp).filter((v): v is number => v !== null);
  Object.assign(row, {
    has_result: true, result_layout: layout, conc_is_rate: concIsRate(run, res), appended: x.result.appended, container_log: haveLog ? x.container.path : null,
    n_prompts: pickNumber(res, "num_prompts"), completed, failed, duration: pickNumber(res, "duration"),
    out_tps: pickNumber(res, "output_throughput"), total_tps: pickNumber(res, "total_token_throughput"), req_s: pickNumber(res, "request_throughput"),
    ttft_p50: pickNumber(res, "p50_ttft_ms", "median_ttft_ms"), ttft_p99: pickNumber(res, "p99_ttft_ms"), tpot_p50: tpot50,
    tpot_p99: pickNumber(res, "p99_tpot_ms"), per_stream: tpot50 ? 1000 / tpot50 : null, itl_p50: pickNumber(res, "p50_itl_ms", "median_itl_ms"),
    e2el_p50_s: e2e50 ? e2e50 / 1000 : null, mean_in: mean(inputs), mean_out: rows ? mean(ok.map((r) => r.out)) : null,
    tau: haveLog && steps > 0 ? gen / steps : null, depth: haveLog && steps > 0 ? prop / steps : null,
    tau_client: frames ? sum(withFrames.filter((r) => r.frames).map((r) => r.out - 1)) / frames : null,
    acc_prop: prop ? acc / prop : null, mtp_n: meas.length, prompt_tok: haveLog ? ptok : null, cached_tok: haveLog ? ctok : null,
    cached_share: ptok ? ctok / ptok : null, cached_n: meas.filter((r) => r.cached > 0).length,
    // without per-request arrays vLLM's total_output_tokens is the same sum (failed requests count 0)
    client_out: rows ? sum(ok.map((r) => r.out)) : pickNumber(res, "total_output_tokens"),
    container_gen: haveLog ? gen : null,
  } satisfies Partial<CellRow>);
  if (failed) integrity.push(`${tag}: ${failed} failed requests`);
  if (row.n_prompts !== null && completed !== row.n_prompts) integrity.push(`${tag}: ${completed ?? "?"} completed of ${row.n_prompts} prompts`);
  if (!haveLog) {
    integrity.push(x.container.path
      ? `${tag}: no container log found (looked for ${x.container.path}); without it tau, depth and the request-count and token checks are impossible`
      : `${tag}: no container log found (runs.tsv names none for this cell and --container was not given); without it tau, depth and the request-count and token checks are impossible`);
  } else {
    // Unknown failures: every prompt not completed was sent and counts (as failed) against the lines.
    const unsaid = failed === null && row.n_prompts !== null && completed !== null ? Math.max(row.n_prompts - completed, 0) : null;
    const want = (completed ?? 0) + (failed ?? unsaid ?? 0) + run.warmups;
    if (mine.length !== want) {
      const fails = failed !== null ? String(failed) : `${unsaid ?? "?"} (failed not in the result file: num_prompts - completed)`;
      integrity.push(`${tag}: ${mine.length} container lines in serials (${run.serialLo},${run.serialHi}] vs ${completed ?? 0}+${fails} requests + ${run.warmups} warm-ups (foreign traffic, or lines missing)`);
    }
    const client = row.client_out ?? 0;
    if (client !== gen) {
      const d = (client - gen) / Math.max(gen, 1) * 100;
      integrity.push(`${tag}: client sum(output_lens) ${client} != container sum(gen) ${gen} (${d >= 0 ? "+" : ""}${d.toFixed(2)} %)`);
    }
  }
  if (run.dataset === "specbench") {
    if (!rows) integrity.push(`${tag}: no per-request arrays (saved without --save-detailed): the ${x.sbOut}-token output length cannot be checked`);
    else {
      const bad = ok.map((r) => r.out).filter((o) => o !== x.sbOut);
      if (bad.length) {
        integrity.push(`${tag}: ${bad.length}/${ok.length} outputs != ${x.sbOut} tokens (length forcing did not hold; e.g. ${bad.slice(0, 5).join(", ")})`);
      }
    }
  }
  if (row.cached_share !== null && row.cached_share > x.cacheMax) {
    cacheBad.push(`${tag}: cached ${(row.cached_share * 100).toFixed(2)} % of prompt tokens (${row.cached_n} requests) > ${(x.cacheMax * 100).toFixed(2)} %`);
  }
  return { row, integrity, cacheBad, meas, rows };
}
