/**
 * The pure parts of `bench serve --mode conversations`: the mode's flag rules (flags it does not
 * use are refused, 64), --think-time-ms (malformed or over the timer limit: 64; a long draw sleeps
 * in pieces), cached_share (pairs from one response, never above 1), the throughput figures and
 * the headline (what ran at once, the last turn with an ok TTFT, the planned turns). In process, < 1 s.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import type { BenchServeFlags } from "../../lib/commands/bench_serve_flags.ts";
import { checkModeFlags, thinkTime } from "../../lib/commands/bench_serve_modes.ts";
import { addOkTurn, cachedShare, conversationSummary, newTurnStats, throughput, turnSummaries } from "../../lib/bench/conversation_record.ts";
import { conversationSalt, sleepFor } from "../../lib/bench/conversations.ts";

function flags(over: Partial<BenchServeFlags> = {}): BenchServeFlags {
  return {
    cmd: "bench-serve", baseUrl: "http://127.0.0.1:1", model: "m", mode: "conversations", conversations: "synth:2:2:8:4", api: "chat", engineKind: "auto", rounds: 5, warmup: 2,
    seed: 0, buckets: [], limitPerBucket: 0, tokenIds: "auto", exactLength: true, cacheSalt: true, timeoutS: 30, idleTimeoutS: 10, resamples: 2000, allowIncomplete: false,
    json: true, concurrency: [], rates: [], maxRequestsPerLevel: 0, refRequests: 5, burstiness: 1, sloMaxFail: 0, sweepAll: false, closedLoop: false, failOnSlo: false, ...over,
  } as BenchServeFlags;
}

const usage = (fn: () => unknown, re: RegExp) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof IkError, String(e));
    assert.equal(e.code, 64);
    assert.match(e.oneLine(), re);
    return true;
  });

test("conversations mode refuses the flags it does not use (64); keeps the ones it does", () => {
  for (const [over, name] of [
    [{ sloTtftP95Ms: 1 }, "--slo-ttft-p95-ms"], [{ sloE2eP95Ms: 1 }, "--slo-e2e-p95-ms"], [{ failOnSlo: true }, "--fail-on-slo"], [{ warmup: 5 }, "--warmup"],
    [{ rounds: 3 }, "--rounds"], [{ gpuPriceUsdH: 2 }, "--gpu-price-usd-h"], [{ burstiness: 0.5 }, "--burstiness"], [{ sweepAll: true }, "--sweep-all"],
    [{ buckets: ["short"] }, "--buckets"], [{ limitPerBucket: 2 }, "--limit-per-bucket"], [{ resamples: 300 }, "--resamples"], [{ refE2eMs: 5 }, "--ref-e2e-ms"],
    [{ sloMaxFail: 1 }, "--slo-max-fail"], [{ firstRound: 2 }, "--first-round"], [{ gpuMetricsUrl: "http://127.0.0.1:9400/metrics" }, "--gpu-metrics-url"], [{ allowIncomplete: true }, "--allow-incomplete"],
  ] as [Partial<BenchServeFlags>, string][]) {
    usage(() => checkModeFlags(flags(over)), new RegExp(`^ik: ${name}: is not for --mode conversations`));
  }
  assert.equal(checkModeFlags(flags({ warmup: 0, cacheSalt: false, sessions: 4, thinkTimeMs: "10:2", maxTokens: 8, temperature: "server" })), null);
});

test("--think-time-ms: MEAN[:SD] plain numbers within the timer limit (64 otherwise)", () => {
  assert.deepEqual(thinkTime("500:200"), { mean: 500, sd: 200 });
  assert.deepEqual(thinkTime("2.5"), { mean: 2.5, sd: 0 });
  assert.deepEqual(thinkTime("2147483647:0"), { mean: 2147483647, sd: 0 });
  for (const v of ["100:", ":5", "0x10", "1e3", "-1", "fast", "1:2:3", ""]) usage(() => thinkTime(v), /--think-time-ms: '.*' is not MEAN\[:SD\]/);
  usage(() => thinkTime("1000000000000"), /--think-time-ms: the mean 1000000000000 ms is over 2147483647 ms/);
  usage(() => thinkTime("5:2147483648"), /the SD 2147483648 ms is over/);
});

test("sleepFor waits in pieces no timer overflows on, and ends on abort", async () => {
  const warnings: string[] = [];
  const onWarn = (w: Error) => warnings.push(w.name);
  const proc = (globalThis as { process?: { on(e: string, f: (w: Error) => void): void; off(e: string, f: (w: Error) => void): void } }).process;
  proc?.on("warning", onWarn);
  try {
    const ac = new AbortController();
    const t0 = performance.now();
    const p = sleepFor(1e12, ac.signal);
    let done = false;
    p.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(done, false, "a 1e12 ms think time does not end at once");
    ac.abort();
    await p;
    assert.ok(performance.now() - t0 < 1000);
    const t1 = performance.now();
    await sleepFor(30, new AbortController().signal);
    assert.ok(performance.now() - t1 >= 28);
    await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(warnings.filter((w) => /TimeoutOverflow/.test(w)), []);
  } finally {
    proc?.off("warning", onWarn);
  }
});

test("cached_share: Σ cached / Σ prompt over the turns that reported both, never above 1", () => {
  const s = newTurnStats();
  const row = { ttft_ms: 1, tpot_ms: 1, e2e_ms: 2 };
  addOkTurn(s, row, 100, null); // prompt only
  addOkTurn(s, row, null, 90); // cached only
  addOkTurn(s, row, 50, 40); // both
  assert.equal(turnSummaries([s])[0].cached_share, 40 / 50);
  assert.equal(turnSummaries([s])[0].prompt_tokens_mean, 75);
  assert.equal(turnSummaries([s])[0].cached_tokens_mean, 65);
  assert.equal(cachedShare([[10, 30]]), 1);
  assert.equal(cachedShare([]), null);
  assert.equal(cachedShare([[0, 0]]), null);
});

test("throughput: duration from first send to last end; ok turns/s and output tok/s", () => {
  assert.deepEqual(throughput({ firstSendMs: 1000, lastEndMs: 3000, ended: 5, ok: 4, outputTokens: 80 }),
    { duration_s: 2, n_turns_ended: 5, n_turns_ok: 4, output_tokens: 80, requests_per_s: 2, output_tok_s: 40 });
  assert.deepEqual(throughput({ firstSendMs: null, lastEndMs: null, ended: 0, ok: 0, outputTokens: 0 }),
    { duration_s: null, n_turns_ended: 0, n_turns_ok: 0, output_tokens: 0, requests_per_s: null, output_tok_s: null });
});

test("the headline: what ran at once, the last turn with an ok TTFT, the planned turns, the throughput", () => {
  const ok = newTurnStats(), ok2 = newTurnStats(), failedOnly = newTurnStats();
  addOkTurn(ok, { ttft_ms: 10, tpot_ms: 1, e2e_ms: 20 }, 100, 0);
  addOkTurn(ok2, { ttft_ms: 15, tpot_ms: 1, e2e_ms: 20 }, 200, 160);
  failedOnly.failed = 2;
  const per = turnSummaries([ok, ok2, failedOnly]);
  const tp = throughput({ firstSendMs: 0, lastEndMs: 2000, ended: 4, ok: 2, outputTokens: 40 });
  const s = conversationSummary({ label: "vllm", model: "m", conversations: 2, plannedTurns: 8, maxTurns: 4, atOnce: 2, interrupted: false }, per, tp);
  assert.equal(s, "vllm m: 2 conversation(s), 8 turn(s) planned (up to 4 each), 2 at once; TTFT p50 turn 1 10.0 ms, turn 2 15.0 ms (x1.50), 80 % of turn 2's prompt cached; 2 ok turn(s) in 2.0 s: 1.00 req/s, 20.0 output tok/s");
  assert.doesNotMatch(s, /n\/a/);
  assert.match(conversationSummary({ label: "l", model: "m", conversations: 1, plannedTurns: 2, maxTurns: 2, atOnce: 1, interrupted: true }, turnSummaries([failedOnly]), throughput({ firstSendMs: null, lastEndMs: null, ended: 2, ok: 0, outputTokens: 0 })), /; no turn answered; INTERRUPTED$/);
});

test("the cache tag is the evidence id's random part", () => {
  assert.equal(conversationSalt("serve_benchmark-20261207T144500Z-0a1b2c3d"), "ik-c0a1b2c3d");
});
