/**
 * Packed events: token events that carry several tokens (`--tokens-per-event 3`, and speculative
 * decoding, `--spec-depth D --spec-accept P`). Where ids stream, the count, its method and k_first
 * are exact, and TPOT divides by n − k_first with the real k_first; where only usage comes, the
 * seed's rule assumes k_first = 1 (the row says so: `k_first_assumed`), which gives a known,
 * different TPOT: the mock spent (n − k)·tpot between its first and last events, the client
 * divides by n − 1.
 */
import { broken, type Check, equal } from "./checks.ts";
import { steadyCpuShare } from "./cpu_share.ts";
import { withMock } from "./mock_process.ts";
import { streamsIds } from "./personality_checks.ts";
import type { Personality, SelftestDeps } from "./send.ts";
import { everyRow, type Paired, runSeries } from "./series.ts";
import { TIMED_WARMUP, timingChecks, withRerun } from "./timing_checks.ts";

/** Tokens-per-event run: max_tokens not a multiple of tokens per event, so the last event is short. */
export const PACKED = { ttftMs: 40, tpotMs: 5, tokensPerEvent: 3, maxTokens: 32, requests: 9 } as const;

/** Speculative-decoding run (tpot is per step). */
export const SPEC = {
  ttftMs: 40,
  tpotMs: 8,
  depth: 3,
  accept: 0.6,
  seed: 11,
  maxTokens: 32,
  requests: 9,
} as const;

/** Model TPOT of a tokens-per-event answer of n tokens as the client must report it (k real or assumed). */
export function packedModelTpot(n: number, tpe: number, tpotMs: number, idsStream: boolean): number {
  const k = Math.min(tpe, n);
  // first event at TTFT, then each event after its own tokens × tpot: last − first = (n − k)·tpot
  return ((n - k) * tpotMs) / (idsStream ? n - k : n - 1);
}

/** The checks that hold for every packed run: the count (and its method) and the events. */
function countChecks(g: string, pairs: Paired[], ids: boolean, events: (p: Paired) => number): Check[] {
  const okN = pairs.filter((p) => p.row.ok).length;
  const out: Check[] = [
    equal(g, "requests ok", `${okN}/${pairs.length}`, `${pairs.length}/${pairs.length}`),
    everyRow(g, "token_count_method", pairs, (p) => p.row.token_count_method, () => (ids ? "ids" : "usage")),
    everyRow(
      g,
      ids ? "n_tokens (ids) = mock's tokens" : "n_tokens (usage) = mock's tokens",
      pairs,
      (p) => p.row.n_tokens,
      (p) => p.log.gen,
      "tokens",
    ),
    everyRow(g, "n_token_events", pairs, (p) => p.row.n_token_events, events, "events"),
    everyRow(g, "k_first_assumed", pairs, (p) => p.row.k_first_assumed, () => !ids),
  ];
  if (ids) {
    out.push(
      everyRow(
        g,
        "n_ids and n_usage = mock's tokens",
        pairs,
        (p) => `${p.row.n_ids} ${p.row.n_usage}`,
        (p) => `${p.log.gen} ${p.log.gen}`,
      ),
    );
    out.push(
      everyRow(
        g,
        "count_mismatch (honest server)",
        pairs,
        (p) => p.row.count_mismatch ?? "none",
        () => "none",
      ),
    );
  }
  return out;
}

/** `--tokens-per-event 3` against one personality. */
export function tokensPerEventChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const P = PACKED;
  const g = `${engine}/tpe${P.tokensPerEvent}`;
  const ids = streamsIds(engine);
  const args = [
    "--engine",
    engine,
    "--ttft-ms",
    String(P.ttftMs),
    "--tpot-ms",
    String(P.tpotMs),
    "--tokens-per-event",
    String(P.tokensPerEvent),
    "--seed",
    "3",
  ];
  return withMock(deps, g, args, async (mock) => {
    const run = async () => {
      const s = await runSeries(deps, mock, {
        engine,
        label: `tpe${engine}`,
        requests: P.requests,
        warmup: TIMED_WARMUP,
        maxTokens: P.maxTokens,
      });
      if (typeof s === "string") {
        return { checks: [broken(g, "requests paired with the mock log", s)], busy: null };
      }
      const { pairs } = s;
      const kTrue = (p: Paired) => Math.min(P.tokensPerEvent, p.log.gen);
      const timing = timingChecks(g, pairs, {
        ttftMs: P.ttftMs,
        k: ids ? kTrue : () => 1,
        modelTpotMs: (p) => packedModelTpot(p.log.gen, P.tokensPerEvent, P.tpotMs, ids),
        kNote: ids ? `k = ${P.tokensPerEvent}` : "k = 1 assumed",
      });
      const checks = [
        ...countChecks(g, pairs, ids, (p) => Math.ceil(p.log.gen / P.tokensPerEvent)),
        everyRow(g, "n_tokens = max_tokens", pairs, (p) => p.row.n_tokens, () => P.maxTokens, "tokens"),
        everyRow(
          g,
          ids ? "k_first (first event's ids)" : "k_first (assumed)",
          pairs,
          (p) => p.row.k_first,
          ids ? kTrue : () => 1,
          "tokens",
        ),
        ...timing.checks,
      ];
      return { checks, busy: timing.busy };
    };
    return (await withRerun(run, () => steadyCpuShare(deps.rt))).checks;
  });
}

/** Speculative decoding against one personality: the mock's realised steps are the truth. */
export function specChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const S = SPEC;
  const g = `${engine}/spec`;
  const ids = streamsIds(engine);
  const args = [
    "--engine",
    engine,
    "--ttft-ms",
    String(S.ttftMs),
    "--tpot-ms",
    String(S.tpotMs),
    "--spec-depth",
    String(S.depth),
    "--spec-accept",
    String(S.accept),
    "--seed",
    String(S.seed),
  ];
  return withMock(deps, g, args, async (mock) => {
    const run = async () => {
      const s = await runSeries(deps, mock, {
        engine,
        label: `spec${engine}`,
        requests: S.requests,
        warmup: TIMED_WARMUP,
        maxTokens: S.maxTokens,
      });
      if (typeof s === "string") {
        return { checks: [broken(g, "requests paired with the mock log", s)], busy: null };
      }
      const { pairs } = s;
      // Every step proposes D drafts, so the mock's steps (= its token events) are prop / D.
      const steps = (p: Paired) => p.log.prop / S.depth;
      // The request log has no per-event split, so where ids stream the first event's tokens are
      // the row's k_first, held to what a step can carry: 1 ≤ k ≤ 1 + D, and ≤ 1 + accepted.
      const kRow = (p: Paired) => {
        const k = p.row.k_first;
        return typeof k === "number" && k >= 1 && k <= 1 + Math.min(S.depth, p.log.acc) ? k : null;
      };
      const timing = timingChecks(g, pairs, {
        ttftMs: S.ttftMs,
        k: ids ? kRow : () => 1,
        modelTpotMs: (p) => {
          const k = ids ? kRow(p) : 1;
          return k === null || p.log.gen - k <= 0 ? null : ((steps(p) - 1) * S.tpotMs) / (p.log.gen - k);
        },
        kNote: ids ? "k = first event's ids" : "k = 1 assumed",
      });
      const checks = [
        ...countChecks(g, pairs, ids, steps),
        everyRow(
          g,
          "mock accepted drafts (acc > 0 in some request)",
          pairs.length ? [pairs[0]] : [],
          () => pairs.some((p) => p.log.acc > 0),
          () => true,
        ),
        ids
          ? everyRow(
            g,
            `k_first within 1 … 1 + min(D=${S.depth}, accepted)`,
            pairs,
            (p) => p.row.k_first,
            (p) => kRow(p) ?? "in range",
            "tokens",
          )
          : everyRow(g, "k_first (assumed)", pairs, (p) => p.row.k_first, () => 1, "tokens"),
        ...timing.checks,
      ];
      return { checks, busy: timing.busy };
    };
    return (await withRerun(run, () => steadyCpuShare(deps.rt))).checks;
  });
}
