/**
 * The records of a load run (seed 000): the measured `serve_benchmark` record (per-level
 * percentiles, failure-adjusted percentiles, goodput, throughput, send lag, the server's gauges,
 * every load limitation under its condition) and the derived `capacity` record citing it (N* or
 * the max rate, with the seed's "at this level and every lower one" rule, the values at N*, cost,
 * the curve).
 * @module
 */
import { sharedPrefixNote } from "../prompts/shared_prefix.ts";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { buildRecord, guardWrite, isOutputError, newEvidenceId, scrubbedJson, StagedRun, writeWhole } from "../evidence/mod.ts";
import type { IkError } from "../cli/errors.ts";
import { COST_FORMULA, hasSlo, type Metric, metric, nStar, sloRecord, usdPer1mTokens } from "../metrics/mod.ts";
import { type LiveReport, liveLimitation } from "../live_metrics/live_run.ts";
import type { AutoSearchState } from "../schedule/mod.ts";
import { type TraceFacts, traceFacts } from "../schedule/trace_schedule.ts";
import { traceData, traceLimitations, traceSourceOf, traceStar, traceSummaryHead } from "./trace_record.ts";
import { CI_METHOD_ORDER_STATISTIC } from "../stats/mod.ts";
import { GIT_REV, VERSION } from "../version.ts";
import { CountTally, tallyLimitations } from "./count_limitations.ts";
import type { LevelResult } from "./load_level.ts";
import type { ClientWarmUp } from "./client_warm_up.ts";
import { lengthMethods } from "./prompt_lengths.ts";
import { copyRunFilesToRunDir } from "./run_files.ts";
import { requestSet } from "./request_set.ts";
import type { LoadRun } from "./load_run.ts";
import { DCGM_IDENTITY_SOURCE } from "../gpu/dcgm_identity.ts";

/** A capacity claim whose measured mean in-flight is below this fraction of N* is flagged (seed). */
export const INFLIGHT_SHORTFALL = 0.9;

/** What the records are built from. */
export interface LoadRecordInput extends LoadRun {
  evidenceId: string;
  run: StagedRun;
  levels: LevelResult[];
  files: { rel: string; role: string }[];
  e2eRefMs: number | null;
  referenceE2eMs: number[];
  warmupE2eMs: number[];
  /** ik's own request path run in memory before the first level (client_warm_up.ts), or absent (a merge). */
  clientWarmUp?: ClientWarmUp | null;
  needRef: boolean;
  /** Told when the run dir's metrics file cannot be written (exit 74 after the records are made). */
  onRunDirFailure?: (e: IkError) => void;
  salted: number;
  interrupted: boolean;
  /** Why the run stopped early (a failed write, the server gone: server_gone.ts), said first in the record; null if it did not. */
  stoppedEarly?: string | null;
  /** What the run's live metrics served and pushed (and what did not arrive), when asked for. */
  liveReport?: LiveReport | null;
  /** A replay's facts when there is no schedule to read them from (a merge of trace slices). */
  traceFacts?: TraceFacts | null;
  /** `--rates auto` / `--concurrency auto`: the probes, the bracket and why the search stopped. */
  autoSearch?: AutoSearchState | null;
  /** How the set's target lengths were made (a merge has no prompts: its shards' record says), else from `prompts`. */
  lengthMethods?: Record<string, number> | null;
}

const fmt = (x: number | null | undefined, nd = 1) => (x === null || x === undefined ? "n/a" : x.toFixed(nd));

const CONCURRENCY_WORDS = "a concurrency level N is open-loop Poisson (gamma) arrivals at N / e2e_ref, as the seed designs it; " +
  "it is not vLLM's --max-concurrency or AIPerf's concurrency (N always in flight), which is --closed-loop";

function levelMetrics(lv: LevelResult): Metric[] {
  const s = lv.summary, subject = lv.name;
  const out: Metric[] = [];
  for (const [name, unit] of [["ttft_ms", "ms"], ["tpot_ms", "ms"], ["itl_ms", "ms"], ["e2e_ms", "ms"]] as const) {
    const f = s[name];
    for (const p of ["p50", "p95", "p99"] as const) {
      const ci = p === "p95" && "ci95_p95" in f ? (f as { ci95_p95: [number, number] | null }).ci95_p95 : null;
      out.push(metric(name, f[p], unit, p, { n: f.n, ci95: ci, subject }));
    }
  }
  out.push(
    metric("output_tok_s_per_gpu", s.output_tok_s_per_gpu, "tok/s", "mean", { n: s.n_ok, subject }),
    metric("goodput_rps", s.goodput_rps, "req/s", "mean", { n: s.n_requests, subject }),
    metric("achieved_rps", s.achieved_rps, "req/s", "mean", { n: s.n_requests, subject }),
    metric("failed_requests", s.n_failed, "requests", "count", { n: s.n_requests, subject }),
    metric("mean_inflight", s.mean_inflight, "requests", "mean", { n: s.n_requests, subject }),
  );
  if (lv.gpu) {
    out.push(
      metric("gpu_power_w", lv.gpu.telemetry.total.mean_power_w, "W", "mean", { n: lv.gpu.telemetry.n, subject }),
      metric("joules_per_output_token", lv.gpu.energy.joules_per_output_token, "J/token", "mean", { n: s.n_ok, subject }),
      metric("output_tok_s_per_watt", lv.gpu.energy.output_tokens_per_s_per_watt, "tok/s/W", "mean", { n: s.n_ok, subject }),
    );
  }
  return out;
}

/** The replay's facts: given (a merge), or from the schedule and the set's manifest. */
function traceOf(x: Pick<LoadRecordInput, "trace" | "traceFacts" | "set">): TraceFacts | null {
  return x.traceFacts ?? (x.trace ? { ...traceFacts(x.trace), source: traceSourceOf(x.set.manifest) } : null);
}

/** The search rule in words, for the record. */
const AUTO_RULE = "double the level while the SLO holds; once one fails, bisect between the highest level that held and the lowest that failed " +
  "until they are within the precision (relative to the one that held); if the first fails, halve until one holds; every probe is a whole measured level, " +
  "and N* is read from all of them by the usual rule (held there and at every lower level)";

/** The limitation line that says how a search chose its levels. */
function autoSearchNote(st: AutoSearchState, kind: "rate" | "concurrency"): string {
  const probes = st.probes.map((p) => `${kind === "concurrency" ? "c" : "r"}${p.level} ${p.outcome}`).join(", ");
  return `levels chosen by a search (${kind === "concurrency" ? "--concurrency" : "--rates"} auto), in the order measured: ${probes}; stopped: ${st.stopped ?? "interrupted"}; ` +
    "the levels depend on the outcomes, so a rerun may measure other levels";
}

/** The measured record (written into the run's directory by the caller). */
export async function buildLoadRecord(x: LoadRecordInput): Promise<Record<string, unknown>> {
  const runner = x.runner;
  const artifacts = [await x.run.artifact("requests.jsonl", "requests")];
  for (const f of x.files) artifacts.push(await x.run.artifact(f.rel, f.role));
  const tally = new CountTally();
  for (const l of x.levels) tally.merge(l.counts);
  const limitations = [...x.server.limitations, ...tallyLimitations(tally, runner.asked?.exact_length ?? null, runner.cfg.tokenIds, runner.cfg.engineKind)];
  if (x.closedLoop) {
    limitations.unshift("CLOSED-LOOP STRESS TEST: workers wait for their previous request, so the arrival rate falls as the server slows; not a capacity measurement and not used for N*");
  }
  if (!x.isLocal) limitations.push("server is not on this host: TTFT and e2e include the network round trip");
  // What building the set from --dataset noted (said on stderr as it was built).
  const dsNotes = ((x.args.dataset as { notes?: unknown } | undefined)?.notes ?? []) as unknown[];
  for (const n of dsNotes) if (typeof n === "string") limitations.push(`dataset: ${n}`);
  const shared = sharedPrefixNote(x.prompts);
  if (shared) limitations.push(shared);
  if (x.levelKind === "concurrency" && !x.closedLoop) {
    const src = x.refE2eMs !== null && !x.needRef ? "--ref-e2e-ms" : `the median of ${x.referenceE2eMs.length} reference request(s) after the warm-up`;
    limitations.push(`concurrency N offered as Poisson rate N / e2e_ref, e2e_ref = ${fmt(x.e2eRefMs)} ms from ${src}; measured mean in-flight is reported per level (${CONCURRENCY_WORDS})`);
  }
  if (x.maxInFlight && !x.closedLoop) {
    limitations.push(`open-loop arrivals capped at ${x.maxInFlight} requests in flight (vLLM's --max-concurrency): a request due while ${x.maxInFlight} were running waited for one to end, so its send lag includes that wait and the offered rate can fall below the target`);
  }
  if (x.rescaleToRate && x.requestsPerLevel && !x.closedLoop) limitations.push(`each level's ${x.requestsPerLevel} seeded arrivals were rescaled to end at ${x.requestsPerLevel} / rate, as vLLM's get_request does (the schedule's rate is the target)`);
  if (x.grid.includes(Infinity)) limitations.push("request rate inf: every request of the level was due at its start (vLLM's --request-rate inf); the level's target rate is written as null");
  if (x.keyNote) limitations.push(x.keyNote);
  if (x.autoSearch) limitations.push(autoSearchNote(x.autoSearch, x.levelKind));
  const liveNote = liveLimitation(x.liveReport ?? null);
  if (liveNote) limitations.push(liveNote);
  const countNote = gpuCountNote(x.gpu, x.gpuCount);
  if (countNote) limitations.push(countNote);
  const gpuNotes = [...new Set(x.levels.map((l) => l.gpu?.telemetry.note).filter((n): n is string => !!n))];
  if (gpuNotes.length) limitations.push(`GPU telemetry: ${gpuNotes.join("; ")}`);
  if (x.levels.some((l) => l.gpu?.telemetry.available)) {
    limitations.push("energy is the sampled GPUs' board power (idle draw included) over each level's window, about one sample a second; joules per output token = mean power x window / output tokens");
  }
  const tf = traceOf(x);
  if (tf) {
    limitations.push(...traceLimitations(tf, x.levels, x.interrupted));
    // --max-tokens wins over each row's own output length: a replay that is no longer the trace's says so.
    const own = x.runner.cfg.maxTokens;
    const replaced = own === null ? 0 : x.prompts.filter((p) => p.maxTokens !== null && p.maxTokens !== own).length;
    if (replaced) limitations.push(`--max-tokens ${own} replaced the trace's own output length in ${replaced} of ${x.prompts.length} row(s): the output lengths are not the trace's`);
  }
  const small = x.levels.filter((l) => l.summary.n_requests < 20).map((l) => l.name);
  if (small.length) limitations.push(`levels with fewer than 20 requests (p95 is rough): ${small.join(", ")}`);
  for (const l of x.levels) if (l.schedule_note) limitations.push(l.schedule_note);
  const limited = x.levels.filter((l) => l.client_limited).map((l) => `${l.name} (${l.client_limited})`);
  if (limited.length) limitations.push(`the client may have limited these levels: ${limited.join("; ")}`);
  const noGauges = x.levels.find((l) => l.server && (l.server as { available?: boolean }).available === false);
  if (noGauges) limitations.push(`the server's own gauges (running, waiting) were not available: ${(noGauges.server as { note?: string }).note ?? "no answer"}`);
  const lengths = tally.lengths.report(x.lengthMethods ?? lengthMethods(x.prompts));
  if (lengths) limitations.push(...lengths.limitations);
  if (x.salted) limitations.push(`${x.salted} request(s) reused a prompt with a unique prefix tag (the pool is smaller than the requests sent); the tag adds a few prompt tokens`);
  const byKind: Record<string, number> = {};
  for (const l of x.levels) for (const [k, v] of Object.entries(l.summary.failures_by_kind)) byKind[k] = (byKind[k] ?? 0) + v;
  const nFailed = Object.values(byKind).reduce((a, b) => a + b, 0);
  if (nFailed) limitations.push(`${nFailed} request(s) failed (${Object.entries(byKind).map(([k, v]) => `${v} ${k}`).join(", ")})`);
  limitations.push("load-level CIs treat requests as independent; under load they are not, so treat those CIs as optimistic");
  const skipped = x.grid.slice(x.levels.length);
  if (skipped.length && !x.interrupted) limitations.push(`levels not run after the SLO failed: ${skipped.join(", ")} (--sweep-all runs them)`);
  const planned = x.levels.reduce((a, l) => a + (l.planned ?? l.sent), 0);
  const sent = x.levels.reduce((a, l) => a + l.sent, 0);
  if (x.stoppedEarly) limitations.unshift(`STOPPED EARLY: ${x.stoppedEarly}`);
  if (x.interrupted) {
    limitations.push(`${x.stoppedEarly ? "stopped" : "interrupted"} after ${sent} of ${planned} requests${skipped.length ? ` (levels not started: ${skipped.join(", ")})` : ""}`);
  }
  const missing: string[] = [];
  if (!x.gpu.name) missing.push("gpu identity (remote server or no nvidia-smi: pass --gpu-name)");
  if (!x.levels.some((l) => l.summary.n_ok > 0)) missing.push("every request failed");
  const maxes = [...new Set(x.prompts.map((p) => runner.maxFor(p)))].sort((a, b) => a - b);
  const buckets = [...new Set(x.prompts.map((p) => p.bucket))];
  const workload: Record<string, unknown> = {
    gen_len: maxes.length === 1 ? maxes[0] : null, seed: x.seed, mode: "load", bucket: buckets.length === 1 ? buckets[0] : null,
    duration_s: x.requestsPerLevel ? null : x.durationS, requests_per_level: x.requestsPerLevel ?? null, burstiness: x.burstiness, prompt_set: { name: x.set.name, sha256: x.set.sha256, n: x.prompts.length },
    slo: hasSlo(x.slo) ? sloRecord(x.slo) : null, endpoint_kind: `openai_${runner.cfg.api}`, prefix_cache: "cold", request_set: requestSet(x.prompts, runner),
    open_loop: !x.closedLoop,
  };
  if (x.maxInFlight && !x.closedLoop) workload.max_in_flight = x.maxInFlight;
  workload[x.levelKind === "concurrency" ? "concurrency" : "rate_rps"] = x.grid;
  const top = x.levels[x.levels.length - 1];
  let summary = `${x.label} ${runner.cfg.model}: ${x.closedLoop ? "closed-loop stress" : "open-loop"} load, ${x.levels.length} level(s) (${x.levels.map((l) => l.name).join(", ")})`;
  if (top) {
    summary += `; at ${top.name}: p95 TTFT ${fmt(top.summary.ttft_ms.p95)} ms, p95 TPOT ${fmt(top.summary.tpot_ms.p95, 2)} ms, ${fmt(top.summary.output_tok_s_per_gpu)} out tok/s/GPU, ${top.summary.n_failed} failed`;
  }
  if (x.interrupted) summary += x.stoppedEarly ? "; STOPPED EARLY" : "; INTERRUPTED";
  const data = {
    label: x.label, base_url_kind: x.isLocal ? "local" : "remote", server: x.server.info, prompt_set_sha256: x.set.sha256,
    prompt_set_name: x.set.name, level_kind: x.levelKind, open_loop: !x.closedLoop, e2e_ref_ms: x.e2eRefMs,
    e2e_ref_source: x.closedLoop || x.levelKind === "rate" ? null : x.needRef ? "reference_requests" : "ref_e2e_ms",
    warmup_e2e_ms: x.warmupE2eMs, client_warm_up: x.clientWarmUp ?? null, reference_e2e_ms: x.referenceE2eMs, levels: x.levels.map(({ counts: _c, ...l }) => l), salted_requests: x.salted,
    failures_by_kind: byKind, token_count_methods: tally.methods, prompt_lengths: lengths?.check ?? null,
    ...(x.liveReport ? { live_metrics: x.liveReport } : {}),
    ...(tf ? { trace: traceData(tf, x.levels) } : {}),
    ...(x.autoSearch ? { auto_search: { ...x.autoSearch, precision: x.auto?.precision ?? null, max_levels: x.auto?.maxLevels ?? null, rule: AUTO_RULE } } : {}), timer: "client monotonic clock (performance.now), one timestamp per network read",
    request_profile: { engine_kind: runner.cfg.engineKind, api: runner.cfg.api, asked: runner.asked },
    clock: x.clock ?? null,
    definitions: {
      level: CONCURRENCY_WORDS, window: "first send to last end of the level's requests",
      achieved_rps: "ok requests / window", offered_rate_rps: "requests sent / max(the schedule's window, schedule start to last send), the basis of scheduled_rate_rps (arrivals / the schedule's window: --duration-s, or the last arrival's offset when --requests bounds it), so a client on time offers exactly the scheduled rate; a shard's slice: (sent − 1) / first to last send, against (arrivals − 1) / (last − first arrival)",
      scheduled_rate_rps: "the seeded schedule's arrivals (every shard's) / --duration-s (the window's estimator, not offered_rate_rps's), or / the span of the arrivals from the level's start when a count bounds them (--requests N, the --max-requests-per-level cap); a level more than 10 % from its target has a schedule_note, printed and listed in the limitations; a trace replay: the trace's mean, (n − 1) / span as data.trace.mean_rate_rps (null with no span), and no schedule_note",
      goodput_rps: "requests meeting every SLO target / window", mean_inflight: "Little's law: Σ request durations / window",
      failure_adjusted: "percentiles over every request with each failed one counted as infinitely slow; null with censored: true when the percentile falls on a failure",
      ci95_p95: CI_METHOD_ORDER_STATISTIC, itl_ms: "gaps between consecutive token events (per event)",
      client_limited: `send lag p99 > 5 ms or the event loop blocked > 10 ms`,
      client_warm_up: "before the first level ik ran its own request path that many times in memory (the runner's bodies, its HTTP/1.1 client over a transport with no network, a canned streamed answer parsed, the rows built and dropped; nothing sent to the server), then paused 50 ms: a fresh process's first requests ran on cold code (the first 50 requests' TTFT up to 0.9 ms higher against a TTFT-0 mock, 2-vCPU AMD EPYC)",
      send_lag_without_cpu_wait_ms: "open loop: each request's send lag (sent - due) less the time the loop's thread waited on a run queue for a CPU between the previous send and this one (the row's send_cpu_wait_ms, Linux schedstat), never below zero: the lag ik's own work caused; null where the wait cannot be read",
      event_loop_lag_ms: "how late a 20 ms timer fired (p50, p99, max); own_p99_ms/own_max_ms: that lag less the time the loop's thread waited on a run queue for a CPU (Linux schedstat; null where it cannot be read), i.e. ik's own work; cpu_wait_ms: that wait over the level",
      clock: "anchor: one reading of (performance.timeOrigin + performance.now(), performance.now()) in ms: a row's wall time = t_*_ns / 1e6 + (wall_ms - mono_ms); sync: the kernel's adjtimex state (unsynced flag, estimated and maximum error), the bound this host's wall clock claims",
    },
  };
  if (x.runDir) {
    // A copy for the run dir: its failure is said in the record and to the caller, the record is still made.
    const p = join(x.runDir, "metrics", `${x.label}.load.json`);
    try {
      await guardWrite(p, () => mkdir(join(x.runDir as string, "metrics"), { recursive: true, mode: 0o700 }));
      await writeWhole(p, scrubbedJson({ label: x.label, levels: x.levels.map(({ counts: _c, ...l }) => l) }, 1) + "\n", 0o644);
    } catch (e) {
      if (!isOutputError(e)) throw e;
      x.onRunDirFailure?.(e);
      limitations.push(`the run dir's metrics file was not written (${e.where}: ${e.message}); the record is whole`);
    }
    // The levels' outputs and inputs, as single mode copies its own (seed 000: kept in the record and copied to --run-dir).
    const copied = new Set(x.files.map((f) => f.rel));
    const failed = await copyRunFilesToRunDir(x.run.dir, x.runDir, x.label, artifacts.filter((a) => copied.has(a.path)).map((a) => ({ rel: a.path, sha256: a.sha256 })));
    if (failed) {
      x.onRunDirFailure?.(failed);
      limitations.push(`the run dir's copy of the levels' outputs and inputs stopped (${failed.where}: ${failed.message}); the record is whole`);
    }
  }
  return buildRecord({
    evidence_id: x.evidenceId, kind: "serve_benchmark", claim_class: "observed", summary,
    tool: { name: "ik", version: VERSION, rev: GIT_REV }, request: { command: "bench serve", args: x.args },
    identity: { gpu: x.gpu, engine: x.engine, model: { id: runner.cfg.model }, workload },
    metrics: x.levels.flatMap(levelMetrics), artifacts, missing, limitations, data, complete: !x.interrupted,
  }) as unknown as Record<string, unknown>;
}

/**
 * The derived capacity record, stored as its own record (it cites the measured one).
 * @param adjust edits the record before it is written (a partial merge states its bound)
 */
export async function buildCapacityRecord(
  x: LoadRecordInput,
  measured: Record<string, unknown>,
  storeRoot: string,
  adjust?: (rec: Record<string, unknown>) => void,
): Promise<Record<string, unknown>> {
  const tf = traceOf(x);
  const judged = x.closedLoop
    ? { value: null, reason: "closed-loop stress test: N* not computed", lowerBound: false }
    : nStar(x.levels.map((l) => ({ level: l.level, sloOk: l.summary.slo_ok, checks: l.summary.slo_checks, notJudged: l.not_judged ?? null, notAchieved: l.not_achieved ?? null })));
  // A replay is one level at the trace's own times: its claim and its reason are a replay's.
  const star = tf ? traceStar(tf, judged, x.levels[0]) : judged;
  const at = x.levels.find((l) => l.level === star.value) ?? null;
  const s = at?.summary ?? null;
  const tok = s?.output_tok_s_per_gpu ?? null;
  const inflight = s?.mean_inflight ?? null;
  const cost = usdPer1mTokens(tok, x.gpuPriceUsdH, 1); // per-GPU throughput × per-GPU price
  const missing: string[] = [];
  if (!hasSlo(x.slo)) missing.push("slo (pass --slo-ttft-p95-ms, --slo-tpot-p95-ms and/or --slo-e2e-p95-ms)");
  if (x.gpuPriceUsdH === null) missing.push("gpu price (pass --gpu-price-usd-h)");
  const unit = x.levelKind === "concurrency" ? "streams" : "req/s";
  const starName = x.levelKind === "concurrency" ? "n_star" : "rate_star_rps";
  const metrics = [
    metric(starName, star.value, unit, star.lowerBound ? "lower_bound" : "threshold", { n: x.levels.length }),
    metric("goodput_rps", s?.goodput_rps ?? null, "req/s", "at_n_star", { n: s?.n_requests ?? 0 }),
    metric("output_tok_s_per_gpu", tok, "tok/s", "at_n_star", { n: s?.n_ok ?? 0 }),
    metric("ttft_ms", s?.ttft_ms.p95 ?? null, "ms", "p95_at_n_star", { n: s?.ttft_ms.n ?? 0 }),
    metric("tpot_ms", s?.tpot_ms.p95 ?? null, "ms", "p95_at_n_star", { n: s?.tpot_ms.n ?? 0 }),
    metric("mean_inflight", inflight, "requests", "at_n_star", { n: s?.n_requests ?? 0 }),
    metric("usd_per_1m_output_tokens", cost, "USD", "at_n_star"),
  ];
  if (at?.gpu) {
    metrics.push(
      metric("joules_per_output_token", at.gpu.energy.joules_per_output_token, "J/token", "at_n_star", { n: s?.n_ok ?? 0 }),
      metric("output_tok_s_per_watt", at.gpu.energy.output_tokens_per_s_per_watt, "tok/s/W", "at_n_star", { n: s?.n_ok ?? 0 }),
      metric("gpu_power_w", at.gpu.telemetry.total.mean_power_w, "W", "at_n_star", { n: at.gpu.telemetry.n }),
    );
  }
  const sloText = hasSlo(x.slo)
    ? Object.entries({ ttft_p95_ms: x.slo.ttftP95Ms, tpot_p95_ms: x.slo.tpotP95Ms, e2e_p95_ms: x.slo.e2eP95Ms }).filter(([, v]) => v != null).map(([k, v]) => `${k} <= ${v}`).join(", ")
    : "no SLO";
  let summary = `${x.label} ${x.runner.cfg.model}: ${x.levelKind === "concurrency" ? "N*" : "max rate"} ${star.lowerBound ? ">=" : "="} ${star.value ?? "n/a"} ${unit} at ${sloText} (${star.reason})`;
  if (tf) {
    const verdict = x.levels[0]?.summary.slo_ok;
    summary = `${x.label} ${x.runner.cfg.model}: ${traceSummaryHead(tf, x.levels, x.interrupted)}: ` +
      (verdict === true ? `the SLO held (${sloText})` : verdict === false ? `the SLO failed (${sloText})` : hasSlo(x.slo) ? "not judged" : "no SLO given");
  }
  if (star.value !== null && inflight !== null) summary += `; measured mean in-flight at that level ${inflight.toFixed(2)}`;
  // At a lower-bound N* the capacity may be higher, and more capacity costs less per token: the cost is an upper bound.
  const costBound = cost !== null && star.lowerBound ? "upper" : null;
  if (cost !== null) summary += `; ${costBound ? "<= " : ""}$${cost.toFixed(3)} per 1M output tokens at $${x.gpuPriceUsdH}/GPU-h${costBound ? " (an upper bound)" : ""}`;
  const limitations = [`derived from ${measured.evidence_id}: see its limitations`];
  if (x.levelKind === "concurrency" && !x.closedLoop && star.value !== null && inflight !== null && inflight < INFLIGHT_SHORTFALL * star.value) {
    limitations.unshift(`N* = ${star.value} is the nominal level, but only ${inflight.toFixed(2)} requests were in flight on average there (< ${INFLIGHT_SHORTFALL} x N*): the server was offered less load than N* streams (short window, Poisson noise, or a high e2e_ref); read capacity as about ${inflight.toFixed(1)} streams, or rerun with a longer --duration-s / measured --ref-e2e-ms`);
  }
  if (x.closedLoop) limitations.push("closed-loop stress test: no capacity claim");
  if (tf) limitations.push("trace replay: one level at the trace's own arrivals; a rate_star_rps is the trace's mean rate where the SLO held over the whole replay, not a capacity (the trace's bursts are part of it)");
  else if (star.value !== null && star.value === x.grid[x.grid.length - 1]) {
    limitations.push(x.autoSearch
      ? `the SLO held at every level the search measured (${x.autoSearch.stopped ?? "it stopped"}): N* is at least this; raise --max-levels or --auto-start`
      : "the SLO held at the top of the grid: N* is at least this; extend the grid");
  }
  const limited = x.levels.filter((l) => l.client_limited && (star.value === null || l.level <= (star.value as number) || l === x.levels[x.levels.length - 1]));
  if (limited.length) limitations.push(`the client may have limited the measurement at ${limited.map((l) => l.name).join(", ")}: ${limited[0].client_limited}`);
  if (x.interrupted) limitations.push(x.stoppedEarly ? "the run stopped early (the measured record says why): the curve stops early" : "the run was interrupted: the curve stops early");
  const countNote = gpuCountNote(x.gpu, x.gpuCount);
  if (countNote && (tok !== null || cost !== null)) limitations.push(countNote);
  // The energy figures above are the N* level's: what its telemetry said about them goes with them.
  if (at?.gpu?.energy.note && at.gpu.energy.joules_per_output_token !== null) limitations.push(`GPU energy at ${at.name}: ${at.gpu.energy.note}`);
  const short = x.levels.filter((l) => l.not_achieved);
  if (short.length) limitations.push(`not achieved (not eligible for N*): ${short.map((l) => `${l.name}: ${l.not_achieved}`).join("; ")}`);
  const unjudged = x.levels.filter((l) => l.not_judged);
  if (unjudged.length) {
    limitations.push(`not judged against the SLO: ${unjudged.map((l) => `${l.name} (${l.not_judged})`).join(", ")}${star.lowerBound ? `; N* >= ${star.value} is a lower bound` : ""}`);
  }
  if (costBound) limitations.push("the cost at N* is an upper bound: N* is a lower bound, and more capacity costs less per token");
  const id = newEvidenceId("capacity");
  const run = await StagedRun.create(storeRoot, id);
  const rec = buildRecord({
    evidence_id: id, kind: "capacity", claim_class: "derived", summary, tool: { name: "ik", version: VERSION, rev: GIT_REV },
    request: { command: "bench serve", args: x.args }, identity: measured.identity as never, metrics, artifacts: [], missing, limitations,
    data: {
      measurement: measured.evidence_id, label: x.label, level_kind: x.levelKind, [x.levelKind === "concurrency" ? "n_star" : "rate_star_rps"]: star.value,
      reason: star.reason, n_star_lower_bound: star.lowerBound, mean_inflight_at_n_star: inflight, slo: hasSlo(x.slo) ? sloRecord(x.slo) : null, gpu_price_usd_h: x.gpuPriceUsdH,
      gpu_count: x.gpuCount, cost_formula: COST_FORMULA, usd_per_1m_output_tokens: cost, usd_per_1m_output_tokens_bound: costBound,
      joules_per_output_token: at?.gpu?.energy.joules_per_output_token ?? null, output_tok_s_per_watt: at?.gpu?.energy.output_tokens_per_s_per_watt ?? null,
      gpu_power_w: at?.gpu?.telemetry.total.mean_power_w ?? null,
      curve: x.levels.map((l) => ({
        level: l.level, name: l.name, slo_ok: l.summary.slo_ok, not_judged: l.not_judged ?? null, not_achieved: l.not_achieved ?? null,
        target_rate_rps: l.target_rate_rps, offered_rate_rps: l.offered_rate_rps, ttft_p95_ms: l.summary.ttft_ms.p95, tpot_p95_ms: l.summary.tpot_ms.p95,
        e2e_p95_ms: l.summary.e2e_ms.p95, ttft_p95_ms_failure_adjusted: l.summary.ttft_ms_failure_adjusted.p95,
        output_tok_s_per_gpu: l.summary.output_tok_s_per_gpu, goodput_rps: l.summary.goodput_rps, achieved_rps: l.summary.achieved_rps,
        mean_inflight: l.summary.mean_inflight, n_failed: l.summary.n_failed, client_limited: l.client_limited,
        gpu_power_w: l.gpu?.telemetry.total.mean_power_w ?? null, joules_per_output_token: l.gpu?.energy.joules_per_output_token ?? null,
        server_running_mean: (l.server as { means?: { running?: number | null } } | null)?.means?.running ?? null,
        server_waiting_mean: (l.server as { means?: { waiting?: number | null } } | null)?.means?.waiting ?? null,
      })),
    },
    complete: !x.interrupted,
  }) as unknown as Record<string, unknown>;
  adjust?.(rec);
  await run.finish(rec);
  return rec;
}

/**
 * Why the per-GPU figures may not be per GPU: nvidia-smi (on this host) or the DCGM exporter lists a
 * different number of GPUs than the count tok/s per GPU and the cost divide by (`--gpu-count`, default 1); the energy
 * figures sum every GPU the telemetry read. Null when they agree or nothing was listed.
 */
function gpuCountNote(gpu: Record<string, unknown>, gpuCount: number): string | null {
  const lister = gpu.source === "nvidia-smi" ? "nvidia-smi lists" : gpu.source === DCGM_IDENTITY_SOURCE ? "the DCGM exporter lists" : null;
  const listed = lister !== null && typeof gpu.count === "number" ? gpu.count : null;
  if (listed === null || listed === gpuCount) return null;
  return `tok/s per GPU and the cost divide by ${gpuCount} GPU${gpuCount === 1 ? "" : "s"} (--gpu-count, default 1), but ${lister} ${listed}${gpu.source === "nvidia-smi" ? " on this host" : ""}, and the energy figures sum every GPU the telemetry read: give --gpu-count with the number of GPUs the engine uses`;
}
