/**
 * Per-personality selftest: the mock is told a TTFT, a TPOT and a natural end; ik's client must
 * measure exactly that, count tokens by the method that personality allows, and get the exact
 * output length where the engine honours an exact-length field (natural EOS where it does not).
 */
import { broken, type Check, equal, near } from "./checks.ts";
import { nearestRank } from "../stats/mod.ts";
import { startMockProcess } from "./mock_process.ts";
import type { Personality, SelftestDeps } from "./send.ts";
import { profileFor } from "./send.ts";

/** What the personality checks tell the mock, and so what the client must measure. */
export const TRUTH = { ttftMs: 60, tpotMs: 8, eosAfter: 6, maxTokens: 24, requests: 4 } as const;

/** Token count method a correct client reports for each personality with default token-id mode. */
export const EXPECTED_METHOD: Record<Personality, string> = {
  vllm: "ids", // return_token_ids streams the ids for free
  sglang: "usage",
  llamacpp: "usage", // ids only through logprobs, which ik asks for only with --token-ids logprobs
  trtllm: "usage",
  openai: "usage",
};

/** Runs the timing, counting and length checks for one personality against its own mock process. */
export async function personalityChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const g = engine;
  const out: Check[] = [];
  let mock;
  try {
    mock = await startMockProcess(deps.rt, [
      "--engine", engine, "--ttft-ms", String(TRUTH.ttftMs), "--tpot-ms", String(TRUTH.tpotMs),
      "--eos-after", String(TRUTH.eosAfter), "--seed", "7",
    ], deps.ikArgv);
  } catch (e) {
    return [broken(g, "mock started", (e as Error).message)];
  }
  try {
    const rows = [];
    for (let i = 0; i < TRUTH.requests; i++) {
      rows.push(await deps.send({ baseUrl: mock.baseUrl, engine, maxTokens: TRUTH.maxTokens, prompt: `selftest ${engine} request ${i}`, exactLength: true }));
    }
    const ok = rows.filter((r) => r.ok);
    out.push(equal(g, "requests ok", `${ok.length}/${rows.length}`, `${rows.length}/${rows.length}`));
    const ttft = nearestRank(ok.map((r) => r.ttft_ms as number), 50);
    const tpot = nearestRank(ok.map((r) => r.tpot_ms as number), 50);
    // TTFT: the client clock includes connection set-up and the first write, never less than told.
    out.push(near(g, "ttft_ms median", ttft, TRUTH.ttftMs, { below: 1, above: 12 }));
    out.push(near(g, "tpot_ms median", tpot, TRUTH.tpotMs, { below: 1, above: 1.5 }));
    const honours = profileFor(engine) !== "generic";
    const first = ok[0];
    out.push(equal(g, "token_count_method", first?.token_count_method, EXPECTED_METHOD[engine]));
    if (honours) {
      out.push(equal(g, "n_tokens (exact length honoured)", first?.n_tokens, TRUTH.maxTokens));
      out.push(equal(g, "finish_reason (exact length)", first?.finish_reason, "length"));
    } else {
      out.push(equal(g, "n_tokens (natural EOS, no exact-length field)", first?.n_tokens, TRUTH.eosAfter));
      out.push(equal(g, "finish_reason (natural EOS)", first?.finish_reason, "stop"));
    }
    const compl = await deps.send({ baseUrl: mock.baseUrl, engine, maxTokens: TRUTH.maxTokens, prompt: `selftest ${engine} completions`, exactLength: true, api: "completions" });
    out.push(equal(g, "completions: ok, n_tokens, method", `${compl.ok} ${compl.n_tokens} ${compl.token_count_method}`,
      `true ${honours ? TRUTH.maxTokens : TRUTH.eosAfter} ${EXPECTED_METHOD[engine]}`));
    const natural = await deps.send({ baseUrl: mock.baseUrl, engine, maxTokens: TRUTH.maxTokens, prompt: `selftest ${engine} natural`, exactLength: false });
    out.push(equal(g, "n_tokens without exact-length fields (natural EOS)", natural.n_tokens, TRUTH.eosAfter));
  } catch (e) {
    out.push(broken(g, "requests", (e as Error).message));
  } finally {
    await mock.stop();
  }
  return out;
}
