/**
 * The in-process parts of `npm run bench:load`: the client runs on this bench's own event loop
 * (this process's performance.timeOrigin is known, so a row's monotonic t_send_ns becomes a wall
 * time), the mock in its own process.
 *
 * - {@link pacerNoop}: the open-loop executor with a no-op send, per spin margin: the pacer alone.
 * - {@link pacerReal}: the same with real streamed requests (Runner.send), per spin margin.
 * - {@link ttftLagLevel}: one load level through lib/bench/load_level.ts runLevel (the code
 *   `ik bench serve --mode load` runs per level), then each journaled row paired with the mock's
 *   request-log line: client-attributable lag = (timeOrigin + t_send + TTFT) − (recv_wall_ms +
 *   first_ms), on the host's one wall clock.
 * @module
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PromptPool } from "../../lib/bench/prompt_pool.ts";
import { Runner } from "../../lib/bench/runner.ts";
import { runLevel } from "../../lib/bench/load_level.ts";
import { parseEndpoint, setDefaultFetch } from "../../lib/client/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { JsonlWriter } from "../../lib/evidence/mod.ts";
import { type PacerTimers, REAL_TIMERS, runOpenLoop } from "../../lib/executors/mod.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { arrivalOffsetsMs, levelSeed } from "../../lib/schedule/mod.ts";
import type { MockRequestLog } from "../../lib/selftest/request_log.ts";
import { nearestRank } from "../../lib/stats/mod.ts";
import type { Mock } from "./procs.ts";

// The client the binary measures with, as cli.ts sets it (on Bun: ik's HTTP/1.1 client).
setDefaultFetch(runtime.fetch);

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** An in-process runner against the mock (the CLI's defaults for a vllm mock, 4 tokens). */
export function makeRunner(baseUrl: string, maxTokens = 4): { runner: Runner; pool: PromptPool } {
  const set = loadBuiltinPromptSet();
  const runner = new Runner({
    ep: parseEndpoint(baseUrl),
    api: "chat",
    engineKind: "vllm",
    model: "mock-model",
    maxTokens,
    tokenIds: "auto",
    exactLength: true,
    extraBody: {},
    chatTemplateKwargs: {},
    timeoutMs: 30_000,
    idleTimeoutMs: 10_000,
  });
  return { runner, pool: new PromptPool(set.prompts) };
}

/** How a pacer run sleeps before its spin: on the timers, or on the runtime's precise sleep. */
export type PacerSleep = "timer" | "precise";

/** The real timers with the given sleep (the precise one where the runtime has it, else null). */
export function pacerTimers(sleep: PacerSleep): PacerTimers | null {
  const { clock, sleep: timerSleep, yieldNow, spinUntil } = REAL_TIMERS;
  const base: PacerTimers = { clock, sleep: timerSleep, yieldNow, spinUntil };
  if (sleep === "timer") return base;
  return runtime.preciseSleep ? { ...base, sleepPrecise: runtime.preciseSleep } : null;
}

/** Lag and CPU of one pacer run. */
export interface PacerResult {
  sleep: PacerSleep;
  margin: number;
  rate: number;
  n: number;
  achievedRps: number;
  lagP50: number | null;
  lagP99: number | null;
  lagMax: number | null;
  /** Process CPU, % of one core, over the send window. */
  cpuPct: number;
}

function pacerStats(sleep: PacerSleep, margin: number, rate: number, lags: number[], wallMs: number, cpu: number): PacerResult {
  return {
    sleep,
    margin,
    rate,
    n: lags.length,
    achievedRps: lags.length > 1 ? (lags.length - 1) / (wallMs / 1000) : 0,
    lagP50: nearestRank(lags, 50),
    lagP99: nearestRank(lags, 99),
    lagMax: lags.length ? Math.max(...lags) : null,
    cpuPct: (100 * cpu / 1000) / wallMs,
  };
}

/** The pacer with a no-op send at `rate` req/s for `durationS`. */
export async function pacerNoop(rate: number, durationS: number, margin: number, seed = 7, sleep: PacerSleep = "timer"): Promise<PacerResult> {
  const timers = pacerTimers(sleep);
  if (!timers) throw new Error(`this runtime has no precise sleep`);
  const offsetsMs = arrivalOffsetsMs({ ratePerS: rate, durationS, burstiness: 1, maxRequests: null, seed: [seed, 1, 2] });
  const lags: number[] = [];
  let first = 0, last = 0;
  const c0 = cpuUs();
  await runOpenLoop((_i, due) => {
    const now = performance.now();
    if (!lags.length) first = now;
    last = now;
    lags.push(now - due);
    return Promise.resolve();
  }, { offsetsMs, spinMarginMs: margin, timers });
  return pacerStats(sleep, margin, rate, lags, last - first, cpuUs() - c0);
}

/** The pacer with real streamed requests (Runner.send) at `rate` req/s for `durationS`. */
export async function pacerReal(mock: Mock, rate: number, durationS: number, margin: number, seed = 7, sleep: PacerSleep = "timer"): Promise<PacerResult & { failed: number }> {
  const timers = pacerTimers(sleep);
  if (!timers) throw new Error(`this runtime has no precise sleep`);
  const { runner, pool } = makeRunner(mock.baseUrl);
  const pick = pool.picker([seed, 3], `m${margin}`);
  for (let i = 0; i < 20; i++) await runner.send(pick().prompt, `warm-${i}`);
  const offsetsMs = arrivalOffsetsMs({ ratePerS: rate, durationS, burstiness: 1, maxRequests: null, seed: [seed, 1, 2] });
  const lags: number[] = [];
  let failed = 0, first = 0, last = 0;
  const c0 = cpuUs();
  await runOpenLoop(async (_i, due) => {
    const now = performance.now();
    if (!lags.length) first = now;
    last = now;
    lags.push(now - due);
    const { prompt, salt } = pick();
    const r = await runner.send(prompt, salt, due);
    if (!r.result.ok) failed++;
  }, { offsetsMs, spinMarginMs: margin, timers });
  return { ...pacerStats(sleep, margin, rate, lags, last - first, cpuUs() - c0), failed };
}

/** One in-process level's client-attributable TTFT lag. */
export interface TtftLagResult {
  rate: number;
  sent: number;
  paired: number;
  /** Pairs whose log line is the one in plain send order (a check on the pairing). */
  inOrder: number;
  achievedRps: number | null;
  sendLagP50: number | null;
  sendLagP99: number | null;
  /** Client-attributable lag (mock wrote first token → client parsed it), ms. */
  lagP50: number | null;
  lagP99: number | null;
  /** Send leg (client stamped t_send → mock had read the request), ms. */
  legP50: number | null;
  legP99: number | null;
  /** TTFT − first_ms (= send leg + lag; needs no shared clock), ms. */
  ttftMinusFirstP50: number | null;
  ttftMinusFirstP99: number | null;
  cpuPct: number;
  failed: number;
  note: string | null;
}

interface Row {
  ok: boolean;
  ttft_ms: number | null;
  t_send_ns: number;
  prompt_tokens: number | null;
}

/**
 * Pairs a level's rows with its log lines: log lines in the mock's read order (serial), rows in
 * send order; each line takes the earliest unpaired row with the same prompt token count, which
 * tolerates two requests that reached the mock in the other order than sent.
 */
export function pairRows(rows: Row[], lines: MockRequestLog[]): { pairs: [Row, MockRequestLog][]; inOrder: number } {
  const rs = [...rows].sort((a, b) => a.t_send_ns - b.t_send_ns);
  const ls = [...lines].sort((a, b) => a.serial - b.serial);
  const used = new Uint8Array(rs.length);
  const pairs: [Row, MockRequestLog][] = [];
  let inOrder = 0, start = 0;
  for (let k = 0; k < ls.length; k++) {
    while (start < rs.length && used[start]) start++;
    for (let j = start; j < rs.length && j < start + 64; j++) {
      if (!used[j] && rs[j].prompt_tokens === ls[k].prompt) {
        used[j] = 1;
        if (j === k) inOrder++;
        pairs.push([rs[j], ls[k]]);
        break;
      }
    }
  }
  return { pairs, inOrder };
}

/** Runs one open-loop level in process through runLevel and measures the TTFT lag against the mock's log. */
export async function ttftLagLevel(mock: Mock, dir: string, rate: number, durationS: number, index: number, seed = 0): Promise<TtftLagResult> {
  const { runner, pool } = makeRunner(mock.baseUrl);
  const warmPick = pool.picker([seed, 99, index], `w${index}`);
  for (let i = 0; i < 20; i++) await runner.send(warmPick().prompt, `warm-${index}-${i}`);
  const before = (await mock.log(0, 0)).length;
  const base = join(dir, `inproc-r${rate}-${index}`);
  const journal = await JsonlWriter.open(`${base}/requests.jsonl`);
  const outputs = await JsonlWriter.open(`${base}/outputs.jsonl`);
  const inputs = await JsonlWriter.open(`${base}/inputs.jsonl`);
  const c0 = cpuUs();
  const t0 = performance.now();
  const res = await runLevel({
    index, level: rate, name: `r${rate}`, ratePerS: rate, workers: null, durationS, maxRequests: null, burstiness: 1, seed: levelSeed(seed, index),
  }, { runner, pool, slo: {}, gpuCount: 1, label: "vllm", journal, outputs, inputs });
  const wall = performance.now() - t0;
  const cpu = cpuUs() - c0;
  await Promise.all([journal.close(), outputs.close(), inputs.close()]);
  const rows = readFileSync(`${base}/requests.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Row);
  const all = await mock.log(before + rows.length, 3000);
  const lines = all.slice(before);
  const { pairs, inOrder } = pairRows(rows.filter((r) => r.ok), lines);
  const ok = pairs.filter(([r, l]) => r.ttft_ms !== null && l.firstMs !== null && l.recvWallMs !== null);
  const sendWall = (r: Row) => performance.timeOrigin + r.t_send_ns / 1e6;
  const lags = ok.map(([r, l]) => sendWall(r) + (r.ttft_ms as number) - ((l.recvWallMs as number) + (l.firstMs as number)));
  const legs = ok.map(([r, l]) => (l.recvWallMs as number) - sendWall(r));
  const diffs = ok.map(([r, l]) => (r.ttft_ms as number) - (l.firstMs as number));
  const s = res.summary;
  return {
    rate,
    sent: res.sent,
    paired: ok.length,
    inOrder,
    achievedRps: s.achieved_rps,
    sendLagP50: s.send_lag_ms.p50,
    sendLagP99: s.send_lag_ms.p99,
    lagP50: nearestRank(lags, 50),
    lagP99: nearestRank(lags, 99),
    legP50: nearestRank(legs, 50),
    legP99: nearestRank(legs, 99),
    ttftMinusFirstP50: nearestRank(diffs, 50),
    ttftMinusFirstP99: nearestRank(diffs, 99),
    cpuPct: (100 * cpu / 1000) / wall,
    failed: s.n_failed,
    note: lines.length !== rows.length ? `mock logged ${lines.length} of ${rows.length}` : null,
  };
}
