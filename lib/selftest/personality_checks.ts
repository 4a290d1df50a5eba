/**
 * Per-personality selftest: the mock is told a TTFT, a TPOT and a natural end; ik's client must
 * measure exactly that (judged against the mock's own clock, timing_checks.ts), count tokens by
 * the method that personality allows, and get the exact output length where the engine honours
 * an exact-length field (natural EOS where it does not).
 */
import { type Check, equal } from "./checks.ts";
import { steadyCpuShare } from "./cpu_share.ts";
import { withMock } from "./mock_process.ts";
import type { Personality, SelftestDeps } from "./send.ts";
import { profileFor } from "./send.ts";
import { everyRow, runSeries } from "./series.ts";
import { TIMED_WARMUP, timingChecks, type TimingOutcome, withRerun } from "./timing_checks.ts";
import { broken } from "./checks.ts";

/** What the personality checks tell the mock, and so what the client must measure. */
export const TRUTH = { ttftMs: 40, tpotMs: 8, eosAfter: 12, maxTokens: 24, requests: 9 } as const;

/** Token count method a correct client reports for each personality with default token-id mode. */
export const EXPECTED_METHOD: Record<Personality, string> = {
  vllm: "ids", // return_token_ids streams the ids for free
  sglang: "usage",
  llamacpp: "usage", // ids only through logprobs, which ik asks for only with --token-ids logprobs
  trtllm: "usage", // chat has no ids field; completions has token_ids only with detokenize: false
  openai: "usage",
};

/** Whether the personality streams token ids to a default client (so k_first is measured, not assumed). */
export function streamsIds(engine: Personality): boolean {
  return EXPECTED_METHOD[engine] === "ids";
}

/** Runs the timing, counting and length checks for one personality against its own mock process. */
export function personalityChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const g = engine;
  const args = [
    "--engine",
    engine,
    "--ttft-ms",
    String(TRUTH.ttftMs),
    "--tpot-ms",
    String(TRUTH.tpotMs),
    "--eos-after",
    String(TRUTH.eosAfter),
    "--seed",
    "7",
  ];
  return withMock(deps, g, args, async (mock) => {
    const honours = profileFor(engine) !== "generic";
    const n = honours ? TRUTH.maxTokens : TRUTH.eosAfter;
    const run = async (): Promise<TimingOutcome & { checks: Check[] }> => {
      const s = await runSeries(deps, mock, {
        engine,
        label: engine,
        requests: TRUTH.requests,
        warmup: TIMED_WARMUP,
        maxTokens: TRUTH.maxTokens,
      });
      if (typeof s === "string") {
        return { checks: [broken(g, "requests paired with the mock log", s)], busy: null };
      }
      const { pairs } = s;
      const okN = pairs.filter((p) => p.row.ok).length;
      const timing = timingChecks(g, pairs, {
        ttftMs: TRUTH.ttftMs,
        k: () => 1,
        modelTpotMs: () => TRUTH.tpotMs,
        kNote: "k = 1",
      });
      const checks: Check[] = [
        equal(g, "requests ok", `${okN}/${pairs.length}`, `${pairs.length}/${pairs.length}`),
        ...timing.checks,
        everyRow(
          g,
          "token_count_method",
          pairs,
          (p) => p.row.token_count_method,
          () => EXPECTED_METHOD[engine],
        ),
        honours
          ? everyRow(g, "n_tokens (exact length honoured)", pairs, (p) => p.row.n_tokens, () => n, "tokens")
          : everyRow(
            g,
            "n_tokens (natural EOS, no exact-length field)",
            pairs,
            (p) => p.row.n_tokens,
            () => n,
            "tokens",
          ),
        honours
          ? everyRow(g, "finish_reason (exact length)", pairs, (p) => p.row.finish_reason, () => "length")
          : everyRow(g, "finish_reason (natural EOS)", pairs, (p) => p.row.finish_reason, () => "stop"),
        everyRow(g, "k_first_assumed", pairs, (p) => p.row.k_first_assumed, () => !streamsIds(engine)),
      ];
      return { checks, busy: timing.busy };
    };
    const out = (await withRerun(run, () => steadyCpuShare(deps.rt))).checks;
    if (deps.signal?.aborted) return out;
    const compl = await deps.send({
      baseUrl: mock.baseUrl,
      engine,
      maxTokens: TRUTH.maxTokens,
      prompt: `selftest ${engine} completions`,
      exactLength: true,
      api: "completions",
    });
    out.push(
      equal(
        g,
        "completions: ok, n_tokens, method",
        `${compl.ok} ${compl.n_tokens} ${compl.token_count_method}`,
        `true ${n} ${EXPECTED_METHOD[engine]}`,
      ),
    );
    const natural = await deps.send({
      baseUrl: mock.baseUrl,
      engine,
      maxTokens: TRUTH.maxTokens,
      prompt: `selftest ${engine} natural`,
      exactLength: false,
    });
    out.push(
      equal(
        g,
        "n_tokens without exact-length fields (natural EOS)",
        natural.n_tokens,
        TRUTH.eosAfter,
        "tokens",
      ),
    );
    return out;
  });
}
