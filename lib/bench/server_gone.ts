/**
 * A load level whose requests failed on the network: is the server gone? A server that dies
 * during a level leaves rows that fail in an instant (connection refused or reset); judged as they
 * stand they read as "the SLO failed at this rate", a capacity claim about a server that was not
 * there. After such a level ik asks `GET /v1/models` once: if that cannot connect either, the
 * server went away, the level is not judged ("server unreachable"), the sweep stops there, and the
 * command exits 69 with the records kept. A server that still answers (one refusing connections
 * under load, a router in front) keeps its failures as measured.
 * @module
 */
import { CONNECT_FAILED } from "../client/network_errors.ts";
import { listModels } from "../client/models.ts";
import type { Endpoint } from "../client/endpoint.ts";
import { type IkError, unavailableError } from "../cli/errors.ts";

/** How long the after-level check waits for `/v1/models`, ms. */
export const GONE_CHECK_TIMEOUT_MS = 3000;

/** The `not_judged` word for a level during which the server went away. */
export const SERVER_UNREACHABLE = "server unreachable";

/** What the check needs of a finished level. */
export interface GoneLevel {
  name: string;
  sent: number;
  summary: { failures_by_kind: Record<string, number> };
}

/**
 * Checks, after a level with network failures, whether the server can still be reached.
 * @returns why the server is deemed gone (one sentence), or null (no network failures, or it answers)
 */
export async function serverGone(
  ep: Endpoint,
  level: GoneLevel,
  opts: { apiKey?: string; signal?: AbortSignal; fetch?: (input: string, init: RequestInit) => Promise<Response> } = {},
): Promise<string | null> {
  const lost = level.summary.failures_by_kind.network ?? 0;
  if (lost === 0 || opts.signal?.aborted) return null;
  const ans = await listModels(ep, { apiKey: opts.apiKey, signal: opts.signal, fetch: opts.fetch, timeoutMs: GONE_CHECK_TIMEOUT_MS });
  if (ans.status !== 0 || ans.errorKind !== "network" || !CONNECT_FAILED.test(ans.error ?? "")) return null;
  return `the server stopped answering during level ${level.name}: ${lost} of ${level.sent} request(s) failed on the network, ` +
    `and GET /v1/models after the level could not connect (${ans.error}); the level is not judged and the levels after it were not run`;
}

/** Marks a level during which the server went away: not judged, so N* stops below it (a lower bound). */
export function markServerGone(level: { not_judged: string | null; summary: { slo_ok: boolean | null } }): void {
  level.not_judged = SERVER_UNREACHABLE;
  level.summary.slo_ok = null;
}

/** The exit-69 error of a run that stopped because the server went away, naming the records that keep what was measured. */
export function goneError(why: string, measured: { evidence_id?: unknown }, capacity: { evidence_id?: unknown }): IkError {
  return unavailableError(
    "--base-url",
    `${why}; the records ${String(measured.evidence_id)} and ${String(capacity.evidence_id)} keep what was measured (marked incomplete)`,
    "start the server again and rerun the levels from the one not judged",
  );
}
