/**
 * A lying server: with `--fault usage-mismatch:D` the mock's usage reports D more completion
 * tokens than it streamed (the streamed ids stay true). Where ids stream, a correct client counts
 * the ids, keeps the usage it was told, and flags the row with `count_mismatch`.
 */
import { broken, type Check, equal } from "./checks.ts";
import { withMock } from "./mock_process.ts";
import type { Personality, SelftestDeps } from "./send.ts";
import { everyRow, runSeries } from "./series.ts";

/** The lie told, in tokens, and the run's size. */
export const MISMATCH = { extra: 2, maxTokens: 16, requests: 3 } as const;

/** The usage-mismatch checks against one personality that streams ids. */
export function mismatchChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
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
