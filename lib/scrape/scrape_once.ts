/**
 * One bounded scrape of an engine's Prometheus endpoint: a GET with a short timeout and a capped
 * body, parsed into the four gauges of engine_gauges.ts. It never throws. A 404/501/401/403, a
 * redirect, a JSON answer or a body that is not Prometheus text is "not available" with the reason
 * and `permanent: true` (asking again will not help); a timeout, a refused connection or a 5xx is
 * a transient failure. For trtllm it never requests `/metrics` (a JSON queue drained on each read),
 * even when `path` says so.
 * @module
 */
import { type Endpoint, rootUrl } from "../client/endpoint.ts";
import { readCappedText } from "../client/read_capped.ts";
import type { EngineKind } from "../engines/profiles.ts";
import {
  type GaugeName,
  gaugesFromSamples,
  type GaugeSource,
  type GaugeValues,
  metricsSpec,
} from "./engine_gauges.ts";
import { MAX_PROM_TEXT_CHARS, parsePrometheusText } from "./prometheus_text.ts";

/** Options for {@link scrapeOnce}. */
export interface ScrapeOptions {
  /** The fetch to use; default the global fetch. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Aborting it ends the scrape at once (result: not ok, "aborted"). */
  signal?: AbortSignal;
  /** Limit for the whole scrape, body included, in ms (default {@link SCRAPE_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Bearer token (sent to this server only; redirects are not followed). */
  apiKey?: string;
  /** Path override (a manifest's `metrics_path`); default the engine's path. */
  path?: string;
  /** Clock in ms (default performance.now). */
  now?: () => number;
  /** Most body bytes read (default 8 MiB); a longer body is parsed up to the cap. */
  maxBytes?: number;
}

/** What one scrape found. */
export interface ScrapeResult {
  /** True when a Prometheus text came back and parsed (gauges may still be missing). */
  ok: boolean;
  /** The clock (`now`) when the answer was complete, ms. */
  tMs: number;
  /** How long the scrape took, ms. */
  durationMs: number;
  /** The path requested (or refused). */
  path: string;
  /** HTTP status; 0 when no answer came (or nothing was requested). */
  status: number;
  /** The gauges; all null when not ok. */
  values: GaugeValues;
  /** Gauges the server does not export (all of them when not ok). */
  missing: GaugeName[];
  /** For each gauge found: the metric name, label sets combined and how. */
  sources: Partial<Record<GaugeName, GaugeSource>>;
  /** The preemption counter per label set (absent or null when not exported or not ok). */
  preemptionSeries?: Map<string, number> | null;
  /** Why not ok, e.g. `not available: HTTP 501 (llama.cpp started without --metrics)`. */
  error?: string;
  /** True when asking again will not help (not available); false for transient failures. */
  permanent: boolean;
  /** Lines of the answer that did not parse. */
  badLines: number;
  /** True when the body was over the byte cap and only its start was parsed. */
  truncated: boolean;
}

/** Default limit of one scrape, ms: short, so a slow server only costs a skipped sample. */
export const SCRAPE_TIMEOUT_MS = 1500;

const EMPTY: GaugeValues = { running: null, waiting: null, kv_cache_usage: null, preemptions_total: null };
const ALL_MISSING: GaugeName[] = ["running", "waiting", "kv_cache_usage", "preemptions_total"];

function cut(s: string, n = 200): string {
  return s.length > n ? s.slice(0, n) + "…" : s;
}

/** Whether a path is trtllm's drained JSON `/metrics` (ignoring a trailing slash and a query). */
export function isDrainedPath(path: string): boolean {
  return /^\/*metrics\/*(\?.*)?$/i.test(path.trim());
}


/**
 * Scrapes `kind`'s metrics endpoint on `ep` once. Never throws.
 *
 * @example
 * const r = await scrapeOnce(ep, "vllm", { timeoutMs: 1000 });
 * if (r.ok) console.log(r.values.running, r.values.waiting); else console.log(r.error);
 */
export async function scrapeOnce(
  ep: Endpoint,
  kind: EngineKind,
  opts: ScrapeOptions = {},
): Promise<ScrapeResult> {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const spec = metricsSpec(kind);
  const path = opts.path ?? spec.path;
  const result = (r: Partial<ScrapeResult>): ScrapeResult => {
    const t = now();
    return {
      ok: false,
      tMs: t,
      durationMs: t - t0,
      path,
      status: 0,
      values: { ...EMPTY },
      missing: [...ALL_MISSING],
      sources: {},
      permanent: false,
      badLines: 0,
      truncated: false,
      ...r,
    };
  };
  if (kind === "trtllm" && isDrainedPath(path)) {
    return result({
      permanent: true,
      error: "not available: refusing GET /metrics on TensorRT-LLM (a JSON queue drained on each read); " +
        "its Prometheus text is /prometheus/metrics",
    });
  }
  const timeoutMs = Math.max(1, opts.timeoutMs ?? SCRAPE_TIMEOUT_MS);
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error("timeout"));
  }, timeoutMs);
  const onAbort = () => ac.abort(new Error("aborted"));
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const headers: Record<string, string> = { accept: "text/plain;version=0.0.4;q=1, */*;q=0.1" };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  try {
    if (ac.signal.aborted) return result({ error: "aborted" });
    let url: string;
    try {
      url = rootUrl(ep, path);
    } catch (e) {
      return result({ permanent: true, error: `not available: bad metrics path: ${cut(String(e))}` });
    }
    const res = await (opts.fetch ?? fetch)(url, {
      method: "GET",
      headers,
      signal: ac.signal,
      redirect: "manual",
    });
    const status = res.status;
    if (status < 200 || status > 299) {
      await res.body?.cancel().catch(() => {});
      const hint = spec.hints[status];
      if (hint) return result({ status, permanent: true, error: `not available: HTTP ${status} (${hint})` });
      if (status >= 300 && status < 400) {
        return result({
          status,
          permanent: true,
          error: `not available: HTTP ${status} redirect (not followed)`,
        });
      }
      if (status >= 400 && status < 500) {
        return result({ status, permanent: true, error: `not available: HTTP ${status} on ${path}` });
      }
      return result({ status, error: `HTTP ${status} on ${path}` });
    }
    const body = await readCappedText(res, opts.maxBytes ?? MAX_PROM_TEXT_CHARS);
    const type = (res.headers.get("content-type") ?? "").toLowerCase();
    const head = body.text.trimStart()[0];
    if (type.includes("json") || head === "[" || head === "{") {
      return result({
        status,
        permanent: true,
        error: `not available: ${path} answered JSON, not Prometheus text` +
          (kind === "generic" ? " (TensorRT-LLM's drained iteration stats? it is not read again)" : ""),
      });
    }
    // A body cut at the byte cap ends mid-line: keep whole lines only.
    const text = body.truncated ? body.text.slice(0, Math.max(0, body.text.lastIndexOf("\n"))) : body.text;
    const parsed = parsePrometheusText(text);
    if (parsed.samples.length === 0) {
      const blank = body.text.trim() === "";
      return result({
        status,
        permanent: !blank,
        badLines: parsed.badLines,
        error: blank
          ? `${path} answered an empty body`
          : `not available: ${path} is not Prometheus text (${parsed.badLines} bad lines, first: ${
            cut(parsed.firstBad ?? "", 80)
          })`,
      });
    }
    const reading = gaugesFromSamples(parsed.samples, kind);
    return result({
      ok: true,
      status,
      values: reading.values,
      missing: reading.missing,
      sources: reading.sources,
      preemptionSeries: reading.preemptionSeries,
      badLines: parsed.badLines,
      truncated: body.truncated || parsed.truncated,
    });
  } catch (e) {
    if (timedOut) return result({ error: `timeout after ${timeoutMs} ms on ${path}` });
    if (ac.signal.aborted) return result({ error: "aborted" });
    return result({ error: `connection failed: ${cut(e instanceof Error ? e.message : String(e))}` });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
