/**
 * One load level as a `vllm bench serve --save-result --save-detailed` result file
 * (../shared/spec/vllm-result-format.md): vLLM's keys and units (seconds in the arrays, ms in the
 * percentile blocks), the per-request arrays in request (send) order with failed requests inside
 * them as vLLM writes them (0 output tokens, 0.0 TTFT and latency, no ITLs, the error text, the
 * prompt length: the best the level holds, `ik_input_lens` naming any not the server's count), and
 * every aggregate recomputed from those arrays vLLM's way (TPOT per request = (latency − ttft) /
 * (output_len − 1) for output_len > 1, ITLs pooled, linear-interpolation percentiles). The
 * string-valued `ik_*` keys (vLLM's `--metadata` slot) say what was measured how.
 * @module
 */
import { promptLens, promptLensNote } from "./prompt_lens.ts";
import type { ExportLevel, Obj } from "./record_source.ts";
import { vllmBlock } from "./vllm_stats.ts";

/** Percentiles written in every block (median_* is also written, as vLLM always does). */
export const EXPORT_PERCENTILES = [50, 90, 95, 99] as const;

/** The record-wide facts every level file carries. */
export interface VllmExportMeta {
  evidenceId: string;
  label: string;
  model: string;
  tokenizer: string;
  /** "chat" or "completions". */
  api: string;
  /** When the record was made (ISO), written as vLLM's `date`: this host's local time, as vLLM writes its own. */
  createdUtc: string;
  levelKind: "rate" | "concurrency";
  closedLoop: boolean;
  burstiness: number;
  /** True when the run had an SLO (then request_goodput is computed under vLLM's goodput rule). */
  slo: boolean;
  /**
   * The record's SLO targets as vLLM's `--goodput` thresholds (ms): ttft, tpot, e2el. Absent or null
   * with no SLO; a null target is not checked.
   */
  goodputMs?: { ttft: number | null; tpot: number | null; e2el: number | null } | null;
  /** The open loop's cap on requests in flight (vLLM's --max-concurrency), or null when none was set. */
  maxInFlight?: number | null;
  /** True when the record is incomplete (the run was interrupted). */
  interrupted?: boolean;
  /**
   * `duration` as vLLM measures it, from the schedule's origin (`ik bench vllm`); else ik's window,
   * first send to last end, so an export's rates equal its record's.
   */
  durationFromOrigin?: boolean;
}

/** Whether a level of the export was cut short by an interrupt (its level record, or the whole record). */
export function levelInterrupted(meta: VllmExportMeta, lv: ExportLevel): boolean {
  return meta.interrupted === true || lv.entry.interrupted === true;
}

/** The ik_* notes of a file. */
export const IK_NOTES = {
  ik_percentiles: "linear interpolation between order statistics (numpy.percentile default), recomputed from the per-request arrays; ik's own records use nearest rank",
  ik_timings: "ttfts: send to ik's first token event; latencies: ik's e2e_ms (send to end of stream, so a latency can exceed ttft + sum(itls) by the stream's tail, where vLLM's client stops at the last token chunk); itls: gaps between ik's token events; start_times: ik's monotonic send clock (s, arbitrary epoch); queue_times: ik's send lag behind the schedule (0 when closed loop)",
  ik_tpot: "the *_tpot_ms blocks are vLLM's TPOT, per request (latency - ttft) / (output_len - 1) over requests with output_len > 1; ik's record TPOT is (t_last - t_first) / (n_tokens - k_first), k_first the tokens of the first token event, so the two differ where a first event carries several tokens (and by the stream's tail after the last token, which latency holds)",
} as const;

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * `date` as vLLM writes it: `datetime.now().strftime("%Y%m%d-%H%M%S")`, the local time of the host
 * (here: of the process writing the file; a record exported on another host takes that host's
 * zone), from an ISO time.
 * @param offsetMin minutes east of UTC; default this host's offset at that time
 */
export function vllmDate(iso: string, offsetMin?: number): string {
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "";
  const d = new Date(t + (offsetMin ?? -new Date(t).getTimezoneOffset()) * 60_000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** One request in vLLM's terms. */
interface VReq {
  ok: boolean;
  inp: number;
  out: number;
  ttft: number;
  latency: number;
  itl: number[];
  start: number;
  queue: number;
  text: string;
  error: string;
}

/** A failed row's `errors` entry (ik's error text, else its kind); "" for a request that succeeded. */
export function vllmError(row: Obj): string {
  return row.ok === true ? "" : String(row.error ?? row.error_kind ?? "failed");
}

function toVllm(row: Obj, doc: Obj | null, inp: number): VReq {
  const ok = row.ok === true;
  const ev = doc && doc.timings && Array.isArray((doc.timings as Obj).event_ms) ? ((doc.timings as Obj).event_ms as unknown[]).map(Number) : [];
  const itl: number[] = [];
  if (ok) for (let i = 1; i < ev.length; i++) itl.push((ev[i] - ev[i - 1]) / 1000);
  const lag = num(row.send_lag_ms);
  return {
    ok,
    // vLLM keeps a failed request's prompt length (set before it is sent): see promptLens
    inp,
    out: ok ? num(row.n_tokens) ?? 0 : 0,
    ttft: ok ? (num(row.ttft_ms) ?? 0) / 1000 : 0,
    latency: ok ? (num(row.e2e_ms) ?? 0) / 1000 : 0,
    itl,
    start: Number(row.t_send_ns) / 1e9,
    queue: lag !== null && lag > 0 ? lag / 1000 : 0,
    text: ok && typeof doc?.text === "string" ? doc.text : "",
    error: vllmError(row),
  };
}

/**
 * vLLM's peak figures: the most chunks received in one whole second after the first request
 * started, and the peak of overlapping [start, end) request intervals, over successful requests.
 */
export function peakStats(reqs: readonly { start: number; ttft: number; latency: number; itl: readonly number[] }[]): { maxTokS: number; maxConcurrent: number } {
  if (!reqs.length) return { maxTokS: 0, maxConcurrent: 0 };
  let first = Infinity, last = -Infinity;
  for (const r of reqs) {
    first = Math.min(first, r.start);
    last = Math.max(last, r.start + r.latency);
  }
  const buckets = new Float64Array(Math.ceil(last - first) + 1);
  for (const r of reqs) {
    let t = r.start + r.ttft;
    const stamp = (x: number) => {
      const b = Math.trunc(x - first);
      if (b >= 0 && b < buckets.length) buckets[b]++;
    };
    stamp(t);
    for (const g of r.itl) stamp((t += g));
  }
  const edges = reqs.flatMap((r) => [[r.start, 1], [r.start + r.latency, -1]] as [number, number][]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0, peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (cur += d));
  return { maxTokS: buckets.reduce((a, b) => Math.max(a, b), 0), maxConcurrent: peak };
}

/**
 * vLLM's benchmark duration: from the schedule's origin (its `benchmark_start_time`, taken before
 * `get_request` sleeps the first arrival gap) to the last request's end. A level without the origin
 * (a record from before ik kept it) keeps ik's window, first send to last end.
 */
export function levelDuration(lv: Pick<ExportLevel, "entry" | "rows">, windowS: number): number {
  const origin = num(lv.entry.t_origin_ns);
  if (origin === null || !lv.rows.length) return windowS;
  let end = -Infinity;
  for (const r of lv.rows) end = Math.max(end, Number(r.t_end_ns));
  return Number.isFinite(end) && end > origin ? (end - origin) / 1e9 : windowS;
}

/**
 * vLLM's request_goodput: successful requests whose ttft, TPOT ((latency - ttft) / (output_len - 1),
 * 0 for a one-token answer) and latency are all within their thresholds, per second of duration.
 * Null without a threshold that maps (the record's SLO had none of them).
 */
function vllmGoodput(good: readonly VReq[], ms: VllmExportMeta["goodputMs"], tpotOf: (r: VReq) => number, per: (x: number) => number | null): number | null {
  if (!ms || (ms.ttft === null && ms.tpot === null && ms.e2el === null)) return null;
  // vLLM's check, slo >= value in seconds
  const within = (limit: number | null, v: number) => limit === null || limit / 1000 >= v;
  return per(good.filter((r) => within(ms.ttft, r.ttft) && within(ms.tpot, tpotOf(r)) && within(ms.e2el, r.latency)).length);
}

/** The ik_goodput note: the thresholds request_goodput used, or why it is null. */
function goodputNote(ms: VllmExportMeta["goodputMs"]): string {
  const keys = ms ? ([["ttft", ms.ttft], ["tpot", ms.tpot], ["e2el", ms.e2el]] as const).filter(([, v]) => v !== null).map(([k, v]) => `${k}:${v}`) : [];
  if (!keys.length) return "request_goodput is null: the record's SLO has no ttft, tpot or e2e target that maps onto vLLM's --goodput";
  return `request_goodput under vLLM's rule, as vllm bench serve --goodput ${keys.join(" ")} computes it from these arrays (the record's SLO targets ttft_p95_ms, tpot_p95_ms, e2e_p95_ms taken as per-request thresholds, as ik's goodput takes them): ` +
    "a successful request is good when every threshold holds, its TPOT vLLM's (see ik_tpot; 0 for a one-token answer), counted per second of duration; the record's goodput_rps uses ik's TPOT and ik's window, so the two can differ";
}

/** Builds one level's result object (key order as vLLM writes it). */
export function vllmLevelResult(meta: VllmExportMeta, lv: ExportLevel): Obj {
  const lens = promptLens(lv.rows);
  const reqs = lv.rows.map((r, i) => toVllm(r, lv.outputs[i], lens.lens[i]));
  const lensNote = promptLensNote(lens);
  const good = reqs.filter((r) => r.ok);
  const summary = (lv.entry.summary ?? {}) as Obj;
  // A merged closed-loop level: every shard ran `level` workers, the fleet their sum.
  const workers = num(lv.entry.fleet_workers) ?? lv.level;
  const window = num(summary.window_s) ?? 0;
  const duration = meta.durationFromOrigin ? levelDuration(lv, window) : window;
  const per = (x: number) => (duration > 0 ? x / duration : null);
  const totalIn = good.reduce((a, r) => a + r.inp, 0), totalOut = reqs.reduce((a, r) => a + r.out, 0);
  const peaks = peakStats(good);
  // vLLM's max_concurrency is its --max-concurrency: the open loop's cap when one was set, else the closed loop's workers.
  const cap = !meta.closedLoop && meta.maxInFlight ? meta.maxInFlight : null;
  const tpotOf = (r: VReq) => (r.out > 1 ? (r.latency - r.ttft) / (r.out - 1) : 0);
  const endpoint = meta.api === "completions" ? "openai" : "openai-chat";
  const out: Obj = {
    date: vllmDate(meta.createdUtc), endpoint_type: endpoint, backend: endpoint, label: meta.label, model_id: meta.model, tokenizer_id: meta.tokenizer,
    num_prompts: reqs.length,
    ik_evidence_id: meta.evidenceId, ik_level: lv.name,
    ik_arrivals: meta.closedLoop
      ? `closed loop: ${workers} workers back to back (vLLM's --max-concurrency ${workers} at request_rate inf)${workers !== lv.level ? `: ${lv.level} on each of ${workers / lv.level} shards` : ""}`
      : (num(lv.entry.target_rate_rps) === null && meta.levelKind === "rate"
        ? "open loop: every request due at the level's start (request_rate inf)"
        : `open loop: ${meta.burstiness === 1 ? "Poisson" : `gamma (burstiness ${meta.burstiness})`} arrivals at request_rate${meta.levelKind === "concurrency" ? ` (ik concurrency level ${lv.level} offered as N / e2e_ref)` : ""}`) +
        (cap ? `, at most ${cap} in flight (vLLM's --max-concurrency ${cap}: a request due while ${cap} were running waited for a slot; queue_times hold that wait)` : ""),
    ...IK_NOTES,
    ik_duration: meta.durationFromOrigin && duration !== window
      ? "from the schedule's origin (vLLM's benchmark start, before the first arrival gap) to the last request's end"
      : "ik's window: from the first send to the last request's end (vLLM's duration also holds the wait before the first arrival)",
    ...(meta.slo ? { ik_goodput: goodputNote(meta.goodputMs ?? null) } : {}),
    ...(lensNote ? { ik_input_lens: lensNote } : {}),
    request_rate: meta.closedLoop ? "inf" : num(lv.entry.target_rate_rps) ?? "inf",
    burstiness: meta.burstiness,
    max_concurrency: cap ?? (meta.closedLoop ? workers : null),
    duration, completed: good.length, failed: reqs.length - good.length, total_input_tokens: totalIn, total_output_tokens: totalOut,
    request_throughput: per(good.length), request_goodput: meta.slo ? vllmGoodput(good, meta.goodputMs ?? null, tpotOf, per) : null,
    output_throughput: per(totalOut), total_token_throughput: per(totalIn + totalOut),
    input_lens: reqs.map((r) => r.inp), output_lens: reqs.map((r) => r.out), ttfts: reqs.map((r) => r.ttft), itls: reqs.map((r) => r.itl),
    latencies: reqs.map((r) => r.latency), start_times: reqs.map((r) => r.start), queue_times: reqs.map((r) => r.queue),
    generated_texts: reqs.map((r) => r.text), errors: reqs.map((r) => r.error),
    max_output_tokens_per_s: peaks.maxTokS, max_concurrent_requests: peaks.maxConcurrent, rtfx: 0,
  };
  if (levelInterrupted(meta, lv)) {
    const aborted = lv.rows.filter((r) => r.error_kind === "aborted").length;
    // A string, as every ik_* key (vLLM's --metadata slot); summarize flags it.
    out.ik_interrupted = `the ik run was interrupted (Ctrl-C or a signal)${lv.entry.interrupted === true ? " during this level" : ""}: ${aborted} of the ${reqs.length} requests counted in failed were aborted by the interrupt, not failed by the server; the level is incomplete`;
  }
  const tpots = good.filter((r) => r.out > 1).map(tpotOf);
  Object.assign(
    out,
    vllmBlock(good.map((r) => r.ttft), "ttft", EXPORT_PERCENTILES),
    vllmBlock(tpots, "tpot", EXPORT_PERCENTILES),
    vllmBlock(good.flatMap((r) => r.itl), "itl", EXPORT_PERCENTILES),
    vllmBlock(good.map((r) => r.latency), "e2el", EXPORT_PERCENTILES),
  );
  return out;
}
