/**
 * `ik load-trial run` (seed 004's external client): N requests of a workload as open-loop
 * Poisson arrivals at rate R on absolute deadlines, each streamed through the one client loop;
 * rows journaled to `requests.jsonl` as they complete; then `summary.json` with the attainment,
 * the scheduling validity with its numbers, and percentiles. A row that cannot be journaled (a full
 * disk) stops the sends; the summary is then `complete: false` and the result carries the exit-74
 * error to raise once it is written (if it can be).
 * @module
 */
import { join } from "node:path";
import type { Endpoint } from "../client/mod.ts";
import { requestRow } from "../client/mod.ts";
import { itlMs } from "../client/row.ts";
import { liveLimitation, type LiveRun } from "../live_metrics/live_run.ts";
import { PromptLengthTally } from "../bench/prompt_lengths.ts";
import { Runner } from "../bench/runner.ts";
import { warmUpClient } from "../bench/client_warm_up.ts";
import { promptTokens } from "../bench/single_rows.ts";
import type { EngineKind } from "../engines/mod.ts";
import { IkError } from "../cli/errors.ts";
import { JsonlWriter, writeFailureStop } from "../evidence/mod.ts";
import { runOpenLoop, startLoopLag } from "../executors/mod.ts";
import type { Prompt } from "../prompts/mod.ts";
import { arrivalOffsetsMs } from "../schedule/mod.ts";
import { judgeTrial, type TrialRow, type TrialVerdict } from "./attainment.ts";
import type { Workload } from "./workload.ts";

/** What one trial needs. */
/**
 * The trial's schedule: exactly N seeded Poisson arrivals at rate R (a window far longer than N / R,
 * capped at N), as offsets in ms from the start.
 */
export function trialOffsetsMs(rateRps: number, requests: number, seed: number): Float64Array {
  return arrivalOffsetsMs({ ratePerS: rateRps, durationS: Math.max(60, (requests / rateRps) * 50), maxRequests: requests, seed: [seed, 4, Math.round(rateRps * 1e6)] });
}

/** What one trial run needs. */
export interface TrialConfig {
  ep: Endpoint;
  engineKind: EngineKind;
  model: string;
  apiKey?: string;
  workload: Workload;
  rateRps: number;
  requests: number;
  ttftS: number;
  tpotS: number;
  attainment: number;
  seed: number;
  outDir: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Identity fields for summary.json (HMAC of the URL, workload path, …). */
  identity: Record<string, unknown>;
  /** The schedule, when the caller already drew it (else {@link trialOffsetsMs}). */
  offsetsMs?: Float64Array;
  /** ik's live metrics for this trial (level `trial`), when asked for. */
  live?: LiveRun | null;
}

/** What a trial leaves. */
export interface TrialResult {
  verdict: TrialVerdict;
  summary: Record<string, unknown>;
  interrupted: boolean;
  /** The first failed write (exit 74), when one stopped the trial. */
  writeFailure: IkError | null;
}

/** Runs one trial and writes its files. */
export async function runTrial(cfg: TrialConfig): Promise<TrialResult> {
  const reqs = cfg.workload.requests;
  const prompts: Prompt[] = reqs.map((r) => ({ id: r.id, bucket: "all", messages: r.messages, maxTokens: r.max_tokens, kind: "chat", extra: {} }));
  const runner = new Runner({
    ep: cfg.ep, api: "chat", engineKind: cfg.engineKind, model: cfg.model, maxTokens: null, tokenIds: "off", exactLength: false,
    extraBody: {}, chatTemplateKwargs: {}, apiKey: cfg.apiKey, timeoutMs: cfg.timeoutMs, idleTimeoutMs: Math.min(cfg.timeoutMs, 60_000), signal: cfg.signal,
  });
  const offsets = cfg.offsetsMs ?? trialOffsetsMs(cfg.rateRps, cfg.requests, cfg.seed);
  // The first failed write stops the sends (the rows already whole stay).
  const io = writeFailureStop(cfg.signal);
  const { onError, signal } = io;
  const journal = await JsonlWriter.open(join(cfg.outDir, "requests.jsonl"), { onError });
  const rows: TrialRow[] = [];
  const lengths = new PromptLengthTally();
  // ik's own request path, run in memory first (nothing sent; client_warm_up.ts).
  const clientWarmUp = await warmUpClient(runner, prompts, { signal: cfg.signal });
  const lag = startLoopLag();
  const tWall0 = Date.now() / 1000;
  const live = cfg.live?.series ?? null;
  live?.levelStart("trial", cfg.rateRps, cfg.requests);
  const outcome = await runOpenLoop(async (i, due, cpuWait) => {
    const idx = i % reqs.length;
    live?.sent("trial");
    const { result } = await runner.send(prompts[idx], null, due);
    const row = requestRow(result, { seq: i, workload_index: idx, scheduled_offset_ms: offsets[i], max_tokens: reqs[idx].max_tokens, input_tokens: reqs[idx].input_tokens, prompt_tokens: promptTokens(result), send_cpu_wait_ms: cpuWait });
    journal.write(row);
    live?.ended("trial", row as never, itlMs(result));
    lengths.add({ ok: row.ok as boolean, bucket: "all", salt: null, prompt_tokens: row.prompt_tokens as number | null, target_prompt_tokens: reqs[idx].input_tokens });
    rows.push(row as unknown as TrialRow);
  }, { offsetsMs: offsets, signal });
  const loopLag = lag.stop();
  live?.levelEnd("trial");
  const liveReport = cfg.live ? await cfg.live.finish() : null;
  await journal.close().catch(onError);
  const interrupted = cfg.signal?.aborted === true || io.fail !== null;
  const verdict = judgeTrial(rows, cfg.requests, { ttftMs: cfg.ttftS * 1000, tpotMs: cfg.tpotS * 1000 }, cfg.attainment);
  const durationS = rows.length ? (performance.now() - outcome.t0Ms) / 1000 : 0;
  const summary: Record<string, unknown> = {
    schema: 1,
    kind: "load_trial",
    complete: !interrupted,
    passed: verdict.attained && verdict.validity.valid,
    attainment: verdict.attainment,
    attainment_target: cfg.attainment,
    attained: verdict.attained,
    met: verdict.met,
    requested: cfg.requests,
    valid: verdict.validity.valid,
    validity: verdict.validity,
    misses: verdict.misses,
    failures_by_kind: verdict.failures_by_kind,
    slo: { ttft_s: cfg.ttftS, tpot_s: cfg.tpotS },
    rate_rps: cfg.rateRps,
    arrivals: "open-loop Poisson on absolute deadlines (seeded), exactly N requests",
    seed: cfg.seed,
    achieved_rate_rps: outcome.lastSendMs !== null && outcome.sent > 1 ? (outcome.sent - 1) / ((outcome.lastSendMs - outcome.t0Ms - offsets[0]) / 1000) : null,
    duration_s: durationS,
    started_unix_s: tWall0,
    percentiles: verdict.percentiles,
    event_loop_lag_ms: loopLag,
    pacer: outcome.pacing,
    client_warm_up: clientWarmUp,
    definitions: {
      attainment: "requests that succeeded with ttft <= slo.ttft_s and tpot <= slo.tpot_s, divided by the requests asked (failed or unsent requests are misses; a request with no TPOT, one token, passes the TPOT part)",
      valid: `all requests sent, median send lag <= ${verdict.validity.lag_p50_limit_ms} ms and p99 <= ${verdict.validity.lag_p99_limit_ms} ms`,
      ttft_ms: "client clock, request sent to first token event", tpot_ms: "(last token - first token) / (tokens - k_first), client clock",
      percentiles: "nearest rank over ok requests",
      client_warm_up: "before the first request ik ran its own request path that many times in memory (nothing sent to the server), then paused 50 ms, so the first requests are not measured on cold code",
      send_lag_without_cpu_wait_ms: "each request's send lag less the time the loop's thread waited on a run queue for a CPU between the previous send and this one (the row's send_cpu_wait_ms, Linux schedstat), never below zero: the lag ik's own work caused; null where the wait cannot be read",
    },
    workload: { sha256: cfg.workload.requests_sha256, requests: reqs.length, seed: cfg.workload.seed },
    ...cfg.identity,
  };
  // usage.prompt_tokens against each request's input_tokens (the workload's), when it states them.
  const method = cfg.workload.source.length_method;
  const pl = lengths.report(typeof method === "string" ? { [method]: reqs.filter((r) => r.input_tokens !== null).length } : {});
  summary.prompt_lengths = pl ? { ...pl.check, limitations: pl.limitations } : null;
  if (liveReport) summary.live_metrics = { ...liveReport, limitation: liveLimitation(liveReport) };
  if (io.fail === null) return { verdict, summary, interrupted, writeFailure: null };
  summary.stopped_early = `writing ${io.fail.where} failed: requests.jsonl keeps ${journal.lines} whole rows`;
  const what = `stopped sending; ${journal.lines} whole rows kept in ${journal.path}, summary.json (if written) is complete: false`;
  return { verdict, summary, interrupted, writeFailure: new IkError(io.fail.code, io.fail.where, `${io.fail.message}; ${what}`, io.fail.hint) };
}
