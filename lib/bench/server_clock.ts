/**
 * Where a single-mode request's time went, against a server that reports its own clock per request
 * (llama.cpp's `timings`: `prompt_ms`, `predicted_ms`, `predicted_n`). llama-server starts its
 * generation clock when the first token is decoded (`n_decoded == 1`) and stops it at the last, so
 * `predicted_ms` spans `predicted_n − 1` decode steps: the same span as ik's TPOT (first token
 * event to last, over the tokens after the first). Measured against a real llama-server here: the
 * client's first-to-last span matched `predicted_ms` within 0.1 ms at 64 and 128 tokens. Its own
 * `predicted_per_token_ms` divides by `predicted_n` and reads (n − 1)/n low beside a client TPOT.
 * @module
 */
import { nearestRank } from "../stats/mod.ts";

/** One request's llama.cpp timings as a row keeps them. */
interface ServerTimings {
  prompt_ms: number | null;
  predicted_ms: number | null;
  predicted_n: number | null;
}

/** The record's definition of `data.server_clock`. */
export const SERVER_CLOCK_DEFINITION = "client e2e_ms − (server prompt_ms + predicted_ms), and client ttft_ms − server prompt_ms, per request; " +
  "medians per bucket. The rest is network, queueing and the client; server TPOT = predicted_ms / (predicted_n − 1) " +
  "(llama.cpp's generation clock starts at the first decoded token, so it spans the same predicted_n − 1 steps as the client's TPOT; " +
  "requests of one token have none)";

/**
 * The server's TPOT for one request on the client's definition: `predicted_ms / (predicted_n − 1)`;
 * null without timings or with fewer than 2 tokens.
 */
export function serverTpotMs(t: ServerTimings): number | null {
  if (t.predicted_ms === null || t.predicted_n === null || t.predicted_n < 2) return null;
  return t.predicted_ms / (t.predicted_n - 1);
}

/**
 * Per bucket and for `all`: the client's time minus the server's own, and the server's TPOT beside
 * the client's (medians, nearest rank). Null when no ok row carries server timings.
 * @param rows single mode's request rows (`server_timings` where the server sent them)
 * @param buckets the set's buckets, in order
 */
export function serverClock(rows: readonly Record<string, unknown>[], buckets: readonly string[]): Record<string, unknown> | null {
  const withT = rows.filter((r) => r.ok && r.server_timings && typeof r.e2e_ms === "number");
  if (!withT.length) return null;
  const out: Record<string, unknown> = { definition: SERVER_CLOCK_DEFINITION };
  const st = (r: Record<string, unknown>) => r.server_timings as ServerTimings;
  for (const subject of [...buckets, "all"]) {
    const sel = withT.filter((r) => subject === "all" || r.bucket === subject);
    if (!sel.length) continue;
    const e2eGap = sel.filter((r) => st(r).prompt_ms !== null && st(r).predicted_ms !== null)
      .map((r) => (r.e2e_ms as number) - (st(r).prompt_ms as number) - (st(r).predicted_ms as number));
    const ttftGap = sel.filter((r) => st(r).prompt_ms !== null && typeof r.ttft_ms === "number")
      .map((r) => (r.ttft_ms as number) - (st(r).prompt_ms as number));
    const tpot = sel.map((r) => serverTpotMs(st(r))).filter((v): v is number => v !== null);
    out[subject] = {
      n: sel.length,
      client_minus_server_e2e_ms_median: nearestRank(e2eGap, 50),
      client_minus_server_ttft_ms_median: nearestRank(ttftGap, 50),
      server_tpot_ms_median: nearestRank(tpot, 50),
      client_tpot_ms_median: nearestRank(sel.map((r) => r.tpot_ms).filter((v): v is number => typeof v === "number"), 50),
    };
  }
  return out;
}
