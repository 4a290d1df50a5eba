/**
 * Turning `ik bench serve` flags into a run: the endpoint (stored only as an HMAC tag), the API key
 * (from the env var named by --api-key-env, never stored), --extra-body and chat_template_kwargs
 * (with the run dir's intake pin), the prompt set (a file or the built-in one), a tokenizer, the
 * engine kind (flag or detected), the server check, the GPU identity, and --extend.
 * @module
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, resolve } from "node:path";
import { IkError, usageError } from "../cli/errors.ts";
import { isLoopback, listModels, parseEndpoint } from "../client/mod.ts";
import { checkExtraBody } from "../engines/extra_body.ts";
import { detectEngine, type DetectedEngine } from "../engines/mod.ts";
import { checkWritable, endpointKeyPath, endpointTag, loadEndpointKey, storeRoot } from "../evidence/mod.ts";
import { gpuIdentity, queryGpus } from "../gpu/mod.ts";
import { loadPromptSet, type PromptSet } from "../prompts/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { makeSanitizer, type Sanitize, sanitizedError } from "../report/sanitize.ts";
import { traceSchedule } from "../schedule/trace_schedule.ts";
import { type ConversationSet, parseConversationsText, parseSynthConversations, synthConversations } from "../prompts/conversations.ts";
import type { ConversationRun } from "../bench/conversations.ts";
import { readShareGptConversations } from "../datasets/sharegpt_conversations.ts";
import { loadTokenizer } from "../tokenizer/load_tokenizer.ts";
import { loadPrevious } from "../bench/extend.ts";
import { applyPin, intakePin } from "../bench/intake_pin.ts";
import { Runner } from "../bench/runner.ts";
import type { SingleRun } from "../bench/serve_single.ts";
import type { LoadRun } from "../bench/serve_load.ts";
import { DEFAULT_LEVEL_GAP_S } from "../shard/schedule.ts";
import { resolveShard } from "../shard/shard_spec.ts";
import { clockAnchor, type ShardRun } from "../shard/sharded_load.ts";
import { checkServer } from "../bench/server_check.ts";
import { GaugeSampler } from "../scrape/mod.ts";
import { runtimeExec } from "./_exec.ts";
import type { BenchServeFlags } from "./bench_serve.ts";
import type { CommandContext } from "./context.ts";
import { checkDatasetFlags, datasetPromptSet } from "./bench_serve_dataset.ts";

const LABEL = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;

function jsonObject(text: string | undefined, flag: string): Record<string, unknown> {
  if (text === undefined || text.trim() === "") return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw usageError(flag, `not valid JSON (${(e as Error).message})`, "pass a JSON object, e.g. '{\"enable_thinking\":false}'");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw usageError(flag, "must be a JSON object");
  return v as Record<string, unknown>;
}

function list(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
}

/** A prepared run (single mode's settings; `load` set in load mode), with the cleaner for everything printed. */
export interface PreparedServe {
  run: Omit<SingleRun, "signal" | "progress">;
  load: Omit<LoadRun, "signal" | "onProgress"> | null;
  /** Set in conversations mode. */
  conv: Omit<ConversationRun, "signal" | "progress"> | null;
  /** Set for a sharded load run (--shard). */
  shard: ShardRun | null;
  clean: Sanitize;
  sanitizeError(e: unknown): unknown;
}

function numbers(values: readonly string[], flag: string, integer: boolean): number[] {
  const out = list(values).map((v) => Number(v));
  for (const [i, v] of out.entries()) {
    if (!Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v))) {
      throw usageError(flag, `'${list(values)[i]}' is not a ${integer ? "positive integer" : "positive number"}`, `e.g. ${flag} ${integer ? "1,2,4,8" : "0.5,1,2"}`);
    }
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/** `--duration-s` when not given (and not replaced by `--requests`). */
export const DEFAULT_DURATION_S = 30;

/** The load-mode flags' own rules (usage errors, 64), before anything is sent. */
/** What `--rates auto` / `--concurrency auto` ask for. */
export interface AutoLevels {
  precision: number;
  maxLevels: number;
  /** The first level, or null for the default (concurrency 1; rate 1000 / e2e_ref). */
  start: number | null;
}

/** Whether the flag's values are the one word `auto`. */
function isAuto(values: readonly string[]): boolean {
  const l = list(values);
  return l.length === 1 && l[0].toLowerCase() === "auto";
}

/** `--rates auto` / `--concurrency auto` and the flags that tune the search (usage errors, 64). */
function autoLevels(f: BenchServeFlags): { flag: "--rates" | "--concurrency"; auto: AutoLevels } | null {
  const flag = isAuto(f.rates) ? "--rates" : isAuto(f.concurrency) ? "--concurrency" : null;
  const tuning = [["--precision", f.precision !== undefined], ["--max-levels", f.maxLevels !== undefined], ["--auto-start", f.autoStart !== undefined]] as const;
  if (flag === null) {
    const given = tuning.find(([, g]) => g);
    if (given) throw usageError(given[0], "is for a level search (--rates auto or --concurrency auto)", `give --rates auto or --concurrency auto, or drop ${given[0]}`);
    for (const [fl, v] of [["--rates", f.rates], ["--concurrency", f.concurrency]] as const) {
      if (list(v).some((x) => x.toLowerCase() === "auto")) throw usageError(fl, "auto cannot be mixed with levels", `give ${fl} auto alone, or a list of levels`);
    }
    return null;
  }
  const other = flag === "--rates" ? f.concurrency : f.rates;
  if (list(other).length) throw usageError("--mode load", "needs exactly one of --concurrency or --rates", `drop ${flag === "--rates" ? "--concurrency" : "--rates"}`);
  if (f.closedLoop) throw usageError(flag, "auto searches for N*, and --closed-loop never yields one", "drop --closed-loop, or give a list of levels");
  if (f.sweepAll) throw usageError("--sweep-all", `cannot be used with ${flag} auto (the search picks the levels)`, "drop --sweep-all, or give a list of levels");
  if (f.shard !== undefined) throw usageError(flag, "auto cannot be used with --shard: the shards would each search on their own", "find N* with one process, then shard a grid around it");
  if (f.sloTtftP95Ms === undefined && f.sloTpotP95Ms === undefined && f.sloE2eP95Ms === undefined) {
    throw usageError(flag, "auto needs an SLO to search against", "add --slo-ttft-p95-ms, --slo-tpot-p95-ms and/or --slo-e2e-p95-ms");
  }
  if (flag === "--concurrency" && f.autoStart !== undefined && !Number.isInteger(f.autoStart)) throw usageError("--auto-start", `${f.autoStart} is not a whole number of streams`, "e.g. --auto-start 4");
  return { flag, auto: { precision: f.precision ?? 0.05, maxLevels: f.maxLevels ?? 10, start: f.autoStart ?? null } };
}

/** The think time `MEAN[:SD]` in ms. */
function thinkTime(v: string | undefined): { mean: number; sd: number } {
  if (v === undefined) return { mean: 0, sd: 0 };
  const [m, sd = "0"] = v.split(":");
  const mean = Number(m), s = Number(sd);
  if (!(Number.isFinite(mean) && mean >= 0 && Number.isFinite(s) && s >= 0) || v.split(":").length > 2) {
    throw usageError("--think-time-ms", `'${v}' is not MEAN[:SD] in ms (numbers, 0 or more)`, "e.g. --think-time-ms 500:200");
  }
  return { mean, sd: s };
}

/** `--mode conversations`'s own rules (usage errors, 64). */
function checkConversationFlags(f: BenchServeFlags): void {
  const convOnly = [["--conversations", f.conversations !== undefined], ["--sessions", f.sessions !== undefined], ["--think-time-ms", f.thinkTimeMs !== undefined],
    ["--max-conversations", f.maxConversations !== undefined]] as const;
  if (f.mode !== "conversations") {
    const given = convOnly.find(([, g]) => g);
    if (given) throw usageError(given[0], "is for --mode conversations", "add --mode conversations, or drop it");
    return;
  }
  if (f.conversations === undefined) throw usageError("--mode conversations", "needs --conversations FILE or synth:N:T:IN:OUT", "e.g. --conversations synth:8:4:128:64");
  const other = [["--prompts", f.prompts !== undefined], ["--dataset", f.dataset !== undefined], ["--rates", list(f.rates).length > 0], ["--concurrency", list(f.concurrency).length > 0],
    ["--closed-loop", f.closedLoop], ["--requests", f.requests !== undefined], ["--duration-s", f.durationS !== undefined], ["--shard", f.shard !== undefined], ["--extend", f.extend !== undefined],
    ["--run-dir", f.runDir !== undefined], ["--time-scale", f.timeScale !== undefined], ["--max-duration-s", f.maxDurationS !== undefined]] as const;
  const given = other.find(([, g]) => g);
  if (given) throw usageError(given[0], "is not for --mode conversations (the conversations are the workload)", `drop ${given[0]}`);
  thinkTime(f.thinkTimeMs);
}

/** `--mode trace`'s own rules (usage errors, 64): the schedule is the trace's, so no grid, window or search. */
function checkTraceFlags(f: BenchServeFlags): void {
  const grid = [["--rates", list(f.rates).length > 0], ["--concurrency", list(f.concurrency).length > 0], ["--closed-loop", f.closedLoop], ["--sweep-all", f.sweepAll],
    ["--requests", f.requests !== undefined], ["--duration-s", f.durationS !== undefined], ["--max-requests-per-level", f.maxRequestsPerLevel > 0],
    ["--precision", f.precision !== undefined], ["--max-levels", f.maxLevels !== undefined], ["--auto-start", f.autoStart !== undefined],
    ["--ref-e2e-ms", f.refE2eMs !== undefined], ["--extend", f.extend !== undefined]] as const;
  const given = grid.find(([, g]) => g);
  if (given) throw usageError(given[0], "is not for --mode trace: the trace's own arrival times are the schedule", `drop ${given[0]} (--time-scale and --max-duration-s shape a replay)`);
}

/** The sharding flags without --shard (64). */
function checkNoShardFlags(f: BenchServeFlags): void {
  const shardOnly = [["--shards", f.shards !== undefined], ["--start-at", f.startAt !== undefined], ["--level-gap-s", f.levelGapS !== undefined], ["--group", f.group !== undefined]] as const;
  const given = shardOnly.filter(([, g]) => g).map(([n]) => n);
  if (given.length) throw usageError(given[0], "is for a sharded load run", "add --shard K/S (or --shard auto), or drop it");
}

/** What --shard needs, in load and trace mode alike (64). */
function checkShardFlags(f: BenchServeFlags): void {
  if (f.runDir !== undefined) throw usageError("--run-dir", "cannot be used with --shard (the shards would write the same files)", "run ik merge, then ik export");
  if (f.shards !== undefined && (f.shard as string).trim() !== "auto") throw usageError("--shards", "is for --shard auto on Kubernetes", "drop it, --shard K/S says S");
  if (f.startAt === undefined) throw usageError("--shard", "needs --start-at EPOCH_MS, the same for every shard", "e.g. --start-at $(( $(date +%s%3N) + 60000 ))");
  if (f.failOnSlo) throw usageError("--fail-on-slo", "cannot be used with --shard: a slice has no verdict", "give --fail-on-slo to ik merge");
  if (f.gpuName === undefined || f.gpuCount === undefined) {
    throw usageError(f.gpuName === undefined ? "--gpu-name" : "--gpu-count", "is required with --shard (every slice must name the same GPUs)", "give --gpu-name and --gpu-count");
  }
}

function checkModeFlags(f: BenchServeFlags): { kind: "rate" | "concurrency"; grid: number[]; auto: AutoLevels | null } | null {
  checkConversationFlags(f);
  if (f.mode === "conversations") return null;
  const traceOnly = [["--time-scale", f.timeScale !== undefined], ["--max-duration-s", f.maxDurationS !== undefined]] as const;
  if (f.mode === "trace") {
    checkTraceFlags(f);
    if (f.failOnSlo && f.sloTtftP95Ms === undefined && f.sloTpotP95Ms === undefined && f.sloE2eP95Ms === undefined) {
      throw usageError("--fail-on-slo", "needs an SLO", "add --slo-ttft-p95-ms, --slo-tpot-p95-ms or --slo-e2e-p95-ms");
    }
    if (f.shard !== undefined) checkShardFlags(f);
    else checkNoShardFlags(f);
    return { kind: "rate", grid: [], auto: null };
  }
  const notTrace = traceOnly.find(([, g]) => g);
  if (notTrace) throw usageError(notTrace[0], "is for --mode trace", "add --mode trace, or drop it");
  const search = f.mode === "load" ? autoLevels(f) : null;
  const single = f.mode === "single";
  const conc = search || (single && isAuto(f.concurrency)) ? [] : numbers(f.concurrency, "--concurrency", true);
  const rates = search || (single && isAuto(f.rates)) ? [] : numbers(f.rates, "--rates", false);
  const concGiven = list(f.concurrency).length > 0, ratesGiven = list(f.rates).length > 0;
  const slo = f.sloTtftP95Ms !== undefined || f.sloTpotP95Ms !== undefined || f.sloE2eP95Ms !== undefined;
  if (f.shard === undefined) checkNoShardFlags(f);
  else if (f.mode !== "load") throw usageError("--shard", "is for --mode load or --mode trace", "add --mode load");
  if (f.mode === "single") {
    const loadOnly = [["--concurrency", concGiven], ["--rates", ratesGiven], ["--closed-loop", f.closedLoop], ["--sweep-all", f.sweepAll],
      ["--fail-on-slo", f.failOnSlo], ["--ref-e2e-ms", f.refE2eMs !== undefined], ["--requests", f.requests !== undefined],
      ["--precision", f.precision !== undefined], ["--max-levels", f.maxLevels !== undefined], ["--auto-start", f.autoStart !== undefined]] as const;
    const given = loadOnly.filter(([, g]) => g).map(([n]) => n);
    if (given.length) throw usageError(given[0], "is for --mode load", "add --mode load, or drop it");
    return null;
  }
  if (concGiven === ratesGiven) throw usageError("--mode load", "needs exactly one of --concurrency or --rates", "e.g. --rates 1,2,4 or --concurrency 1,4,16");
  if (f.extend !== undefined) throw usageError("--extend", "is for --mode single (load levels are not extended)");
  if (f.requests !== undefined) {
    const other = f.durationS !== undefined ? "--duration-s" : f.maxRequestsPerLevel ? "--max-requests-per-level" : null;
    if (other) throw usageError("--requests", `cannot be used with ${other}: N arrivals set a level's length`, `drop ${other}, or drop --requests to use a window`);
    if (f.closedLoop) throw usageError("--requests", "is for open-loop levels (a seeded arrival schedule)", "drop --closed-loop, or give --duration-s and --max-requests-per-level");
  }
  if (f.failOnSlo && !slo) throw usageError("--fail-on-slo", "needs an SLO", "add --slo-ttft-p95-ms, --slo-tpot-p95-ms or --slo-e2e-p95-ms");
  if (f.failOnSlo && f.closedLoop) throw usageError("--fail-on-slo", "cannot be used with --closed-loop (a stress test never yields N*)");
  if (concGiven && !f.closedLoop && f.refE2eMs === undefined && f.refRequests < 1) {
    throw usageError("--ref-requests", "--concurrency needs --ref-requests >= 1 (to measure the unloaded e2e) or --ref-e2e-ms");
  }
  if (search && ratesGiven && f.autoStart === undefined && f.refE2eMs === undefined && f.refRequests < 1) {
    throw usageError("--ref-requests", "--rates auto starts at one stream's rate (1000 / e2e_ref): it needs --ref-requests >= 1, --ref-e2e-ms or --auto-start");
  }
  if (f.shard !== undefined) {
    checkShardFlags(f);
    if (concGiven && !f.closedLoop && f.refE2eMs === undefined) {
      throw usageError("--concurrency", "with --shard needs --ref-e2e-ms: the shards cannot share reference requests", "measure it once (an unsharded run's e2e_ref_ms) and give it to every shard");
    }
  }
  if (search) return { kind: concGiven ? "concurrency" : "rate", grid: [], auto: search.auto };
  return conc.length ? { kind: "concurrency", grid: conc, auto: null } : { kind: "rate", grid: rates, auto: null };
}

/** The conversations `--conversations` names: a JSONL file, or synth:N:T:IN:OUT. */
async function loadConversations(cwd: string, v: string, seed: number, max: number | undefined): Promise<ConversationSet> {
  const synth = parseSynthConversations(v);
  if (synth) {
    if (max !== undefined) throw usageError("--max-conversations", "is for a conversations file (synth:N:... gives N)", "drop it, or change N");
    return synthConversations(synth, seed);
  }
  const path = resolve(cwd, v);
  // ShareGPT_V3 (a JSON array): its multi-turn entries, a seeded sample of 1000 unless told.
  if (/\.json(\.gz)?$/i.test(path)) return await readShareGptConversations(path, max ?? 1000, seed);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw usageError("--conversations", `cannot read ${v}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, "give a JSONL file of conversations, or synth:N:T:IN:OUT");
  }
  const set = parseConversationsText(text, basename(path));
  if (max !== undefined && max > 0 && set.conversations.length > max) set.conversations = set.conversations.slice(0, max);
  return set;
}

const GROUP = /^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,127}$/;

/** The shard, the start time and the group id of a sharded run (usage errors, 64). */
async function shardRun(ctx: CommandContext, f: BenchServeFlags): Promise<ShardRun | null> {
  if (f.shard === undefined) return null;
  const rt = ctx.runtime;
  const spec = resolveShard(f.shard, (k) => rt.env(k), f.shards ?? null);
  const raw = (f.startAt ?? "").trim();
  if (!/^[0-9]{12,14}$/.test(raw)) throw usageError("--start-at", `'${f.startAt}' is not milliseconds since the Unix epoch`, "e.g. --start-at $(( $(date +%s%3N) + 60000 ))");
  const startAtMs = Number(raw);
  const keyFile = rt.env("IK_KEY_FILE");
  if (!keyFile) throw usageError("--shard", "needs IK_KEY_FILE: every shard must tag the endpoint with the same key", "put one key file on the shared filesystem (or a Kubernetes Secret) and export IK_KEY_FILE=PATH");
  let keyText: string;
  try {
    keyText = await readFile(resolve(rt.cwd(), keyFile), "utf8");
  } catch {
    throw usageError("IK_KEY_FILE", `${keyFile} cannot be read: each shard would make its own key`, "create it once where every shard can read it, e.g. openssl rand -hex 32 > FILE; chmod 600 FILE");
  }
  if (!/^[0-9a-f]{64}$/i.test(keyText.trim())) {
    throw usageError("IK_KEY_FILE", `${keyFile} is not a key ik reads (64 hex characters): each shard would fall back to a key of its own`, "write one with: openssl rand -hex 32 > FILE");
  }
  let groupId: string, groupSource: string;
  if (f.group !== undefined) {
    if (!GROUP.test(f.group)) throw usageError("--group", `'${f.group}' must be 1-128 characters of letters, digits and _ . : + -`, "e.g. --group run-1796140800000");
    [groupId, groupSource] = [f.group, "--group"];
  } else if (spec.schedulerId) [groupId, groupSource] = [`${startAtMs}-${spec.schedulerId}`, "slurm"];
  else if (rt.env("IK_JOB_UID") && GROUP.test(rt.env("IK_JOB_UID") as string)) [groupId, groupSource] = [`${startAtMs}-${rt.env("IK_JOB_UID")}`, "kubernetes"];
  else [groupId, groupSource] = [String(startAtMs), "start-at"];
  return { spec, startAtMs, levelGapS: f.levelGapS ?? DEFAULT_LEVEL_GAP_S, groupId, groupSource };
}

/** Resolves the flags; usage (64), data (65) and unavailable (69) errors are thrown as IkError. */
export async function prepareServe(ctx: CommandContext, f: BenchServeFlags): Promise<PreparedServe> {
  const rt = ctx.runtime;
  const apiKey = f.apiKeyEnv !== undefined ? rt.env(f.apiKeyEnv) || undefined : undefined;
  const clean = makeSanitizer(f.baseUrl, apiKey);
  try {
    return await prepare(ctx, f, apiKey, clean);
  } catch (e) {
    throw sanitizedError(e, clean);
  }
}

async function prepare(ctx: CommandContext, f: BenchServeFlags, apiKey: string | undefined, clean: Sanitize): Promise<PreparedServe> {
  const rt = ctx.runtime;
  const mode = checkModeFlags(f);
  const shard = await shardRun(ctx, f);
  const gpuCount = f.gpuCount ?? 1;
  const ep = parseEndpoint(f.baseUrl);
  if (ep.note) ctx.err(`ik bench serve: note: ${escapeTerminalLine(clean(ep.note))}\n`);
  if (f.apiKeyEnv !== undefined && !apiKey) {
    throw usageError("--api-key-env", `environment variable ${f.apiKeyEnv} is not set or empty`, `export ${f.apiKeyEnv}=... or drop the flag`);
  }
  const extraBody = checkExtraBody(f.extraBody) ?? {};
  let chatTemplateKwargs = jsonObject(f.chatTemplateKwargs, "--chat-template-kwargs");
  const runDir = f.runDir ? resolve(rt.cwd(), f.runDir) : null;
  // The store and the run dir must take a file before the first request (exit 74 otherwise).
  await checkWritable([storeRoot((k) => rt.env(k), rt.cwd()), runDir]);
  if (runDir) {
    const pin = await intakePin(runDir);
    if (pin) {
      const base = extraBody.chat_template_kwargs && typeof extraBody.chat_template_kwargs === "object" ? extraBody.chat_template_kwargs as Record<string, unknown> : {};
      chatTemplateKwargs = applyPin({ ...base, ...chatTemplateKwargs }, pin, runDir);
    }
  }
  const buckets = list(f.buckets);
  const sel = { buckets: buckets.length ? buckets : undefined, limitPerBucket: f.limitPerBucket || undefined };
  const tok = f.tokenizer ? await loadTokenizer(resolve(rt.cwd(), f.tokenizer)) : null;
  const wantsDataset = checkDatasetFlags(f) !== null;
  const fileSet: PromptSet | null = wantsDataset ? null : f.prompts && f.prompts !== BUILTIN_NAME ? await loadPromptSet(resolve(rt.cwd(), f.prompts), sel) : loadBuiltinPromptSet(sel);
  const convSet = f.mode === "conversations" ? await loadConversations(rt.cwd(), f.conversations as string, f.seed, f.maxConversations) : null;
  const server = await checkServer(ep, f.model, { apiKey, signal: ctx.signal });
  // A dataset is read once the server answered: its lengths are counted by the server's /tokenize.
  const fromDataset = wantsDataset ? await datasetPromptSet(ctx, f, tok, { baseUrl: f.baseUrl, api: f.api, model: f.model, apiKeyEnv: f.apiKeyEnv }) : null;
  const set: PromptSet = fromDataset ? fromDataset.set : fileSet as PromptSet;
  // A replay sends the set's prompts in arrival order at their own times (one level, the trace's).
  const trace = f.mode === "trace" ? traceSchedule(set.prompts, set.name, { timeScale: f.timeScale ?? 1, maxDurationS: f.maxDurationS ?? null }) : null;
  if (trace && mode) mode.grid = [Number(trace.rateRps.toPrecision(6))];
  let engine: DetectedEngine;
  if (f.engineKind !== "auto") engine = { kind: f.engineKind, source: "flag", detail: "--engine-kind" };
  else {
    const models = await listModels(ep, { apiKey, signal: ctx.signal, timeoutMs: 5000 });
    engine = await detectEngine(ep, { apiKey, signal: ctx.signal, models, noMetrics: shard !== null });
  }
  const label = f.label ?? engine.kind;
  if (!LABEL.test(label)) throw usageError("--label", `'${label}' must be 1-64 characters of letters, digits and _ . + - (it names a directory)`);
  const key = await loadEndpointKey(endpointKeyPath((k) => rt.env(k), rt.env("HOME") || homedir()));
  const args: Record<string, unknown> = {
    base_url: endpointTag(key.key, ep),
    model: f.model,
    prompts: set.name,
    mode: f.mode,
    api: f.api,
    engine_kind: engine.kind,
    engine_version: f.engineVersion ?? null,
    max_tokens: f.maxTokens ?? null,
    rounds: f.rounds,
    warmup: f.warmup,
    seed: f.seed,
    label,
    run_dir: runDir,
    buckets: buckets.length ? buckets : null,
    limit_per_bucket: f.limitPerBucket,
    token_ids: f.tokenIds,
    exact_length: f.exactLength,
    cache_salt: f.cacheSalt,
    extra_body: Object.keys(extraBody).length ? extraBody : null,
    chat_template_kwargs: Object.keys(chatTemplateKwargs).length ? chatTemplateKwargs : null,
    tokenizer: tok ? { sha256: tok.sha256 } : null,
    api_key_env: f.apiKeyEnv ?? null,
    timeout_s: f.timeoutS,
    idle_timeout_s: f.idleTimeoutS,
    resamples: f.resamples,
    extend: f.extend ?? null,
    gpu_name: f.gpuName ?? null,
    gpu_count: gpuCount,
    ...fromDataset?.args,
  };
  if (mode) {
    Object.assign(args, {
      [mode.kind === "concurrency" ? "concurrency" : "rates"]: mode.auto ? "auto" : mode.grid, duration_s: f.requests ? null : f.durationS ?? DEFAULT_DURATION_S,
      ...(mode.auto ? { auto_precision: mode.auto.precision, auto_max_levels: mode.auto.maxLevels, auto_start: mode.auto.start } : {}),
      ...(trace ? { rates: null, duration_s: null, time_scale: trace.timeScale, max_duration_s: trace.maxDurationS } : {}),
      requests_per_level: f.requests ?? null, max_requests_per_level: f.maxRequestsPerLevel, ref_requests: f.refRequests, ref_e2e_ms: f.refE2eMs ?? null,
      burstiness: f.burstiness, slo_ttft_p95_ms: f.sloTtftP95Ms ?? null, slo_tpot_p95_ms: f.sloTpotP95Ms ?? null,
      slo_e2e_p95_ms: f.sloE2eP95Ms ?? null, slo_max_fail: f.sloMaxFail, sweep_all: f.sweepAll, closed_loop: f.closedLoop,
      fail_on_slo: f.failOnSlo, gpu_price_usd_h: f.gpuPriceUsdH ?? null,
    });
    if (shard) {
      Object.assign(args, {
        shard: f.shard, shards: f.shards ?? null, start_at: shard.startAtMs, level_gap_s: shard.levelGapS, group: shard.groupId, sweep_all: true,
      });
    }
    delete args.rounds;
    delete args.extend;
  }
  const root = storeRoot((k) => rt.env(k), rt.cwd());
  const extending = f.extend ? await loadPrevious(root, f.extend, args, set.sha256, f.allowIncomplete) : null;
  const isLocal = isLoopback(ep);
  let gpu: Record<string, unknown>;
  if (f.gpuName) gpu = { name: f.gpuName, count: gpuCount, source: "--gpu-name" };
  else if (isLocal) gpu = gpuIdentity(await queryGpus(runtimeExec(rt))) ?? { count: gpuCount };
  else gpu = { count: gpuCount };
  const runner = new Runner({
    ep,
    api: f.api,
    engineKind: engine.kind,
    model: f.model,
    maxTokens: f.maxTokens ?? null,
    tokenIds: f.tokenIds,
    exactLength: f.exactLength,
    extraBody,
    chatTemplateKwargs,
    apiKey,
    timeoutMs: f.timeoutS * 1000,
    idleTimeoutMs: f.idleTimeoutS * 1000,
    countTokens: tok ? tok.count : undefined,
    signal: ctx.signal,
  });
  const common = { runner, set, prompts: trace ? trace.prompts : set.prompts, label, seed: f.seed, storeRoot: root, runDir, server, gpu, args, keyNote: key.note, isLocal,
    engine: { name: engine.kind, version: f.engineVersion ?? null, kind_source: engine.source, kind_detail: engine.detail } };
  const clock = mode === null ? null : { anchor: clockAnchor(), sync: await rt.clockSync() as unknown as Record<string, unknown> };
  const load = mode === null ? null : {
    ...common,
    clock: clock ?? undefined,
    samplerFor: () => {
      const g = new GaugeSampler();
      return {
        start: () => g.start(ep, engine.kind, { apiKey, signal: ctx.signal }),
        stop: () => Promise.resolve(g.stop() as unknown as Record<string, unknown>),
      };
    }, levelKind: mode.kind, grid: mode.grid, auto: mode.auto, trace, closedLoop: f.closedLoop, durationS: f.durationS ?? DEFAULT_DURATION_S,
    maxRequestsPerLevel: f.maxRequestsPerLevel || null, requestsPerLevel: f.requests ?? null, burstiness: f.burstiness, refRequests: f.refRequests, refE2eMs: f.refE2eMs ?? null,
    warmup: f.warmup, sweepAll: f.sweepAll || shard !== null, gpuCount, gpuPriceUsdH: f.gpuPriceUsdH ?? null,
    slo: { ttftP95Ms: f.sloTtftP95Ms ?? null, tpotP95Ms: f.sloTpotP95Ms ?? null, e2eP95Ms: f.sloE2eP95Ms ?? null, maxFail: f.sloMaxFail },
  };
  const conv = convSet === null ? null : {
    runner, set: convSet, sessions: f.sessions ?? 1, thinkMs: thinkTime(f.thinkTimeMs), seed: f.seed, label, storeRoot: root, gpu, isLocal, keyNote: key.note, server,
    engine: common.engine, args: { ...args, prompts: null, rounds: null, conversations: { name: convSet.name, sha256: convSet.sha256 }, sessions: f.sessions ?? 1, think_time_ms: thinkTime(f.thinkTimeMs) },
  };
  return {
    load,
    conv,
    shard,
    run: {
      runner,
      set,
      prompts: set.prompts,
      rounds: f.rounds,
      warmup: f.warmup,
      cacheSalt: f.cacheSalt,
      storeRoot: root,
      extending,
      label,
      seed: f.seed,
      resamples: f.resamples,
      runDir,
      server,
      gpu,
      engine: { name: engine.kind, version: f.engineVersion ?? null, kind_source: engine.source, kind_detail: engine.detail },
      args,
      keyNote: key.note,
      isLocal,
    },
    clean,
    sanitizeError: (e) => (e instanceof IkError ? sanitizedError(e, clean) : e),
  };
}
