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
import { detectEngine, type DetectedEngine, engineVersion } from "../engines/mod.ts";
import { checkWritable, endpointKeyPath, endpointTag, loadEndpointKey, storeRoot } from "../evidence/mod.ts";
import { gpuIdentity, GpuTelemetrySampler, type GpuTelemetrySource, queryGpus, TELEMETRY_FETCH_TIMEOUT_MS } from "../gpu/mod.ts";
import { dcgmIdentity } from "../gpu/dcgm_identity.ts";
import { readDcgm } from "../gpu/telemetry_sources.ts";
import { loadPromptSet, type PromptSet } from "../prompts/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { makeSanitizer, type Sanitize, sanitizedError } from "../report/sanitize.ts";
import { traceSchedule } from "../schedule/trace_schedule.ts";
import { type ConversationSet, firstConversations, parseConversationsBytes, parseSynthConversations, synthConversations } from "../prompts/conversations.ts";
import type { ConversationRun } from "../bench/conversations.ts";
import { readShareGptConversations } from "../datasets/sharegpt_conversations.ts";
import { loadPrevious } from "../bench/extend.ts";
import { applyPin, intakePin } from "../bench/intake_pin.ts";
import { Runner } from "../bench/runner.ts";
import { nextRound, type SingleRun } from "../bench/serve_single.ts";
import type { LoadRun } from "../bench/serve_load.ts";
import { DEFAULT_LEVEL_GAP_S } from "../shard/schedule.ts";
import { resolveShard } from "../shard/shard_spec.ts";
import { clockAnchor, type ShardRun } from "../shard/sharded_load.ts";
import { checkServer } from "../bench/server_check.ts";
import { GaugeSampler } from "../scrape/mod.ts";
import { runtimeExec } from "./_exec.ts";
import type { BenchServeFlags } from "./bench_serve_flags.ts";
import { checkModeFlags, DEFAULT_DURATION_S, list, thinkTime } from "./bench_serve_modes.ts";
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
  /** Where the GPU samplers send each power reading (set to the live metrics' gauge when they run). */
  gpuPower: { sink: ((gpu: string, uuid: string, watts: number) => void) | null };
}

/** The conversations `--conversations` names: a JSONL file (plain or .gz), a ShareGPT_V3 .json(.gz), or synth:N:T:IN:OUT. */
async function loadConversations(cwd: string, v: string, seed: number, max: number | undefined): Promise<ConversationSet> {
  const synth = parseSynthConversations(v);
  if (synth) {
    if (max !== undefined) throw usageError("--max-conversations", "is for a conversations file (synth:N:... gives N)", "drop it, or change N");
    return synthConversations(synth, seed);
  }
  const path = resolve(cwd, v);
  // ShareGPT_V3 (a JSON array): its multi-turn entries, a seeded sample of 1000 unless told.
  if (/\.json(\.gz)?$/i.test(path)) return await readShareGptConversations(path, max ?? 1000, seed);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw usageError("--conversations", `cannot read ${v}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, "give a JSONL file of conversations, or synth:N:T:IN:OUT");
  }
  return firstConversations(parseConversationsBytes(bytes, basename(path)), max);
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
  const temperature = temperatureOf(f.temperature);
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
  // The tokenizer library is loaded only for --tokenizer: it stays out of every other run's memory.
  const tok = f.tokenizer ? await (await import("../tokenizer/load_tokenizer.ts")).loadTokenizer(resolve(rt.cwd(), f.tokenizer)) : null;
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
  // The version the server states, unless --engine-version gives it (the flag wins).
  const stated = f.engineVersion === undefined ? await engineVersion(ep, engine.kind, { apiKey, signal: ctx.signal }) : null;
  const engineId = {
    name: engine.kind, version: f.engineVersion ?? stated?.version ?? null,
    version_source: f.engineVersion !== undefined ? "--engine-version" : stated?.source ?? null, kind_source: engine.source, kind_detail: engine.detail,
  };
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
    temperature: temperature === null ? "server" : temperature,
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
  const next = nextRound(extending?.rows ?? []);
  if (f.firstRound !== undefined && (mode || convSet)) throw usageError("--first-round", "numbers single mode's rounds only", "drop it");
  if (!f.cacheSalt && mode) {
    throw usageError("--no-cache-salt", "applies to single mode only (and to --mode conversations, whose runs carry one tag each): load mode sends a prompt untagged once and tags only its reuses", "drop it");
  }
  if (f.firstRound !== undefined && f.firstRound < next) {
    throw usageError("--first-round", `${f.firstRound} is not after the extended record's last round (${next - 1})`, `give --first-round ${next} or more, or drop it`);
  }
  const isLocal = isLoopback(ep);
  // A local server's GPUs as nvidia-smi lists them: the identity (unless --gpu-name names them) and
  // whether nvidia-smi can sample them (with --gpu-name too: it names the GPUs, it does not turn
  // the telemetry off).
  const listed = isLocal ? gpuIdentity(await queryGpus(runtimeExec(rt))) : null;
  let gpu: Record<string, unknown>;
  if (f.gpuName) gpu = { name: f.gpuName, count: gpuCount, source: "--gpu-name" };
  else gpu = listed ?? { count: gpuCount };
  // GPU telemetry per level: a DCGM exporter when given, else nvidia-smi where it named this host's GPUs.
  let telemetrySource: GpuTelemetrySource | null = null;
  if (f.gpuMetricsUrl !== undefined) {
    let scheme = "";
    try {
      scheme = new URL(f.gpuMetricsUrl).protocol;
    } catch {
      throw usageError("--gpu-metrics-url", "is not a URL", "e.g. http://127.0.0.1:9400/metrics (dcgm-exporter)");
    }
    if (scheme !== "http:" && scheme !== "https:") throw usageError("--gpu-metrics-url", `'${scheme}' is not http or https`, "e.g. http://127.0.0.1:9400/metrics (dcgm-exporter)");
    telemetrySource = { kind: "dcgm", url: f.gpuMetricsUrl };
  } else if (listed !== null) telemetrySource = { kind: "nvidia-smi", exec: runtimeExec(rt) };
  // A remote GPU node's exporter names its GPUs (modelName): the identity, where nothing else gave one.
  if (telemetrySource?.kind === "dcgm" && !f.gpuName && listed === null) {
    const scrape = await readDcgm({ url: telemetrySource.url }, TELEMETRY_FETCH_TIMEOUT_MS, ctx.signal, { setTimeout, clearTimeout });
    const named = scrape.ok ? dcgmIdentity(scrape.parse) : null;
    if (named) gpu = named;
  }
  // Each GPU power reading also goes to the run's live metrics, once they are started (gpuPower).
  const gpuPower: PreparedServe["gpuPower"] = { sink: null };
  const telemetryFor = telemetrySource ? () => new GpuTelemetrySampler({ source: telemetrySource as GpuTelemetrySource, onPower: (g, u, w) => gpuPower.sink?.(g, u, w) }) : undefined;
  const runner = new Runner({
    ep,
    api: f.api,
    engineKind: engine.kind,
    model: f.model,
    maxTokens: f.maxTokens ?? null,
    tokenIds: f.tokenIds,
    exactLength: f.exactLength,
    extraBody,
    temperature,
    chatTemplateKwargs,
    apiKey,
    timeoutMs: f.timeoutS * 1000,
    idleTimeoutMs: f.idleTimeoutS * 1000,
    countTokens: tok ? tok.count : undefined,
    signal: ctx.signal,
  });
  const common = { runner, set, prompts: trace ? trace.prompts : set.prompts, label, seed: f.seed, storeRoot: root, runDir, server, gpu, args, keyNote: key.note, isLocal,
    engine: engineId };
  const clock = mode === null ? null : { anchor: clockAnchor(), sync: await rt.clockSync() as unknown as Record<string, unknown> };
  const load = mode === null ? null : {
    ...common,
    clock: clock ?? undefined,
    samplerFor: (_level: string, onSample?: (v: Readonly<Record<string, number>>) => void) => {
      const g = new GaugeSampler();
      return {
        start: () => g.start(ep, engine.kind, { apiKey, signal: ctx.signal, onSample }),
        stop: () => Promise.resolve(g.stop() as unknown as Record<string, unknown>),
      };
    }, telemetryFor, memory: () => rt.memoryUsage(), levelKind: mode.kind, grid: mode.grid, auto: mode.auto, trace, closedLoop: f.closedLoop, durationS: f.durationS ?? DEFAULT_DURATION_S,
    maxRequestsPerLevel: f.maxRequestsPerLevel || null, requestsPerLevel: f.requests ?? null, burstiness: f.burstiness, refRequests: f.refRequests, refE2eMs: f.refE2eMs ?? null,
    warmup: f.warmup, sweepAll: f.sweepAll || shard !== null, gpuCount, gpuPriceUsdH: f.gpuPriceUsdH ?? null,
    slo: { ttftP95Ms: f.sloTtftP95Ms ?? null, tpotP95Ms: f.sloTpotP95Ms ?? null, e2eP95Ms: f.sloE2eP95Ms ?? null, maxFail: f.sloMaxFail },
  };
  const conv = convSet === null ? null : {
    runner, set: convSet, sessions: f.sessions ?? 1, thinkMs: thinkTime(f.thinkTimeMs), cacheSalt: f.cacheSalt, seed: f.seed, label, storeRoot: root, gpu, isLocal, keyNote: key.note, server,
    engine: common.engine, args: conversationArgs(args, f, convSet),
  };
  return {
    load,
    conv,
    shard,
    run: {
      telemetryFor,
      runner,
      set,
      prompts: set.prompts,
      rounds: f.rounds,
      firstRound: f.firstRound ?? null,
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
      engine: engineId,
      args,
      keyNote: key.note,
      isLocal,
    },
    clean,
    gpuPower,
    sanitizeError: (e) => (e instanceof IkError ? sanitizedError(e, clean) : e),
  };
}

/** The record's args of a conversations run: what it applied (no rounds, warm-up, buckets or resamples: the mode has none). */
function conversationArgs(args: Record<string, unknown>, f: BenchServeFlags, set: ConversationSet): Record<string, unknown> {
  const { rounds: _r, warmup: _w, buckets: _b, limit_per_bucket: _l, resamples: _s, extend: _e, ...kept } = args;
  return {
    ...kept, prompts: null, conversations: { name: set.name, sha256: set.sha256 }, max_conversations: f.maxConversations ?? null,
    sessions: f.sessions ?? 1, think_time_ms: thinkTime(f.thinkTimeMs), cache_salt: f.cacheSalt,
  };
}

/** `--temperature T|server`: the number sent in every body (0 when not given), or null for none (the server's default). */
export function temperatureOf(v: string | undefined): number | null {
  if (v === undefined) return 0;
  const w = v.trim().toLowerCase();
  if (w === "server") return null;
  const t = Number(w);
  if (w === "" || !Number.isFinite(t) || t < 0) throw usageError("--temperature", `'${v}' is not a temperature`, "give a number >= 0, or server to send none (the server's default)");
  return t;
}
