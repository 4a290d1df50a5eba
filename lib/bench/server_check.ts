/**
 * Before measuring: GET /v1/models. An unreachable server is exit 69 (nothing to measure); a
 * model that is not listed is a limitation that lists the served models (the seed's choice: the
 * numbers may still be right for an alias); the context length is recorded.
 * @module
 */
import { IkError, unavailableError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { type Endpoint, listModels } from "../client/mod.ts";
import { redactUrl } from "../evidence/mod.ts";

/** What the check found. */
export interface ServerInfo {
  models_status: number;
  served_models?: string[];
  max_model_len?: number;
}

/**
 * Checks the server and the model.
 * @throws IkError (69) when the server does not answer; (130) when `signal` aborted meanwhile
 */
export async function checkServer(
  ep: Endpoint,
  model: string,
  opts: { apiKey?: string; fetch?: (input: string, init: RequestInit) => Promise<Response>; signal?: AbortSignal } = {},
): Promise<{ limitations: string[]; info: ServerInfo }> {
  const ans = await listModels(ep, { apiKey: opts.apiKey, fetch: opts.fetch, signal: opts.signal });
  if (opts.signal?.aborted) {
    // Ctrl-C while the server was being asked: an interrupt (130), not an unreachable server (69).
    throw new IkError(ExitCode.INTERRUPTED, "bench serve", "interrupted before anything was measured", "nothing was written");
  }
  if (ans.status === 0) {
    throw unavailableError("--base-url", `server at ${redactUrl(ep.origin)} not reachable (${ans.error ?? "no answer"})`,
      "start it and wait for /v1/models to answer");
  }
  const info: ServerInfo = { models_status: ans.status };
  const limitations: string[] = [];
  if (ans.ok) {
    const ids = ans.models.map((m) => m.id);
    info.served_models = ids.slice(0, 20);
    const m = ans.models.find((x) => x.id === model);
    if (m?.maxModelLen) info.max_model_len = m.maxModelLen;
    if (ids.length && !m) limitations.push(`model '${model}' is not in the server's /v1/models list [${ids.slice(0, 5).join(", ")}]`);
  } else {
    limitations.push(`/v1/models answered HTTP ${ans.status}: model name not checked`);
  }
  return { limitations, info };
}
