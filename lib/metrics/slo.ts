/**
 * SLOs, per-request attainment (goodput) and N* (seed 002): the highest load level at which the
 * SLO holds at that level and at every lower one.
 * @module
 */

/** The SLO of a load run; absent targets are not checked. */
export interface Slo {
  ttftP95Ms?: number | null;
  tpotP95Ms?: number | null;
  /** vLLM's goodput also knows end-to-end latency. */
  e2eP95Ms?: number | null;
  /** Failed requests a level may have and still pass (default 0). */
  maxFail?: number | null;
}

/** An SLO as records store it (`workload.slo`, the capacity record's `data.slo`): snake_case, as every record key. */
export interface SloRecord {
  ttft_p95_ms: number | null;
  tpot_p95_ms: number | null;
  e2e_p95_ms: number | null;
  max_fail: number | null;
}

/** The record form of an SLO (record schema 2 on; schema 1 wrote the camelCase names). */
export function sloRecord(slo: Slo): SloRecord {
  return { ttft_p95_ms: slo.ttftP95Ms ?? null, tpot_p95_ms: slo.tpotP95Ms ?? null, e2e_p95_ms: slo.e2eP95Ms ?? null, max_fail: slo.maxFail ?? null };
}

/**
 * Reads an SLO from a record: the snake_case keys, else the camelCase ones records before schema 2
 * wrote (`ttftP95Ms`, …), so a record already on disk reads the same. Null when the value is not an
 * object with at least one of those keys.
 */
export function sloFromRecord(v: unknown): Slo | null {
  if (!v || typeof v !== "object" || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const num = (snake: string, camel: string): number | null | undefined => {
    const x = snake in o ? o[snake] : o[camel];
    return typeof x === "number" && Number.isFinite(x) ? x : x === null ? null : undefined;
  };
  const slo: Slo = {
    ttftP95Ms: num("ttft_p95_ms", "ttftP95Ms"), tpotP95Ms: num("tpot_p95_ms", "tpotP95Ms"),
    e2eP95Ms: num("e2e_p95_ms", "e2eP95Ms"), maxFail: num("max_fail", "maxFail"),
  };
  return Object.values(slo).some((x) => x !== undefined) ? Object.fromEntries(Object.entries(slo).map(([k, x]) => [k, x ?? null])) as Slo : null;
}

/** The per-request fields the SLO reads. */
export interface SloRow {
  ok: boolean;
  ttft_ms: number | null;
  tpot_ms: number | null;
  e2e_ms: number | null;
}

/** Whether any latency target is set. */
export function hasSlo(slo: Slo): boolean {
  return slo.ttftP95Ms != null || slo.tpotP95Ms != null || slo.e2eP95Ms != null;
}

/**
 * Per-request SLO attainment, for goodput: it succeeded and its TTFT (and e2e) are inside their
 * targets; a TPOT target is checked where the request has a TPOT (one-token answers have none).
 */
export function meetsSlo(row: SloRow, slo: Slo): boolean {
  if (!row.ok) return false;
  if (slo.ttftP95Ms != null && (row.ttft_ms === null || row.ttft_ms > slo.ttftP95Ms)) return false;
  if (slo.tpotP95Ms != null && row.tpot_ms !== null && row.tpot_ms > slo.tpotP95Ms) return false;
  if (slo.e2eP95Ms != null && (row.e2e_ms === null || row.e2e_ms > slo.e2eP95Ms)) return false;
  return true;
}

/** One SLO check of a level. */
export interface SloCheck {
  value: number | null;
  target: number;
  ok: boolean;
}

/**
 * The level's SLO checks: each p95 against its target, and (only when some target is given) the
 * failed requests against `maxFail`, with at least one success required.
 */
export function sloChecks(
  s: { ttftP95: number | null; tpotP95: number | null; e2eP95: number | null; nFailed: number; nOk: number },
  slo: Slo,
): Record<string, SloCheck> {
  const checks: Record<string, SloCheck> = {};
  const one = (key: string, v: number | null, target: number | null | undefined) => {
    if (target != null) checks[key] = { value: v, target, ok: v !== null && v <= target };
  };
  one("ttft_p95_ms", s.ttftP95, slo.ttftP95Ms);
  one("tpot_p95_ms", s.tpotP95, slo.tpotP95Ms);
  one("e2e_p95_ms", s.e2eP95, slo.e2eP95Ms);
  if (Object.keys(checks).length) {
    const mf = slo.maxFail ?? 0;
    checks.failed = { value: s.nFailed, target: mf, ok: s.nFailed <= mf && s.nOk > 0 };
  }
  return checks;
}

/**
 * N*: the highest level before the first that misses the SLO, levels taken in ascending order. A
 * level that was not judged (interrupted, nothing sent) ends the search there: N* is then the last
 * level that held, as a lower bound (`lowerBound`), never a failure that was not measured. So does
 * a level that held the SLO but did not achieve its rate (`notAchieved`: the SLO held at a lower
 * load than the level stands for); one that failed it fails as any other, its shortfall named. A
 * grid whose every level held gives its top level, also a lower bound: N* may be above the grid.
 */
export function nStar(
  levels: readonly { level: number; sloOk: boolean | null; checks: Record<string, SloCheck>; notJudged?: string | null; notAchieved?: string | null }[],
): { value: number | null; reason: string; lowerBound: boolean } {
  if (!levels.length) return { value: null, reason: "no load levels ran", lowerBound: false };
  if (levels.every((l) => l.sloOk === null && Object.keys(l.checks).length === 0)) return { value: null, reason: "no SLO given", lowerBound: false };
  let best: number | null = null;
  for (const lv of [...levels].sort((a, b) => a.level - b.level)) {
    if (lv.notJudged) {
      return best === null
        ? { value: null, reason: `level ${lv.level} was not judged (${lv.notJudged}) and no level below it held the SLO`, lowerBound: false }
        : { value: best, reason: `level ${lv.level} was not judged (${lv.notJudged}): N* is at least ${best}`, lowerBound: true };
    }
    if (lv.sloOk === null) return { value: null, reason: "no SLO given", lowerBound: false };
    if (!lv.sloOk) {
      const failed = Object.entries(lv.checks).filter(([, c]) => !c.ok).map(([k]) => k);
      const short = lv.notAchieved ? `; that level was not achieved: ${lv.notAchieved}` : "";
      return { value: best, reason: `SLO first fails at level ${lv.level} (${failed.join(", ")})${short}`, lowerBound: false };
    }
    // The SLO held at a load lower than the level stands for: no claim at it, nor above it.
    if (lv.notAchieved) {
      return best === null
        ? { value: null, reason: `level ${lv.level} was not achieved, ${lv.notAchieved}; no level below it held the SLO`, lowerBound: false }
        : { value: best, reason: `level ${lv.level} was not achieved, ${lv.notAchieved}; N* is at least ${best}`, lowerBound: true };
    }
    best = lv.level;
  }
  // Held everywhere: N* is at least the top level, a lower bound (the summary says ">=", as rounds' "≥").
  return { value: best, reason: "SLO holds at every level tried: the true N* may be above the grid", lowerBound: best !== null };
}

/** $ per 1M output tokens = the GPUs' hourly price / tokens produced per hour × 1e6 (null without a price or throughput). */
export function usdPer1mTokens(tokPerS: number | null, priceUsdPerGpuHour: number | null, gpuCount = 1): number | null {
  if (!tokPerS || !priceUsdPerGpuHour || tokPerS <= 0) return null;
  return priceUsdPerGpuHour * Math.max(1, gpuCount) / (tokPerS * 3600) * 1e6;
}

/** How the cost figure is computed, for the record's `cost_formula`. */
export const COST_FORMULA = "usd_per_1m_output_tokens = gpu_price_usd_h × gpu_count / (output_tok_s × 3600) × 1e6";
