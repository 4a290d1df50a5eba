/**
 * The rules of `ik bench serve`'s modes and their flags (usage errors, 64, before anything is
 * sent): single, load (a grid or `auto`), trace, conversations, and sharding; what the setup gets
 * back is the level kind, the grid and the search settings.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import type { BenchServeFlags } from "./bench_serve_flags.ts";

/** The longest duration ik waits, 2^31 − 1 ms (the JS timer limit; lib/cli/limits.ts's MAX_TIMER_MS: cli.ts loads this file, and that one loads the parser). */
const MAX_TIMER_MS = 2_147_483_647;

/** A comma list of values, trimmed, empty ones dropped (flags given more than once joined). */
export function list(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
}

/**
 * The most streams a parsed command keeps in flight at once as a closed loop (`bench serve
 * --closed-loop`, its largest `--concurrency` level), else 0 (single mode, an open loop, `auto`,
 * any other command: nothing there says how many will be in flight). Read before the flags' own
 * checks, so anything that is not a whole number counts as nothing.
 */
export function closedLoopStreams(args: { cmd?: unknown; closedLoop?: unknown; concurrency?: unknown }): number {
  if (args.cmd !== "bench-serve" || args.closedLoop !== true || !Array.isArray(args.concurrency)) return 0;
  let most = 0;
  for (const v of list(args.concurrency as string[])) {
    const n = Number(v);
    if (Number.isInteger(n) && n > most) most = n;
  }
  return most;
}

function numbers(values: readonly string[], flag: string, integer: boolean): number[] {
  // `1,,2` or `1,2,` is a typo (a level left out), not two levels: refused, not read as 1,2.
  const holed = values.find((v) => v.split(",").some((s) => s.trim() === ""));
  if (holed !== undefined) throw usageError(flag, `'${holed}' has an empty item`, `give the levels comma-separated, e.g. ${flag} ${integer ? "1,2,4,8" : "0.5,1,2"}`);
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

/** A think-time part: a plain decimal number of ms (no sign, exponent or hex). */
const THINK_PART = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/;

/**
 * The think time `MEAN[:SD]` in ms (usage error 64 when malformed, or when the mean or SD is over
 * 2,147,483,647 ms, the limit of every duration flag).
 */
export function thinkTime(v: string | undefined): { mean: number; sd: number } {
  if (v === undefined) return { mean: 0, sd: 0 };
  const parts = v.trim().split(":");
  if (parts.length > 2 || !parts.every((p) => THINK_PART.test(p))) {
    throw usageError("--think-time-ms", `'${v}' is not MEAN[:SD] in ms (numbers, 0 or more)`, "e.g. --think-time-ms 500:200");
  }
  const [mean, sd = 0] = parts.map(Number);
  for (const [what, x] of [["mean", mean], ["SD", sd]] as const) {
    if (x > MAX_TIMER_MS) throw usageError("--think-time-ms", `the ${what} ${parts[what === "mean" ? 0 : 1]} ms is over ${MAX_TIMER_MS} ms (2^31 - 1, the longest duration ik waits)`, "give a shorter think time");
  }
  return { mean, sd };
}

/** `--mode conversations`'s own rules (usage errors, 64): the conversations are the workload, run once, turn by turn. */
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
    ["--run-dir", f.runDir !== undefined], ["--time-scale", f.timeScale !== undefined], ["--max-duration-s", f.maxDurationS !== undefined],
    // No SLO verdict, level search, cost, arrival process, rounds, warm-up or bucket selection here.
    // Flags with a default are refused when they differ from it (the parser does not say whether one was given).
    ["--slo-ttft-p95-ms", f.sloTtftP95Ms !== undefined], ["--slo-tpot-p95-ms", f.sloTpotP95Ms !== undefined], ["--slo-e2e-p95-ms", f.sloE2eP95Ms !== undefined],
    ["--slo-max-fail", f.sloMaxFail !== 0], ["--fail-on-slo", f.failOnSlo], ["--sweep-all", f.sweepAll], ["--burstiness", f.burstiness !== 1],
    ["--precision", f.precision !== undefined], ["--max-levels", f.maxLevels !== undefined], ["--auto-start", f.autoStart !== undefined],
    ["--max-requests-per-level", f.maxRequestsPerLevel > 0], ["--ref-requests", f.refRequests !== 5], ["--ref-e2e-ms", f.refE2eMs !== undefined],
    ["--gpu-price-usd-h", f.gpuPriceUsdH !== undefined], ["--rounds", f.rounds !== 5], ["--first-round", f.firstRound !== undefined],
    ["--warmup", f.warmup !== 2 && f.warmup !== 0], ["--resamples", f.resamples !== 2000], ["--buckets", list(f.buckets).length > 0], ["--limit-per-bucket", f.limitPerBucket > 0],
    ["--gpu-metrics-url", f.gpuMetricsUrl !== undefined], ["--allow-incomplete", f.allowIncomplete]] as const;
  const given = other.find(([, g]) => g);
  if (given) throw usageError(given[0], "is not for --mode conversations (the conversations are the workload: no SLO verdict, levels, rounds, warm-up or buckets)", `drop ${given[0]}`);
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

/** Every mode flag rule; the level kind, grid and search of a load or trace run, or null for single and conversations. */
export function checkModeFlags(f: BenchServeFlags): { kind: "rate" | "concurrency"; grid: number[]; auto: AutoLevels | null } | null {
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
  if (f.closedLoop && ratesGiven) {
    throw usageError("--rates", "cannot be used with --closed-loop: a closed loop runs N workers back to back, not a rate", "give --concurrency N (the number of workers), or drop --closed-loop");
  }
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
