/**
 * A real single-mode benchmark through the same code `ik bench serve` runs (runner, rounds with
 * prefix-cache tags, journal, record, CIs over rounds) against a mock told TTFT and TPOT: the
 * record's medians must be the truth, and the record must be whole and verifiable.
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEndpoint } from "../client/mod.ts";
import { loadRecord } from "../evidence/mod.ts";
import { loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { Runner } from "../bench/runner.ts";
import { runSingle } from "../bench/serve_single.ts";
import { broken, type Check, equal, fmt, median, near, whenBusy } from "./checks.ts";
import { withMock } from "./mock_process.ts";
import type { SelftestDeps } from "./send.ts";
import { BUSY_LATE_MS } from "./timing_checks.ts";

/** What the mock is told, and the run's size: 4 prompts × 3 rounds, 16 tokens each. */
export const SINGLE = { ttftMs: 30, tpotMs: 6, maxTokens: 16, rounds: 3, warmup: 1 } as const;

/** Runs single mode against a vLLM mock and checks the record. */
export function singleModeChecks(deps: SelftestDeps): Promise<Check[]> {
  const g = "bench serve single";
  const args = ["--engine", "vllm", "--ttft-ms", String(SINGLE.ttftMs), "--tpot-ms", String(SINGLE.tpotMs)];
  return withMock(deps, g, args, async (mock) => {
    const dir = await mkdtemp(join(tmpdir(), "ik-selftest-single-"));
    try {
      const set = loadBuiltinPromptSet({ limitPerBucket: 1 });
      const runner = new Runner({
        ep: parseEndpoint(mock.baseUrl), api: "chat", engineKind: "vllm", model: "mock-model", maxTokens: SINGLE.maxTokens,
        tokenIds: "auto", exactLength: true, extraBody: {}, chatTemplateKwargs: {}, timeoutMs: 30_000, idleTimeoutMs: 10_000,
        signal: deps.signal,
      });
      const { record } = await runSingle({
        runner, set, prompts: set.prompts, rounds: SINGLE.rounds, warmup: SINGLE.warmup, cacheSalt: true, storeRoot: dir,
        extending: null, label: "selftest", seed: 0, resamples: 1000, runDir: null,
        server: { limitations: [], info: { models_status: 200 } }, gpu: {}, args: {},
        engine: { name: "vllm", version: null, kind_source: "flag" }, keyNote: null, isLocal: true, signal: deps.signal,
      });
      const n = set.prompts.length * SINGLE.rounds;
      const log = await mock.requestLog(n + SINGLE.warmup, 5000);
      const late = median(log.filter((l) => l.firstMs !== null).map((l) => (l.firstMs as number) - SINGLE.ttftMs));
      const busy = late !== null && late > BUSY_LATE_MS ? `host too busy: mock ran ${fmt(late, 1)} ms late` : null;
      const all = (record.data as { buckets: Record<string, Record<string, { median: number; ci95_median: [number, number] | null } | number>> }).buckets.all;
      const ttft = all.ttft_ms as { median: number; ci95_median: [number, number] | null };
      const tpot = all.tpot_ms as { median: number; ci95_median: [number, number] | null };
      let integrity = "verified";
      try {
        await loadRecord(dir, record.evidence_id as string);
      } catch (e) {
        integrity = (e as Error).message;
      }
      const timing = [
        near(g, "record: median TTFT (all)", ttft?.median, SINGLE.ttftMs, { below: 0.5, above: 5 }),
        near(g, "record: median TPOT (all)", tpot?.median, SINGLE.tpotMs, { below: SINGLE.tpotMs * 0.03, above: SINGLE.tpotMs * 0.03 }, "ms", 2),
      ];
      return [
        equal(g, "record complete, requests ok", `${record.complete} ${all.n_requests}`, `true ${n}`),
        equal(g, "artifacts verify (sha256)", integrity, "verified"),
        equal(g, "count method of every request", JSON.stringify((record.data as { token_count_methods: unknown }).token_count_methods), JSON.stringify({ ids: n })),
        ...(busy ? timing.map((c) => whenBusy(c, busy)) : timing),
        equal(g, "TPOT 95% CI over rounds holds the median", tpot?.ci95_median ? tpot.ci95_median[0] <= tpot.median && tpot.median <= tpot.ci95_median[1] : "no CI", true),
      ];
    } catch (e) {
      return [broken(g, "single-mode run", (e as Error).message)];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
