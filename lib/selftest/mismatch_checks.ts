/**
 * A lying server: with `--fault usage-mismatch:D` the mock's usage reports D more completion
 * tokens than it streamed (a negative D fewer, floored at 0; the streamed tokens and ids stay
 * true).
 * - Where ids stream (vllm), a correct client counts the ids, keeps the usage it was told, and
 *   flags the row with `count_mismatch`.
 * - Where no ids stream (sglang, llamacpp, trtllm, openai), the token events are the only check on
 *   the usage: every token event carries at least one token, so a usage below the number of token
 *   events (0 included) cannot be right and a correct client counts the events (`sse_events`) and
 *   flags the row; a usage that lies high is not contradicted by anything the stream carried, so it
 *   is the count (`usage`), unflagged. One mock tells all three lies, one per request (below).
 * No timing is judged here: the counts are exact, whatever the host's load.
 */
import { broken, type Check, equal } from "./checks.ts";
import { withMock } from "./mock_process.ts";
import { streamsIds } from "./personality_checks.ts";
import type { Personality, SelftestDeps } from "./send.ts";
import { everyRow, type Paired, runSeries } from "./series.ts";

/** The lie told, in tokens, and the run's size. */
export const MISMATCH = { extra: 2, maxTokens: 16, requests: 3 } as const;

/**
 * The lies told where no ids stream, by the mock's request serial (1-based): `usage-mismatch:3` on
 * every request, `usage-mismatch:-4@2` on the 2nd and `usage-mismatch:-1000@3` on the 3rd, so
 * request 1 reports 3 more than streamed (high), request 2 one fewer (below the token events, one
 * token per event) and request 3 0 (floored). Sent one after the other: serials 1, 2, 3.
 */
export const LOW_USAGE = {
  high: 3,
  below: -4,
  zero: -1000,
  maxTokens: 16,
  requests: 3,
  faults: ["usage-mismatch:3", "usage-mismatch:-4@2", "usage-mismatch:-1000@3"],
} as const;

/** What the mock's usage reports for a request with this serial that streamed `gen` tokens. */
export function lowUsageClaim(serial: number, gen: number): number {
  const L = LOW_USAGE;
  const extra = L.high + (serial % 2 === 0 ? L.below : 0) + (serial % 3 === 0 ? L.zero : 0);
  return Math.max(0, gen + extra);
}

/**
 * The usage-mismatch checks against one personality (group `<engine>/usage-mismatch`): the ids
 * case where ids stream, else the lies high, below the token events and 0.
 */
export function mismatchChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  return streamsIds(engine) ? idsMismatchChecks(deps, engine) : noIdsMismatchChecks(deps, engine);
}

/** Where ids stream: the ids are the count; the lie is kept and flagged. */
function idsMismatchChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const M = MISMATCH;
  const g = `${engine}/usage-mismatch`;
  const args = [
    "--engine",
    engine,
    "--ttft-ms",
    "5",
    "--tpot-ms",
    "1",
    "--fault",
    `usage-mismatch:${M.extra}`,
  ];
  return withMock(deps, g, args, async (mock) => {
    const s = await runSeries(deps, mock, {
      engine,
      label: `lie${engine}`,
      requests: M.requests,
      maxTokens: M.maxTokens,
    });
    if (typeof s === "string") return [broken(g, "requests paired with the mock log", s)];
    const { pairs } = s;
    const okN = pairs.filter((p) => p.row.ok).length;
    return [
      equal(g, "requests ok", `${okN}/${pairs.length}`, `${pairs.length}/${pairs.length}`),
      everyRow(
        g,
        "count_mismatch flagged",
        pairs,
        (p) => p.row.count_mismatch !== null && p.row.count_mismatch !== undefined,
        () => true,
      ),
      everyRow(
        g,
        "n_tokens = streamed ids (method ids)",
        pairs,
        (p) => `${p.row.n_tokens} ${p.row.token_count_method}`,
        (p) => `${p.log.gen} ids`,
      ),
      everyRow(
        g,
        "n_usage = the lie (streamed + D)",
        pairs,
        (p) => p.row.n_usage,
        (p) => p.log.gen + M.extra,
        "tokens",
      ),
    ];
  });
}

/** Where no ids stream: only the token events can refute the usage. */
function noIdsMismatchChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const L = LOW_USAGE;
  const g = `${engine}/usage-mismatch`;
  const args = ["--engine", engine, "--ttft-ms", "5", "--tpot-ms", "1", "--tokens-per-event", "1"];
  for (const f of L.faults) args.push("--fault", f);
  return withMock(deps, g, args, async (mock) => {
    const s = await runSeries(deps, mock, {
      engine,
      label: `lie${engine}`,
      requests: L.requests,
      maxTokens: L.maxTokens,
    });
    if (typeof s === "string") return [broken(g, "requests paired with the mock log", s)];
    const { pairs } = s;
    const okN = pairs.filter((p) => p.row.ok).length;
    const claim = (p: Paired) => lowUsageClaim(p.log.serial, p.log.gen);
    const serials = pairs.map((p) => p.log.serial).join(",");
    if (serials !== "1,2,3") {
      return [broken(g, "requests paired with the mock log", `mock serials ${serials}, not 1,2,3`)];
    }
    /** `n_tokens method` of the request with this serial, against the count a correct client gives. */
    const counted = (serial: number, name: string, want: (p: Paired) => string): Check => {
      const p = pairs.find((q) => q.log.serial === serial)!;
      return equal(g, name, `${p.row.n_tokens} ${p.row.token_count_method}`, want(p));
    };
    return [
      equal(g, "requests ok", `${okN}/${pairs.length}`, `${pairs.length}/${pairs.length}`),
      everyRow(
        g,
        "n_token_events = the mock's tokens",
        pairs,
        (p) => p.row.n_token_events,
        (p) => p.log.gen,
        "tokens",
      ),
      everyRow(
        g,
        `n_usage = the lie told (+${L.high}; ${L.high + L.below}; floored at 0)`,
        pairs,
        (p) => p.row.n_usage,
        claim,
        "tokens",
      ),
      counted(1, `usage +${L.high} (no event refutes it): n_tokens = usage`, (p) => `${claim(p)} usage`),
      counted(
        2,
        `usage ${L.high + L.below} (< token events): n_tokens = token events, not usage`,
        (p) => `${p.log.gen} sse_events`,
      ),
      counted(3, "usage 0: n_tokens = token events, not usage", (p) => `${p.log.gen} sse_events`),
      everyRow(
        g,
        "count_mismatch flagged where usage < token events",
        pairs,
        (p) => p.row.count_mismatch !== null && p.row.count_mismatch !== undefined,
        (p) => claim(p) < p.log.gen,
      ),
    ];
  });
}
