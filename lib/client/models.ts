/**
 * `GET /v1/models`: is the server up, which models does it serve, and (vLLM, SGLang) their context
 * length. A failure is a value, not an exception, so callers choose between exit 69 and a note.
 * @module
 */
import { type Endpoint, v1Url } from "./endpoint.ts";
import { readCappedText } from "./read_capped.ts";
import { formatHttpError, parseErrorBody } from "./error_body.ts";
import type { FailureKind } from "./types.ts";
import { networkMessage } from "./network_errors.ts";

/** One served model. */
export interface ServedModel {
  /** The model name to put in requests. */
  id: string;
  /** Context length when the server reports it (`max_model_len`), else null. */
  maxModelLen: number | null;
  /** `owned_by` as the server wrote it (vllm, sglang, llamacpp, tensorrt_llm, system…), else null. */
  ownedBy: string | null;
  /** `root` (vLLM: the model path or HF name behind a --served-model-name), else null. */
  root?: string | null;
}

/** What `/v1/models` said. */
export interface ModelsAnswer {
  /** True for a 200 with a parsable list. */
  ok: boolean;
  /** HTTP status, 0 when the server could not be reached. */
  status: number;
  /** The served models (empty when not ok). */
  models: ServedModel[];
  /** Why it failed, or null. */
  error: string | null;
  /** Failure kind (network, timeout, http, protocol, aborted), or null. */
  errorKind: FailureKind | null;
}

/** Options for {@link listModels}. */
export interface ModelsOptions {
  /** The fetch to use; default the global fetch. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Aborting it ends the call as `aborted`. */
  signal?: AbortSignal;
  /** Bearer token, when the server needs one. */
  apiKey?: string;
  /** Limit for the whole exchange in ms (default 10 000). */
  timeoutMs?: number;
}

/** The most bytes of a `/v1/models` answer read (a list of thousands of models is well under it). */
export const MAX_MODELS_BODY_BYTES = 8 * 1024 * 1024;

/** Asks the server which models it serves. Never throws for a server problem. */
export async function listModels(ep: Endpoint, opts: ModelsOptions = {}): Promise<ModelsAnswer> {
  const doFetch = opts.fetch ?? fetch;
  const ac = new AbortController();
  let kind: FailureKind | null = null;
  const stopWith = (k: FailureKind) => {
    kind ??= k;
    ac.abort(new Error(k));
  };
  const timer = setTimeout(() => stopWith("timeout"), opts.timeoutMs ?? 10_000);
  const onAbort = () => stopWith("aborted");
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const headers: Record<string, string> = { accept: "application/json" };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  try {
    const res = await doFetch(v1Url(ep, "/models"), { method: "GET", headers, signal: ac.signal });
    const read = await readCappedText(res, MAX_MODELS_BODY_BYTES);
    const text = read.truncated ? null : read.text;
    if (text === null) {
      return {
        ok: false,
        status: res.status,
        models: [],
        error: `/v1/models answered more than ${MAX_MODELS_BODY_BYTES} bytes`,
        errorKind: "protocol",
      };
    }
    if (res.status !== 200) {
      return {
        ok: false,
        status: res.status,
        models: [],
        error: formatHttpError(res.status, parseErrorBody(text, res.status)),
        errorKind: "http",
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return {
        ok: false,
        status: 200,
        models: [],
        error: "/v1/models did not answer JSON",
        errorKind: "protocol",
      };
    }
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) {
      return {
        ok: false,
        status: 200,
        models: [],
        error: "/v1/models has no 'data' list",
        errorKind: "protocol",
      };
    }
    const models: ServedModel[] = [];
    for (const m of data) {
      if (m && typeof m === "object" && typeof (m as { id?: unknown }).id === "string") {
        const len = (m as { max_model_len?: unknown }).max_model_len;
        const owner = (m as { owned_by?: unknown }).owned_by;
        const root = (m as { root?: unknown }).root;
        models.push({
          id: (m as { id: string }).id,
          maxModelLen: typeof len === "number" && len > 0 ? len : null,
          ownedBy: typeof owner === "string" && owner !== "" ? owner : null,
          root: typeof root === "string" && root !== "" ? root : null,
        });
      }
    }
    return { ok: true, status: 200, models, error: null, errorKind: null };
  } catch (e) {
    const k: FailureKind = kind ?? "network";
    const msg = k === "network"
      ? networkMessage(e)
      : k === "timeout"
      ? "no answer in time"
      : "aborted";
    return { ok: false, status: 0, models: [], error: `/v1/models: ${msg}`, errorKind: k };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
