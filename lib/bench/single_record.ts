/**
 * The `serve_benchmark` record of a single-mode run (seed 000): per-bucket medians and p95 with
 * round CIs, per-round rows, counting methods, the server's own clock where it gives one, every
 * limitation under its condition, identity and artifacts.
 * @module
 */
import { sharedPrefixNote } from "../prompts/shared_prefix.ts";
import type { ClientWarmUp } from "./client_warm_up.ts";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { buildRecord, guardWrite, isOutputError, scrubbedJson, type StagedRun, writeWhole } from "../evidence/mod.ts";
import type { IkError } from "../cli/errors.ts";
import { bucketMetrics, P99_MIN_REQUESTS, roundRows, type SingleRow } from "../metrics/mod.ts";
import type { Prompt, PromptSet } from "../prompts/mod.ts";
import { CI_METHOD_T_CLUSTER, CI_TAIL_COVERAGE, median } from "../stats/mod.ts";
import { GIT_REV, VERSION } from "../version.ts";
import { countLimitations, type CountRow } from "./count_limitations.ts";
import { type LiveReport, liveLimitation } from "../live_metrics/live_run.ts";
import { metric } from "../metrics/mod.ts";
import type { LevelGpu } from "./load_level.ts";
import { promptLengthCheck } from "./prompt_lengths.ts";
import { requestSet } from "./request_set.ts";
import type { Runner } from "./runner.ts";
import type { ServerInfo } from "./server_check.ts";
import { setBuckets } from "../prompts/mod.ts";
import { serverClock } from "./server_clock.ts";

/** What the record is built from. */
export interface SingleRecordInput {
  evidenceId: string;
  run: StagedRun;
  runner: Runner;
  set: PromptSet;
  prompts: readonly Prompt[];
  label: string;
  seed: number;
  resamples: number;
  cacheSalt: boolean;
  runDir: string | null;
  rows: Record<string, unknown>[];
  walls: ReadonlyMap<number, readonly [number, number]>;
  outputsIndex: string | null;
  interrupted: boolean;
  planned: number;
  nondeterministic: string[];
  extending: { record: { evidence_id: string; data: Record<string, unknown> }; rows: Record<string, unknown>[] } | null;
  /** Limitations and info from the server check. */
  server: { limitations: string[]; info: ServerInfo };
  /** identity.gpu (from --gpu-name or nvidia-smi), with what is missing. */
  gpu: Record<string, unknown>;
  engine: { name: string; version: string | null; kind_source: string; kind_detail?: string };
  /** The arguments as stored (base_url already an HMAC tag). */
  args: Record<string, unknown>;
  /** A note when the endpoint key is per process. */
  keyNote: string | null;
  isLocal: boolean;
  /** Why the run stopped early on a failed write (the record says so first), if it did. */
  writeFailure?: string | null;
  /** Why the copy of the outputs and inputs in --run-dir stopped (the record's own are whole), or null. */
  runDirFailure?: string | null;
  /** Told when the run dir's metrics file cannot be written (exit 74 after the record is made). */
  onRunDirFailure?: (e: IkError) => void;
  /** What the run's live metrics served and pushed, when asked for. */
  liveReport?: LiveReport | null;
  /** The GPUs over the timed rounds and the energy per output token, when sampled (`data.gpu_telemetry`). */
  gpuSample?: LevelGpu | null;
  /** ik's own request path run in memory before the first request (client_warm_up.ts), when it was. */
  clientWarmUp?: ClientWarmUp | null;
}

const fmt = (x: number | null | undefined, nd = 1) => (x === null || x === undefined ? "n/a" : x.toFixed(nd));

/** How the ok requests' tokens were counted, for the summary line (none when no request succeeded). */
function tokensBy(methods: Record<string, number>): string {
  const names = Object.keys(methods).sort();
  return names.length ? `tokens by ${names.join(",")}` : "no request succeeded";
}

/** Per-input medians for `<run dir>/metrics/<label>.json`. */
async function writeMetricsFile(runDir: string, label: string, rows: Record<string, unknown>[], table: unknown): Promise<void> {
  const per = new Map<string, { bucket: unknown; v: Record<string, number[]> }>();
  const names = ["ttft_ms", "tpot_ms", "decode_tok_s", "e2e_ms"];
  for (const r of rows) {
    if (!r.ok || typeof r.id !== "string") continue;
    const d = per.get(r.id) ?? { bucket: r.bucket, v: Object.fromEntries(names.map((k) => [k, [] as number[]])) };
    for (const k of names) if (typeof r[k] === "number") d.v[k].push(r[k] as number);
    per.set(r.id, d);
  }
  const perInput = Object.fromEntries([...per.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, d]) => [
    id,
    { bucket: d.bucket, ...Object.fromEntries(names.map((k) => [k, median(d.v[k])])) },
  ]));
  const p = join(runDir, "metrics", `${label}.json`);
  await guardWrite(p, () => mkdir(join(runDir, "metrics"), { recursive: true, mode: 0o700 }));
  await writeWhole(p, scrubbedJson({ label, speed: { per_bucket: table, per_input_median: perInput } }, 1) + "\n", 0o644);
}


function methodCounts(rows: Record<string, unknown>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) if (r.ok) out[String(r.token_count_method ?? "none")] = (out[String(r.token_count_method ?? "none")] ?? 0) + 1;
  return out;
}

/** Builds the record (and the run dir's metrics file). */
export async function buildSingleRecord(x: SingleRecordInput): Promise<Record<string, unknown>> {
  const runner = x.runner;
  const buckets = setBuckets({ ...x.set, prompts: x.prompts });
  const { metrics, table } = bucketMetrics(x.rows as unknown as SingleRow[], buckets, { resamples: x.resamples, seed: 0 });
  const gs = x.gpuSample ?? null;
  if (gs) {
    const n = x.rows.filter((r) => r.ok).length;
    metrics.push(
      metric("gpu_power_w", gs.telemetry.total.mean_power_w, "W", "mean", { n: gs.telemetry.n }),
      metric("joules_per_output_token", gs.energy.joules_per_output_token, "J/token", "mean", { n }),
      metric("output_tok_s_per_watt", gs.energy.output_tokens_per_s_per_watt, "tok/s/W", "mean", { n }),
    );
  }
  const prevWalls = new Map<number, readonly [number, number]>();
  for (const w of ((x.extending?.record.data.rounds ?? []) as { index: number; t_start: number; t_end: number }[])) {
    prevWalls.set(Number(w.index), [w.t_start, w.t_end]);
  }
  const walls = new Map([...prevWalls, ...x.walls]);
  const rounds = roundRows(x.rows as unknown as SingleRow[], walls);
  const maxById = new Map(x.prompts.map((p) => [p.id, runner.maxFor(p)]));
  const limitations = [
    ...x.server.limitations,
    ...countLimitations(x.rows as unknown as CountRow[], runner.asked?.exact_length ?? null, maxById, runner.cfg.tokenIds, runner.cfg.engineKind),
  ];
  const lengths = promptLengthCheck(x.rows, x.prompts);
  if (lengths) limitations.push(...lengths.limitations);
  const failed = x.rows.filter((r) => !r.ok);
  if (failed.length) limitations.push(`${failed.length} of ${x.rows.length} request(s) failed (e.g. ${failed[0].error})`);
  if (!x.cacheSalt && rounds.length > 1) {
    limitations.push("--no-cache-salt: identical prompts were resent every round, so rounds after the first can be served from the engine's prefix cache; TTFT here is warm-cache TTFT, not cold prefill");
  }
  if (!x.isLocal) limitations.push("server is not on this host: TTFT and e2e include the network round trip");
  const shared = x.cacheSalt ? sharedPrefixNote(x.prompts) : null;
  if (shared) limitations.push(shared);
  if (x.keyNote) limitations.push(x.keyNote);
  if (x.nondeterministic.length) {
    limitations.push(`${x.nondeterministic.length} prompt(s) produced different text across untagged rounds (non-deterministic decoding?), e.g. ${x.nondeterministic[0]}`);
  }
  if (rounds.length < 2) limitations.push("fewer than 2 rounds: no confidence interval");
  // Incompleteness is inherited: a record built on an interrupted one holds its partial rounds.
  const inherited = x.extending !== null && (x.extending.record as { complete?: boolean }).complete !== true;
  if (inherited) {
    limitations.unshift(`extends ${x.extending!.record.evidence_id}, which is incomplete (its run was interrupted): its partial rounds are part of this record`);
  }
  if (x.interrupted) limitations.push(`interrupted after ${x.rows.length} of ${x.planned} requests`);
  if (x.writeFailure) limitations.unshift(`STOPPED EARLY: ${x.writeFailure}`);
  if (x.runDirFailure) limitations.push(`the copy of the outputs and inputs in --run-dir stopped (${x.runDirFailure}); the record's own copies are whole`);
  const liveNote = liveLimitation(x.liveReport ?? null);
  if (liveNote) limitations.push(liveNote);
  if (x.gpuSample?.telemetry.note) limitations.push(`GPU telemetry: ${x.gpuSample.telemetry.note}`);
  if (x.gpuSample?.telemetry.available) {
    limitations.push("energy is the sampled GPUs' board power (idle draw included) over the timed rounds, one request at a time, about one sample a second; joules per output token = mean power x the rounds' span / output tokens");
  }
  const missing: string[] = [];
  if (!x.gpu.name) missing.push("gpu identity (remote server or no nvidia-smi: pass --gpu-name)");
  if (!x.rows.some((r) => r.ok)) missing.push("every request failed");
  const maxes = [...new Set(x.prompts.map((p) => runner.maxFor(p)))].sort((a, b) => a - b);
  const workload = {
    gen_len: maxes.length === 1 ? maxes[0] : null,
    batch: 1,
    seed: x.seed,
    mode: "single",
    bucket: buckets.length === 1 ? buckets[0] : null,
    prompt_set: { name: x.set.name, sha256: x.set.sha256, n: x.prompts.length },
    endpoint_kind: `openai_${runner.cfg.api}`,
    prefix_cache: x.cacheSalt ? "cold" : "warm",
    request_set: requestSet(x.prompts, runner),
  };
  const artifacts = [await x.run.artifact("requests.jsonl", "requests")];
  if (x.outputsIndex) artifacts.push(await x.run.artifact(x.outputsIndex, "outputs_index"));
  const all = table.all as Record<string, { median: number | null; ci95_median: [number, number] | null } | null>;
  let summary = `${x.label} ${runner.cfg.model} (${runner.cfg.api}, single user, ${rounds.length} round(s) x ${x.prompts.length} prompts): ` +
    `decode ${fmt(all.decode_tok_s?.median)} tok/s`;
  const ci = all.decode_tok_s?.ci95_median;
  if (ci) summary += ` (95% CI ${fmt(ci[0])}-${fmt(ci[1])})`;
  summary += `, TTFT ${fmt(all.ttft_ms?.median)} ms (${x.cacheSalt ? "cold prefix cache" : "prompts repeated: warm prefix cache"}), ` +
    `TPOT ${fmt(all.tpot_ms?.median, 2)} ms, all buckets; ${tokensBy(methodCounts(x.rows))}`;
  if (failed.length) summary += `; ${failed.length} failed`;
  if (x.interrupted) summary += "; INTERRUPTED";
  const data = {
    label: x.label,
    base_url_kind: x.isLocal ? "local" : "remote",
    server: x.server.info,
    prompt_set_sha256: x.set.sha256,
    prompt_set_name: x.set.name,
    buckets: table,
    rounds,
    request_profile: { engine_kind: runner.cfg.engineKind, api: runner.cfg.api, asked: runner.asked },
    prefix_cache: {
      mode: x.cacheSalt ? "cold" : "warm",
      how: x.cacheSalt
        ? "warm-up and every round after round 0 prefix the prompt with a unique tag ([ik-warm-N] / [ik-rN], a few tokens); round 0 is untagged"
        : "warm-up tagged; every round resends identical prompts (--no-cache-salt)",
    },
    outputs_from: x.outputsIndex || !x.extending ? null : ((x.extending.record.data.outputs_from as string | null) ?? x.extending.record.evidence_id),
    token_count_methods: methodCounts(x.rows),
    nondeterministic_prompts: x.nondeterministic.slice(0, 50),
    extends: x.extending?.record.evidence_id ?? null,
    server_clock: serverClock(x.rows, buckets),
    prompt_lengths: lengths?.check ?? null,
    client_warm_up: x.clientWarmUp ?? null,
    ...(x.liveReport ? { live_metrics: x.liveReport } : {}),
    ...(x.gpuSample ? { gpu_telemetry: x.gpuSample } : {}),
    timer: "client monotonic clock (performance.now), one timestamp per network read",
    definitions: {
      client_warm_up: "before the first request ik ran its own request path that many times in memory (nothing sent to the server), then paused 50 ms, so the first rounds are not measured on cold code",
      ttft_ms: "first token-bearing SSE event - request send (includes connect)",
      ttfo_ms: "first content token - request send, when reasoning tokens came first (reasoning models), else null",
      tpot_ms: "(t_last - t_first) / (n_tokens - tokens in first event)",
      decode_tok_s: "(n_tokens - tokens in first event) / (t_last - t_first)",
      e2e_ms: "[DONE] (or end of stream) - request send",
      median: "nearest-rank median over every ok request of the bucket",
      p99: `nearest-rank 99th percentile (the ceil(0.99 n)-th smallest of n values: with fewer than 100 values, their maximum), reported where a bucket has at least ${P99_MIN_REQUESTS} values`,
      requests_per_s: `ok requests / the sum of their e2e (one request at a time: the rate one user gets), where a bucket has at least ${P99_MIN_REQUESTS}`,
      ci95: CI_METHOD_T_CLUSTER,
      ci95_tails: CI_TAIL_COVERAGE,
    },
  };
  // The run dir's metrics file is a copy: its failure is said in the record and to the caller, the record is still made.
  if (x.runDir && !x.runDirFailure) {
    await writeMetricsFile(x.runDir, x.label, x.rows, table).catch((e) => {
      if (!isOutputError(e)) throw e;
      x.onRunDirFailure?.(e);
      limitations.push(`the run dir's metrics file was not written (${e.where}: ${e.message}); the record is whole`);
    });
  }
  return buildRecord({
    evidence_id: x.evidenceId,
    kind: "serve_benchmark",
    claim_class: "observed",
    summary,
    tool: { name: "ik", version: VERSION, rev: GIT_REV },
    request: { command: "bench serve", args: x.args },
    identity: { gpu: x.gpu, engine: x.engine, model: { id: runner.cfg.model }, workload },
    metrics,
    artifacts,
    missing,
    limitations,
    data,
    complete: !x.interrupted && !inherited,
  }) as unknown as Record<string, unknown>;
}
