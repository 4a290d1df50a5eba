/**
 * `ik load-trial prepare|run`: the synthetic-workload client that benchmark-points plans call
 * (seed 004). `prepare` writes `DIR/workload/workload.json`; `run` sends N requests of it as
 * open-loop Poisson arrivals at rate R and judges SLO attainment and scheduling validity.
 * Exit codes (CONTRACTS.md): 0 attained and valid; 2 either failed; 64 usage; 65 bad workload;
 * 69 server unreachable or the expected model not served; 74 --out cannot be written (a full disk stops
 * the sends, whole rows kept); 130 interrupted.
 * @module
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { object, or } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { choice, float, integer, string } from "@optique/core/valueparser";
import { usageError, unavailableError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { MAX_DURATION_S } from "../cli/limits.ts";
import { listModels, parseEndpoint } from "../client/mod.ts";
import { detectEngine, ENGINE_KIND_CHOICES, type EngineKind } from "../engines/mod.ts";
import { checkWritable, endpointKeyPath, endpointTag, loadEndpointKey, redactUrl, scrubbedJson, writeWhole } from "../evidence/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { loadPromptSet, parsePromptSetText } from "../prompts/mod.ts";
import { parseSynthBucket } from "../prompts/synth.ts";
import { synthExact } from "../prompts/synth_exact.ts";
import { TOKENIZE_ENGINES } from "../tokenize_remote/engines.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { makeSanitizer, sanitizedError } from "../report/sanitize.ts";
import { runTrial, trialOffsetsMs } from "../load_trial/run.ts";
import { parseWorkload, synthPrompts, workloadFromPrompts } from "../load_trial/workload.ts";
import { VERSION } from "../version.ts";
import { randomBytes } from "node:crypto";
import { LiveRun } from "../live_metrics/live_run.ts";
import { liveFlags } from "./live_flags.ts";
import { liveOptions } from "./live_options.ts";
import type { CommandContext } from "./context.ts";
import { lengthCounter, synthLimitations } from "./prompts_synth.ts";

const prepareCmd = command("prepare", object({
  cmd: constant("load-trial-prepare" as const),
  out: option("--out", string({ metavar: "DIR" }), { description: message`Trial folder; the workload goes to DIR/workload/workload.json (an existing one is refused).` }),
  prompts: optional(option("--prompts", string({ metavar: "FILE" }), { description: message`Prompt set (JSONL or .jsonl.gz, or builtin:default) to take the requests from.` })),
  synth: multiple(option("--synth", string({ metavar: "IN:OUT" }), { description: message`Synthetic requests of IN prompt tokens and OUT output tokens (repeatable; NAME:IN:OUT names the group).` })),
  requests: optional(option("--requests", integer({ min: 1, max: 10_000_000, metavar: "N" }), { description: message`Requests in the workload (default: the set's prompts, or 200 synthetic ones), cycling over the prompts.` })),
  maxTokens: withDefault(option("--max-tokens", integer({ min: 1, max: 1_000_000, metavar: "N" }), { description: message`max_tokens of prompts that do not give their own.` }), 256),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "S" }), { description: message`Seed of the synthetic text (recorded).` }), 0),
  tokenizeVia: optional(option("--tokenize-via", string({ metavar: "URL" }), {
    description: message`--synth: make IN exact with this server's own tokenizer (vLLM or SGLang /tokenize with messages, llama.cpp /apply-template + /tokenize), chat template included.`,
  })),
  tokenizeEngine: withDefault(option("--tokenize-engine", choice(["auto", ...TOKENIZE_ENGINES] as const, { metavar: "ENGINE" }), {
    description: message`Which engine's tokenize endpoints --tokenize-via speaks (auto: detected).`,
  }), "auto" as const),
  tokenizer: optional(option("--tokenizer", string({ metavar: "PATH" }), { description: message`--synth: count IN with this local tokenizer.json (the message text only, not the chat template).` })),
  model: optional(option("--model", string({ metavar: "NAME" }), { description: message`The served model --tokenize-via names in its calls (default: the first one /v1/models lists).` })),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable with the bearer token for --tokenize-via.` })),
  json: option("--json", { description: message`Print the workload's summary as JSON.` }),
}), { brief: message`Write a load-trial workload (workload/workload.json) from a prompt set or synthetic lengths (exact with --tokenize-via).` });

const runCmd = command("run", object({
  cmd: constant("load-trial-run" as const),
  base: option("--base", "--base-url", string({ metavar: "URL" }), { description: message`Server or router root, e.g. http://127.0.0.1:18000 (stored only as an HMAC).` }),
  expectedModel: option("--expected-model", string({ metavar: "M" }), { description: message`The model the server must list in /v1/models (else exit 69).` }),
  workload: option("--workload", string({ metavar: "FILE" }), { description: message`workload.json from 'ik load-trial prepare'.` }),
  rate: option("--rate", float({ min: 1e-6, max: 1e6, metavar: "R" }), { description: message`Open-loop Poisson arrival rate, requests per second.` }),
  requests: option("--requests", integer({ min: 1, max: 10_000_000, metavar: "N" }), { description: message`Requests to send (the workload is cycled).` }),
  ttft: option("--ttft", float({ min: 1e-6, max: MAX_DURATION_S, metavar: "S" }), { description: message`TTFT target, seconds (as the plans write it).` }),
  tpot: option("--tpot", float({ min: 1e-6, max: MAX_DURATION_S, metavar: "S" }), { description: message`TPOT target, seconds.` }),
  attainment: option("--attainment", float({ min: 0, max: 1, metavar: "A" }), { description: message`Share of requests that must meet both targets, 0..1.` }),
  out: option("--out", string({ metavar: "DIR" }), { description: message`Where summary.json and requests.jsonl go (a folder that already has a summary.json is refused).` }),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable holding the API key (never stored).` })),
  engineKind: withDefault(option("--engine-kind", choice(ENGINE_KIND_CHOICES), { description: message`Engine profile for the request body.` }), "auto"),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "S" }), { description: message`Arrival-schedule seed.` }), 0),
  timeoutS: withDefault(option("--timeout-s", float({ min: 0.001, max: MAX_DURATION_S, metavar: "S" }), { description: message`Per-request limit, seconds.` }), 600),
  maxScheduleH: withDefault(option("--max-schedule-h", float({ min: 0.001, max: 8760, metavar: "H" }), { description: message`Longest schedule accepted, hours: a rate and a count whose seeded arrivals would take longer are refused before anything is sent.` }), 24),
  json: option("--json", { description: message`Print summary.json on stdout.` }),
  ...liveFlags,
}), { brief: message`Send N requests of a workload at rate R (open loop) and judge SLO attainment; exit 2 when it or the schedule fails.` });

/** Parser for `ik load-trial …`. */
export const loadTrialCommand = command("load-trial", or(prepareCmd, runCmd), {
  brief: message`The load-trial client of benchmark points: prepare a workload, run one rate against it.`,
  description: message`ik load-trial prepare writes a workload; ik load-trial run sends it as open-loop Poisson arrivals and writes summary.json (attainment, scheduling validity, percentiles) and requests.jsonl. Exit 0 when attainment >= --attainment and the schedule was valid (all sent, median send lag <= 5 ms, p99 <= 50 ms), 2 otherwise.`,
});

/** The parsed flags of `ik load-trial …`. */
export type LoadTrialFlags = InferValue<typeof loadTrialCommand>;

/** Runs `ik load-trial prepare|run`. */
export function runLoadTrial(ctx: CommandContext, f: LoadTrialFlags): Promise<number> {
  return f.cmd === "load-trial-prepare" ? prepare(ctx, f) : run(ctx, f);
}

async function prepare(ctx: CommandContext, f: Extract<LoadTrialFlags, { cmd: "load-trial-prepare" }>): Promise<number> {
  const rt = ctx.runtime;
  if ((f.prompts !== undefined) === (f.synth.length > 0)) throw usageError("load-trial prepare", "needs exactly one of --prompts or --synth", "e.g. --synth 512:128 or --prompts set.jsonl");
  const out = resolve(rt.cwd(), f.out);
  const file = join(out, "workload", "workload.json");
  if (existsSync(file)) throw usageError("--out", `${file} already exists`, "give a new folder (a workload is never overwritten)");
  await checkWritable([out]);
  let workload;
  const lengthFlag = f.tokenizeVia !== undefined ? "--tokenize-via" : f.tokenizer !== undefined ? "--tokenizer" : null;
  if (f.prompts !== undefined && lengthFlag) throw usageError(lengthFlag, "applies only with --synth (a prompt set keeps its own input_tokens)", `drop ${lengthFlag}, or make the set exact with ik prompts synth ${lengthFlag}`);
  if (f.prompts !== undefined) {
    const set = f.prompts === BUILTIN_NAME ? loadBuiltinPromptSet() : await loadPromptSet(resolve(rt.cwd(), f.prompts));
    workload = workloadFromPrompts(set.prompts, { n: f.requests ?? null, seed: f.seed, defaultMaxTokens: f.maxTokens, source: { kind: "prompt_set", name: set.name, sha256: set.sha256 } });
  } else {
    const specs = f.synth.map((s, i) => {
      try {
        return parseSynthBucket(s.split(":").length === 2 ? `s${i}:${s}` : s);
      } catch (e) {
        throw usageError("--synth", (e as Error).message.replace(/^'s\d+:/, "'"), "give IN:OUT token counts, e.g. --synth 512:128");
      }
    });
    if (new Set(specs.map((b) => b.name)).size !== specs.length) throw usageError("--synth", `group names repeat (${specs.map((b) => b.name).join(", ")})`, "give each NAME:IN:OUT once");
    const n = f.requests ?? 200;
    const per = Math.ceil(n / specs.length);
    let prompts, source: Record<string, unknown>, limitations: string[];
    if (lengthFlag) {
      // The same lengths as `ik prompts synth` makes them: exact against the server's (or the file's) count.
      const counter = await lengthCounter(ctx, { ...f, api: "chat" });
      const made = await synthExact({ buckets: specs, perBucket: per, seed: f.seed, counter, prefixLen: 0, spread: { kind: "fixed" } });
      prompts = parsePromptSetText(made.text, "synthetic");
      limitations = synthLimitations(counter.method, made.report, "chat");
      source = { kind: "synthetic", specs: f.synth, length_method: counter.method, tokens: counter.method, ...counter.info, lengths: made.report, limitations };
    } else {
      for (const [flag, given] of [["--tokenize-engine", f.tokenizeEngine !== "auto"], ["--model", f.model !== undefined], ["--api-key-env", f.apiKeyEnv !== undefined]] as const) {
        if (given) throw usageError(flag, "needs --tokenize-via URL", `add --tokenize-via or drop ${flag}`);
      }
      prompts = synthPrompts(specs, per, f.seed);
      limitations = [`lengths are approximate: IN was counted as words (runs of non-whitespace, as ik mock counts), not by the server's tokenizer, and the chat template is not counted; give --tokenize-via URL for exact lengths`];
      source = { kind: "synthetic", specs: f.synth, length_method: "words", tokens: "pseudo-tokens (words), as ik prompts synth counts them", limitations };
    }
    // Interleave the specs so that any prefix of the workload mixes them.
    const mixed = Array.from({ length: per * specs.length }, (_, i) => prompts[(i % specs.length) * per + Math.floor(i / specs.length)]);
    workload = workloadFromPrompts(mixed, { n, seed: f.seed, defaultMaxTokens: f.maxTokens, source });
    for (const l of limitations) ctx.err(`ik: load-trial prepare: ${l}\n`);
  }
  await rt.files.mkdir(join(out, "workload"));
  await rt.files.writeText(file, JSON.stringify(workload, null, 1) + "\n", { mode: 0o600 });
  const info = { path: file, requests: workload.requests.length, requests_sha256: workload.requests_sha256, seed: workload.seed, source: workload.source };
  if (ctx.json) ctx.out(JSON.stringify(info) + "\n");
  else ctx.out(`workload: ${escapeTerminalLine(file)}\n  ${info.requests} requests, sha256 ${info.requests_sha256}\n`);
  return ExitCode.OK;
}

async function run(ctx: CommandContext, f: Extract<LoadTrialFlags, { cmd: "load-trial-run" }>): Promise<number> {
  const rt = ctx.runtime;
  const apiKey = f.apiKeyEnv !== undefined ? rt.env(f.apiKeyEnv) || undefined : undefined;
  if (f.apiKeyEnv !== undefined && !apiKey) throw usageError("--api-key-env", `environment variable ${f.apiKeyEnv} is not set or empty`, `export ${f.apiKeyEnv}=... or drop the flag`);
  const clean = makeSanitizer(f.base, apiKey);
  try {
    const ep = parseEndpoint(f.base, "--base");
    const out = resolve(rt.cwd(), f.out);
    if (existsSync(join(out, "summary.json"))) throw usageError("--out", `${join(out, "summary.json")} already exists`, "give a new folder (a measured trial is never overwritten)");
    const wpath = resolve(rt.cwd(), f.workload);
    let text: string;
    try {
      text = await readFile(wpath, "utf8");
    } catch (e) {
      throw usageError("--workload", `cannot read ${f.workload}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, "run 'ik load-trial prepare' first");
    }
    const workload = parseWorkload(text, f.workload);
    const offsetsMs = trialOffsetsMs(f.rate, f.requests, f.seed);
    const lastH = offsetsMs.length ? offsetsMs[offsetsMs.length - 1] / 3_600_000 : 0;
    if (lastH > f.maxScheduleH) {
      throw usageError(
        "--rate",
        `${f.requests} requests at ${f.rate} req/s would take ${lastH.toFixed(1)} h (the seeded schedule's last arrival), over --max-schedule-h ${f.maxScheduleH}`,
        "raise --rate, lower --requests, or raise --max-schedule-h",
      );
    }
    await checkWritable([out]); // before the first request (exit 74)
    const models = await listModels(ep, { apiKey, signal: ctx.signal, timeoutMs: 10_000 });
    if (models.status === 0) throw unavailableError("--base", `server at ${redactUrl(ep.origin)} not reachable (${models.error ?? "no answer"})`);
    if (!models.ok) throw unavailableError("--base", `/v1/models answered HTTP ${models.status}`, "check the URL and the API key");
    const ids = models.models.map((m) => m.id);
    if (!ids.includes(f.expectedModel)) throw unavailableError("--expected-model", `'${f.expectedModel}' is not served; /v1/models lists [${ids.slice(0, 10).join(", ")}]`, "give the served model name");
    let kind: EngineKind;
    if (f.engineKind !== "auto") kind = f.engineKind;
    else kind = (await detectEngine(ep, { apiKey, signal: ctx.signal, models })).kind;
    const key = await loadEndpointKey(endpointKeyPath((k) => rt.env(k), rt.env("HOME") || homedir()));
    await rt.files.mkdir(out);
    const live = await LiveRun.start(liveOptions(f), { run_id: randomBytes(4).toString("hex"), label: "load-trial", engine_kind: kind, shard: "0/1", endpoint: endpointTag(key.key, ep) },
      "load-trial", (h, o) => rt.serve(h, o), redactUrl);
    if (live?.url) ctx.err(`load-trial: live metrics at ${live.url}\n`);
    const res = await runTrial({ live,
      ep, engineKind: kind, model: f.expectedModel, apiKey, workload, rateRps: f.rate, requests: f.requests, ttftS: f.ttft, tpotS: f.tpot,
      attainment: f.attainment, seed: f.seed, outDir: out, timeoutMs: f.timeoutS * 1000, signal: ctx.signal, offsetsMs,
      identity: { base_url: endpointTag(key.key, ep), model: f.expectedModel, engine_kind: kind, workload_file: wpath, tool: { name: "ik", version: VERSION } },
    });
    const summaryText = clean(scrubbedJson(res.summary, 2)) + "\n";
    const summaryPath = join(out, "summary.json");
    if (res.writeFailure) {
      // Stopped by a failed write: the summary (complete: false) is kept if the disk still takes it.
      await writeWhole(summaryPath, summaryText).catch(() => {});
      throw res.writeFailure;
    }
    await writeWhole(summaryPath, summaryText);
    const v = res.verdict;
    if (ctx.json) ctx.out(clean(JSON.stringify(res.summary)) + "\n");
    else {
      const ms = (x: number | null) => (x === null ? "n/a" : `${x.toFixed(1)} ms`);
      ctx.out(
        `load-trial: ${v.met}/${v.requested} met TTFT <= ${f.ttft} s and TPOT <= ${f.tpot} s: attainment ${(v.attainment * 100).toFixed(1)} % ` +
          `(target ${(f.attainment * 100).toFixed(1)} %) ${v.attained ? "MET" : "NOT MET"}\n` +
          `  schedule ${v.validity.valid ? "valid" : "INVALID"}: sent ${v.validity.sent}/${v.validity.requested}, send lag p50 ${ms(v.validity.lag_p50_ms)}, p99 ${ms(v.validity.lag_p99_ms)}` +
          `${v.validity.reasons.length ? ` (${v.validity.reasons.join("; ")})` : ""}\n` +
          `  TTFT p50 ${ms(v.percentiles.ttft_ms.p50)} p99 ${ms(v.percentiles.ttft_ms.p99)}; TPOT p50 ${ms(v.percentiles.tpot_ms.p50)} p99 ${ms(v.percentiles.tpot_ms.p99)}; failed ${v.misses.failed}\n` +
          `  ${escapeTerminalLine(join(out, "summary.json"))}\n`,
      );
    }
    if (res.interrupted) return ExitCode.INTERRUPTED;
    return v.attained && v.validity.valid ? ExitCode.OK : ExitCode.SLO_NOT_MET;
  } catch (e) {
    throw sanitizedError(e, clean);
  }
}
