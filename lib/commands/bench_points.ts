/**
 * `ik bench points`: ordered benchmark points against a running router or fleet (seed 004).
 * Exit 0 when every point ran, 69 when preflight failed, 1 when it stopped after starting, 64/65
 * for usage and plan problems, 74 when --out cannot be written, 130 when interrupted.
 * @module
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { parseEndpoint } from "../client/mod.ts";
import { checkWritable, endpointKeyPath, endpointTag, loadEndpointKey, redactUrl } from "../evidence/mod.ts";
import { LiveRun } from "../live_metrics/live_run.ts";
import { checkBaseUrl, parsePlan } from "../points/plan.ts";
import { checkPlanWorkloads } from "../points/plan_workloads.ts";
import { runPoints } from "../points/runner.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import { makeSanitizer, sanitizedError } from "../report/sanitize.ts";
import type { CommandContext } from "./context.ts";
import { randomBytes } from "node:crypto";
import { liveOptions } from "./live_options.ts";
import type { BenchPointsFlags } from "./bench_points_flags.ts";

/** Runs `ik bench points`. */
export async function runBenchPoints(ctx: CommandContext, f: BenchPointsFlags): Promise<number> {
  const rt = ctx.runtime;
  const apiKey = f.apiKeyEnv !== undefined ? rt.env(f.apiKeyEnv) || undefined : undefined;
  if (f.apiKeyEnv !== undefined && !apiKey) throw usageError("--api-key-env", `environment variable ${f.apiKeyEnv} is not set or empty`, `export ${f.apiKeyEnv}=... or drop the flag`);
  const clean = makeSanitizer(f.base, apiKey);
  try {
    checkBaseUrl(f.base);
    const ep = parseEndpoint(f.base, "--base");
    for (const [flag, p] of [["--ready-path", f.readyPath], ["--state-path", f.statePath], ["--metrics-path", f.metricsPath]] as const) {
      if (!p.startsWith("/")) throw usageError(flag, `'${p}' must start with /`);
    }
    const planPath = resolve(rt.cwd(), f.plan);
    let planText: string;
    try {
      planText = await readFile(planPath, "utf8");
    } catch (e) {
      throw usageError("--plan", `cannot read ${f.plan}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, "check the path");
    }
    const plan = parsePlan(planText, f.plan);
    await checkPlanWorkloads(plan, f.plan, rt.cwd(), (p) => readFile(p, "utf8"), { base: f.base, model: f.model });
    const out = resolve(rt.cwd(), f.out);
    if (existsSync(out)) throw usageError("--out", `${f.out} already exists`, "give a new folder: a points run never writes into an old one");
    await checkWritable([out]); // before the preflight's first request (exit 74)
    const key = await loadEndpointKey(endpointKeyPath((k) => rt.env(k), rt.env("HOME") || homedir()));
    const invocation = ["ik", "bench", "points", "--base", "{base}", "--model", f.model, "--plan", f.plan, "--out", f.out,
      ...(f.apiKeyEnv ? ["--api-key-env", f.apiKeyEnv] : []), "--ready-path", f.readyPath, "--drain-source", f.drainSource,
      ...(f.drainSource === "state" ? ["--state-path", f.statePath] : ["--metrics-path", f.metricsPath])];
    const live = await LiveRun.start({ ...liveOptions(f), signal: ctx.signal }, { run_id: randomBytes(4).toString("hex"), label: "points", engine_kind: "fleet", shard: "0/1", endpoint: endpointTag(key.key, ep) },
      "points", (h, o) => rt.serve(h, o), redactUrl);
    if (live?.url) ctx.err(`bench points: live metrics at ${live.url}\n`);
    const outcome = await runPoints({
      live,
      rt, ep, baseUrl: f.base, baseUrlTag: endpointTag(key.key, ep), model: f.model, apiKey, plan, planText, planPath: f.plan, outDir: out,
      readyPath: f.readyPath, drain: { kind: f.drainSource, path: f.drainSource === "state" ? f.statePath : f.metricsPath }, invocation,
      pollMs: f.pollS * 1000, signal: ctx.signal, progress: (l) => ctx.err(`bench points: ${escapeTerminalLine(clean(l))}\n`),
    });
    const liveReport = live ? await live.finish() : null;
    if (ctx.json) ctx.out(clean(JSON.stringify({ ...outcome, out_dir: out, ...(liveReport ? { live_metrics: liveReport } : {}) })) + "\n");
    else {
      const lines = outcome.points.map((p) => `  ${escapeTerminalLine(p.id)}: ${p.status}${p.reason ? ` (${escapeTerminalLine(clean(p.reason))})` : ""}`);
      ctx.out(`bench points: ${outcome.status}${outcome.reason ? `: ${escapeTerminalLine(clean(outcome.reason))}` : ""}\n${lines.join("\n")}\n  ${escapeTerminalLine(out)}/manifest.json\n`);
    }
    switch (outcome.status) {
      case "completed":
        return ExitCode.OK;
      case "preflight_failed":
        ctx.err(`ik: bench points: preflight failed: ${escapeTerminalLine(clean(outcome.reason ?? ""))}; no point ran: fix the fleet or the flags (--model, --ready-path, --drain-source) and rerun\n`);
        return ExitCode.UNAVAILABLE;
      case "interrupted":
        return ExitCode.INTERRUPTED;
      default:
        return ExitCode.VERDICT_NEGATIVE;
    }
  } catch (e) {
    throw sanitizedError(e, clean);
  }
}
