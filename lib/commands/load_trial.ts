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
import { usageError, unavailableError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { listModels, parseEndpoint } from "../client/mod.ts";
import { detectEngine, type EngineKind } from "../engines/mod.ts";
import { checkWritable, endpointKeyPath, endpointTag, loadEndpointKey, redactUrl, scrubbedJson, writeWhole } from "../evidence/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { loadPromptSet, parsePromptSetText } from "../prompts/mod.ts";
import { parseSynthBucket } from "../prompts/synth.ts";
import { synthExact } from "../prompts/synth_exact.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { makeSanitizer, sanitizedError } from "../report/sanitize.ts";
import { runTrial, trialOffsetsMs } from "../load_trial/run.ts";
import { parseWorkload, synthPrompts, workloadFromPrompts } from "../load_trial/workload.ts";
import { VERSION } from "../version.ts";
import { randomBytes } from "node:crypto";
import { LiveRun } from "../live_metrics/live_run.ts";
import type { CommandContext } from "./context.ts";
import { lengthCounter, synthLimitations } from "./prompts_synth.ts";
import { liveOptions } from "./live_options.ts";
import type { LoadTrialFlags } from "./load_trial_flags.ts";

/** Runs `ik load-trial prepare|run`. */
export function runLoadTrial(ctx: CommandContext, f: LoadTrialFlags): Promise<number> {
  return f.cmd === "load-trial-prepare" ? prepare(ctx, f) : run(ctx, f);
}

async function prepare(ctx: CommandContext, f: Extract<LoadTrialFlags, { cmd: "load-trial-prepare" }>): Promise<number> {
  const rt = ctx.runtime;
  if ((f.prompts !== undefined) === (f.synth.length > 0)) throw usageError("load-trial prepare", "needs exactly one of --prompts or --synth", "e.g. --synth 512:128 or --prompts set.jsonl");
  if (!f.out.trim()) throw usageError("--out", "is empty", "give the folder to write the workload in");
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
    if (!f.out.trim()) throw usageError("--out", "is empty", "give the folder for the trial's files");
    const out = resolve(rt.cwd(), f.out);
    if (existsSync(join(out, "summary.json"))) throw usageError("--out", `${join(out, "summary.json")} already exists`, "give a new folder (a measured trial is never overwritten)");
    // A trial killed before its summary leaves its rows: appending to them would mix two trials.
    if (existsSync(join(out, "requests.jsonl"))) throw usageError("--out", `${join(out, "requests.jsonl")} already exists (a trial that ended without its summary.json)`, "give a new folder; the rows there are kept");
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
    const live = await LiveRun.start({ ...liveOptions(f), signal: ctx.signal }, { run_id: randomBytes(4).toString("hex"), label: "load-trial", engine_kind: kind, shard: "0/1", endpoint: endpointTag(key.key, ep) },
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
