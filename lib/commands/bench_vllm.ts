/**
 * `ik bench vllm`: `vllm bench serve`'s flags with their meaning. One load level (vLLM runs one
 * rate per invocation): exactly `--num-prompts` open-loop arrivals at `--request-rate` (Poisson,
 * gamma with `--burstiness`; `inf` all due at once), `--max-concurrency` a cap on requests in
 * flight over those arrivals (vLLM's semaphore, not ik's closed loop), prompts from
 * `--dataset-name random`. Prints vLLM's summary block, writes ik's evidence record always and
 * vLLM's result JSON with `--save-result`. Exit codes as `ik bench serve`.
 * @module
 */
import { escapeTerminalLine } from "../report/escape.ts";
import { appendFile, mkdir, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { parse } from "@optique/core/parser";
import { IkError, usageError } from "../cli/errors.ts";
import { goneError } from "../bench/server_gone.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { listModels, parseEndpoint } from "../client/mod.ts";
import { checkWritable, guardWrite, storeRoot, writeWhole } from "../evidence/mod.ts";
import { loadExportSource } from "../export/record_source.ts";
import { exportMeta } from "../export/vllm_export.ts";
import { vllmDate, vllmError } from "../export/vllm_level_file.ts";
import { vllmJson } from "../export/py_json.ts";
import { runLoad } from "../bench/serve_load.ts";
import { progressPrinter } from "../report/terminal/load_progress.ts";
import { promptSetFor } from "../vllm_cli/dataset.ts";
import { vllmPlan, type VllmFlagValues } from "../vllm_cli/options.ts";
import { defaultResultName, vllmResultFile } from "../vllm_cli/result_file.ts";
import { failureLines, summaryBlock, trafficLines } from "../vllm_cli/summary_block.ts";
import { prepareServe } from "./bench_serve_setup.ts";
import type { CommandContext } from "./context.ts";
import { lengthCounter } from "./prompts_synth.ts";
import { type BenchServeFlags, benchServeCommand } from "./bench_serve_flags.ts";
import type { BenchVllmFlags } from "./bench_vllm_flags.ts";

/** `ik bench serve` flags from words (all its defaults filled by its own parser). */
function serveFlags(words: string[]): BenchServeFlags {
  const r = parse(benchServeCommand(), ["serve", ...words]);
  if (!r.success) throw new IkError(ExitCode.INTERNAL, "bench vllm", `the load settings were refused (${JSON.stringify(r.error)})`, "please report");
  return r.value as BenchServeFlags;
}

/** Runs `ik bench vllm`. */
export async function runBenchVllm(ctx: CommandContext, f: BenchVllmFlags): Promise<number> {
  const v = f as unknown as VllmFlagValues & BenchVllmFlags;
  const plan = vllmPlan(v);
  if (v.customOutputLen === 0) throw usageError("--custom-output-len", "0 tokens", "give N >= 1, or -1 for each line's output_tokens");
  for (const w of plan.warnings) ctx.err(`ik bench vllm: warning: ${w}\n`);
  // As vllm bench serve: no temperature unless asked for (it no longer sends temperature 0).
  if (v.temperature === undefined && !("temperature" in plan.body)) ctx.err("ik bench vllm: warning: no temperature is sent (the server's default applies, as vllm bench serve does); --temperature 0 for greedy\n");
  const apiKey = v.apiKeyEnv !== undefined ? ctx.runtime.env(v.apiKeyEnv) || undefined : undefined;
  if (v.apiKeyEnv !== undefined && !apiKey) throw usageError("--api-key-env", `environment variable ${v.apiKeyEnv} is not set or empty`, `export ${v.apiKeyEnv}=... or drop the flag`);
  const resultDir = resolve(ctx.runtime.cwd(), v.resultDir ?? ".");
  // A file where the folder should be is the user's mistake (64, as export's --out), not a failed write.
  const there = v.saveResult || v.appendResult ? await stat(resultDir).catch(() => null) : null;
  if (there && !there.isDirectory()) throw usageError("--result-dir", `${resultDir} is ${there.isFile() ? "a file" : "not a folder (a device, a pipe or a socket)"}`, "give a folder for the result file (it is created if it does not exist)");
  // CONTRACTS: every output folder is checked writable before the first request (exit 74).
  if (v.saveResult || v.appendResult) await checkWritable([resultDir]);
  if ((v.saveResult || v.appendResult) && v.resultFilename !== undefined && (await stat(resolve(resultDir, v.resultFilename)).catch(() => null))?.isDirectory()) {
    throw usageError("--result-filename", `${resolve(resultDir, v.resultFilename)} is a folder, not a file`, "give a file name");
  }
  const ep = parseEndpoint(plan.baseUrl, v.baseUrl !== undefined ? "--base-url" : "--host/--port");
  let modelId = v.model;
  // vLLM without --model: the first model's id is the name requests carry, its root the model_id
  // (and tokenizer_id, and the result file's name) written.
  let servedName: string | undefined;
  if (modelId === undefined) {
    const m = await listModels(ep, { apiKey, signal: ctx.signal, timeoutMs: 10_000 });
    if (!m.ok || !m.models.length) throw new IkError(ExitCode.UNAVAILABLE, "--model", `no model from the server's /v1/models (${m.error ?? "an empty list"})`, "give --model NAME");
    servedName = m.models[0].id;
    modelId = m.models[0].root ?? servedName;
    ctx.err(`ik bench vllm: --model not given: the server's first model is ${servedName}${modelId !== servedName ? ` (root ${modelId})` : ""}\n`);
  }
  const modelName = v.servedModelName ?? servedName ?? modelId;
  const inputLen = v.inputLen ?? v.randomInputLen, outputLen = v.outputLen ?? v.randomOutputLen;
  if (v.datasetName === "random") ctx.err(`ik bench vllm: making ${v.numPrompts} random prompts of ${v.randomPrefixLen > 0 ? `${v.randomPrefixLen} shared prefix + ` : ""}${inputLen}${v.randomRangeRatio > 0 ? ` (±${v.randomRangeRatio})` : ""} input tokens${v.lengths === "server" ? " (counted by the server's /tokenize)" : ""}${plan.api === "chat" ? ", as vLLM: the message text, less the special tokens the tokenizer adds; the server's chat template comes on top" : ""}\n`);
  const ds = await promptSetFor({
    datasetName: v.datasetName, datasetPath: v.datasetPath, api: plan.api,
    random: { inputLen, outputLen, rangeRatio: v.randomRangeRatio, prefixLen: v.randomPrefixLen, numPrompts: v.numPrompts, seed: v.seed },
    // vLLM maps the general --input-len / --output-len onto every dataset's own length option.
    file: {
      // custom: vLLM's --custom-output-len defaults to 256 for every request; -1 reads each line's output_tokens.
      sharegptOutputLen: v.outputLen ?? v.sharegptOutputLen, customOutputLen: v.outputLen ?? (v.customOutputLen === -1 ? undefined : v.customOutputLen ?? 256),
      sonnetInputLen: v.inputLen ?? v.sonnetInputLen, sonnetOutputLen: v.outputLen ?? v.sonnetOutputLen, sonnetPrefixLen: v.sonnetPrefixLen,
    },
    counter: async () => {
      const words = () => lengthCounter(ctx, { tokenizeEngine: "auto", api: plan.api });
      if (v.lengths === "words") return await words();
      try {
        return await lengthCounter(ctx, { tokenizeVia: plan.baseUrl, tokenizeEngine: "auto", api: plan.api, apiKeyEnv: v.apiKeyEnv, model: modelName });
      } catch (e) {
        if (!(e instanceof IkError) || e.code !== ExitCode.UNAVAILABLE) throw e;
        ctx.err(`ik bench vllm: warning: the server cannot count tokens for ik (${e.message}): random prompt lengths are counted as words (approximate)\n`);
        return await words();
      }
    },
  });
  const exact = v.datasetName === "random" || v.ignoreEos;
  const label = v.label ?? v.backend;
  const words = ["--base-url", plan.baseUrl, "--model", modelName, "--mode", "load", "--rates", "1", "--requests", String(v.numPrompts), "--api", plan.api,
    "--warmup", String(v.numWarmups), "--seed", String(v.seed), "--burstiness", String(v.burstiness), "--label", label, "--timeout-s", String(v.timeoutS), "--sweep-all",
    exact ? "--exact-length" : "--no-exact-length", "--temperature", v.temperature !== undefined ? String(v.temperature) : "server"];
  if (Object.keys(plan.body).length) words.push("--extra-body", JSON.stringify(plan.body));
  if (v.apiKeyEnv !== undefined) words.push("--api-key-env", v.apiKeyEnv);
  const prep = await prepareServe(ctx, serveFlags(words));
  try {
    const args = prep.load!.args;
    Object.assign(args, {
      rates: [Number.isFinite(plan.requestRate) ? plan.requestRate : "inf"], prompts: ds.set.name, max_in_flight: v.maxConcurrency ?? null,
      vllm: { backend: v.backend, dataset_name: v.datasetName, num_prompts: v.numPrompts, request_rate: Number.isFinite(plan.requestRate) ? plan.requestRate : "inf", max_concurrency: v.maxConcurrency ?? null, length_method: ds.lengthMethod },
    });
    const server = { ...prep.load!.server, limitations: [...prep.load!.server.limitations, ...ds.limitations] };
    const progress = progressPrinter((t) => ctx.err(t), ctx.runtime.isTerminal("stderr"));
    const { capacity, measured, interrupted, serverGone } = await runLoad({
      ...prep.load!, set: ds.set, prompts: ds.set.prompts, grid: [plan.requestRate], server, maxInFlight: v.maxConcurrency ?? null, rescaleToRate: true,
      signal: ctx.signal, onProgress: progress.update, onNote: (l: string) => progress.note(`bench vllm: warning: ${l.replace("--requests", "--num-prompts")}`),
    }).finally(() => progress.done());
    const root = storeRoot((k) => ctx.runtime.env(k), ctx.runtime.cwd());
    const src = await loadExportSource(String(measured.evidence_id), root, ctx.runtime.cwd());
    const date = vllmDate(String(measured.created_utc ?? new Date().toISOString()));
    const opts = {
      backend: v.backend, label: v.label ?? null, modelId, tokenizerId: v.tokenizer ?? modelId, numPrompts: v.numPrompts, metadata: plan.metadata,
      requestRate: plan.requestRate, burstiness: v.burstiness, maxConcurrency: v.maxConcurrency ?? null, percentileMetrics: plan.percentileMetrics,
      percentiles: plan.percentiles, goodput: plan.goodput, detailed: v.saveDetailed, date,
    };
    const result = vllmResultFile({ ...exportMeta(src), durationFromOrigin: true }, src.levels[0], opts);
    // A server's error text, printed on one line each with its control bytes made visible (a hostile server's escapes stay inert).
    const failed = src.levels[0].rows.filter((r) => r.ok !== true).map((r) => escapeTerminalLine(vllmError(r)));
    // vLLM's calculate_metrics warns the same way (warnings.warn, on stderr).
    if (!interrupted && failed.length && failed.length === src.levels[0].rows.length) ctx.err("ik bench vllm: warning: All requests failed. This is likely due to a misconfiguration on the benchmark arguments.\n");
    ctx.out(ctx.json ? prep.clean(JSON.stringify(capacity)) + "\n" : prep.clean(trafficLines(plan.requestRate, v.burstiness, v.maxConcurrency ?? null) + failureLines(failed) + summaryBlock(result, plan.percentiles)));
    if (v.saveResult || v.appendResult) {
      const dir = resultDir;
      const file = resolve(dir, v.resultFilename ?? defaultResultName(opts));
      const text = prep.clean(vllmJson(result));
      try {
        await guardWrite(file, () => mkdir(dir, { recursive: true }));
        if ((await stat(file).catch(() => null))?.isDirectory()) throw usageError("--result-filename", `${file} is a folder, not a file`, "give a file name");
        // vLLM's --append-result: a newline before the result when the file already holds one.
        const had = await stat(file).then((st) => st.size > 0, () => false);
        if (v.appendResult) await guardWrite(file, () => appendFile(file, (had ? "\n" : "") + text));
        else await writeWhole(file, text, 0o644);
      } catch (e) {
        // The run was measured and recorded: say where, whatever stopped the result file.
        if (e instanceof IkError) throw new IkError(e.code, e.where, `${e.message}; the run is measured: ik's records ${measured.evidence_id} and ${capacity.evidence_id} are whole (ik export --format vllm writes the file from them)`, e.hint);
        throw e;
      }
      ctx.err(`ik bench vllm: wrote ${file}\n`);
    }
    ctx.err(`ik bench vllm: ik's record ${measured.evidence_id} (and ${capacity.evidence_id})\n`);
    if (interrupted) {
      ctx.err(`ik: bench vllm: interrupted; the records ${measured.evidence_id} and ${capacity.evidence_id} are marked incomplete\n`);
      return ExitCode.INTERRUPTED;
    }
    if (serverGone) throw goneError(serverGone, measured, capacity);
    return ExitCode.OK;
  } catch (e) {
    throw prep.sanitizeError(e);
  }
}
