/**
 * One short load run through `bench serve --mode load`'s code against the batching simulator,
 * whose capacity is known (B slots, step A ms, L tokens: 1000·B/(L·A) req/s): a rate grid below
 * and above capacity with an SLO between the p95 TTFTs an independent model of the simulator
 * predicts there. The max rate found must be the level below capacity; the low level's TPOT must be
 * one step per token; both records must be written whole.
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEndpoint } from "../client/mod.ts";
import { loadRecord } from "../evidence/mod.ts";
import { loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { arrivalOffsetsMs, levelSeed } from "../schedule/mod.ts";
import { Runner } from "../bench/runner.ts";
import { runLoad } from "../bench/serve_load.ts";
import { predictedTtftP95 } from "./batch_model.ts";
import { broken, type Check, equal, fmt, near } from "./checks.ts";
import { steadyCpuShare } from "./cpu_share.ts";
import { busyIfStarved } from "./timing_checks.ts";
import { withMock } from "./mock_process.ts";
import type { SelftestDeps } from "./send.ts";

/** The simulator's shape and the run: capacity 25 req/s; levels at 0.5 and 1.8 × capacity, 3 s each. */
export const LOAD = { b: 4, stepMs: 10, tokens: 16, fractions: [0.5, 1.8], durationS: 3 } as const;

/** Runs the load case and checks the capacity record. */
export function loadChecks(deps: SelftestDeps): Promise<Check[]> {
  const g = "bench serve load";
  const capacity = (1000 * LOAD.b) / (LOAD.tokens * LOAD.stepMs);
  const grid = LOAD.fractions.map((f) => f * capacity);
  const pred = grid.map((r, i) => predictedTtftP95(arrivalOffsetsMs({ ratePerS: r, durationS: LOAD.durationS, seed: levelSeed(0, i) }), LOAD.b, LOAD.stepMs, LOAD.tokens));
  const slo = Math.sqrt(pred[0] * pred[1]);
  const args = ["--engine", "vllm", "--max-batch", String(LOAD.b), "--step-ms", String(LOAD.stepMs)];
  return withMock(deps, g, args, async (mock) => {
    const before = steadyCpuShare(deps.rt);
    const dir = await mkdtemp(join(tmpdir(), "ik-selftest-load-"));
    try {
      const set = loadBuiltinPromptSet();
      const runner = new Runner({
        ep: parseEndpoint(mock.baseUrl), api: "chat", engineKind: "vllm", model: "mock-model", maxTokens: LOAD.tokens,
        tokenIds: "auto", exactLength: true, extraBody: {}, chatTemplateKwargs: {}, timeoutMs: 30_000, idleTimeoutMs: 10_000, signal: deps.signal,
      });
      const { capacity: cap, measured } = await runLoad({
        runner, set, prompts: set.prompts, label: "selftest", seed: 0, storeRoot: dir, runDir: null, levelKind: "rate", grid,
        closedLoop: false, durationS: LOAD.durationS, maxRequestsPerLevel: null, burstiness: 1, refRequests: 0, refE2eMs: null, warmup: 0,
        slo: { ttftP95Ms: slo, maxFail: 0 }, sweepAll: true, gpuCount: 1, gpuPriceUsdH: null,
        server: { limitations: [], info: { models_status: 200 } }, gpu: {}, args: {},
        engine: { name: "vllm", version: null, kind_source: "flag" }, keyNote: null, isLocal: true, signal: deps.signal,
      });
      let integrity = "verified";
      try {
        await loadRecord(dir, measured.evidence_id as string);
        await loadRecord(dir, cap.evidence_id as string);
      } catch (e) {
        integrity = (e as Error).message;
      }
      const levels = (measured.data as { levels: { summary: { tpot_ms: { p50: number | null }; n_failed: number; ttft_ms: { p95: number | null } } }[] }).levels;
      const found = (cap.data as { rate_star_rps: number | null }).rate_star_rps;
      const timed = [
        equal(g, `max rate found (capacity ${fmt(capacity, 0)} req/s; SLO p95 TTFT ≤ ${fmt(slo, 0)} ms between the predicted ${fmt(pred[0], 0)} and ${fmt(pred[1], 0)} ms)`, found === null ? "none" : fmt(found, 1), fmt(grid[0], 1), "req/s"),
        near(g, `TPOT p50 at ${fmt(grid[0], 1)} req/s = one step`, levels[0]?.summary.tpot_ms.p50, LOAD.stepMs, { below: LOAD.stepMs * 0.05, above: LOAD.stepMs * 0.05 }, "ms", 2),
      ];
      return [
        equal(g, "records written and verified", integrity, "verified"),
        // The rate found and the TPOT depend on the simulator and the client keeping time.
        ...busyIfStarved({ busy: null, checks: timed }, () => Math.min(before, steadyCpuShare(deps.rt)), () => true).checks,
        equal(g, "failed requests", levels.reduce((a, l) => a + l.summary.n_failed, 0), 0),
      ];
    } catch (e) {
      return [broken(g, "load run", (e as Error).message)];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

