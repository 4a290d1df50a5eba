/**
 * The two sources of GPU telemetry, one poll each: nvidia-smi's CSV query through an injected
 * {@link ExecFn}, and a dcgm-exporter's Prometheus text through an injected fetch. Each answers a
 * {@link PollResult}: the parsed readings, or one line of error and whether retrying can help.
 * @module
 */
import type { ExecFn } from "./nvidia_smi.ts";
import { parseDcgmText, parseTelemetryCsv, TELEMETRY_QUERY, type TelemetryParse } from "./telemetry_parse.ts";
import type { TelemetryFetch, TelemetryTimers } from "./telemetry_types.ts";

/** One poll's outcome: the parsed readings, or an error (permanent: polling again cannot help). */
export type PollResult = { ok: true; parse: TelemetryParse } | {
  ok: false;
  error: string;
  permanent: boolean;
};

function firstLine(s: string, n = 120): string {
  const l = (s.split(/\r?\n/).find((x) => x.trim()) ?? "").trim();
  return l.length > n ? l.slice(0, n) + "…" : l;
}

/** Runs nvidia-smi's telemetry query once; never throws. */
export async function readSmi(exec: ExecFn, timeoutMs: number): Promise<PollResult> {
  let res: { code: number | null; stdout: string };
  try {
    res = await exec(TELEMETRY_QUERY, { timeoutMs });
  } catch (e) {
    return {
      ok: false,
      error: `nvidia-smi could not be run (${e instanceof Error ? e.message : String(e)})`,
      permanent: true,
    };
  }
  if (res.code === 127) {
    return { ok: false, error: "nvidia-smi could not be run (not found)", permanent: true };
  }
  if (res.code === null) {
    // Killed: at its time limit (a driver busy for a moment), or by someone else; the next poll may answer.
    return { ok: false, error: `nvidia-smi did not answer within ${timeoutMs} ms (killed)`, permanent: false };
  }
  if (res.code !== 0) {
    const said = firstLine(res.stdout ?? "");
    return {
      ok: false,
      error: `nvidia-smi exited ${res.code}${said ? `: ${said}` : ""}`,
      permanent: false,
    };
  }
  return { ok: true, parse: parseTelemetryCsv(res.stdout ?? "") };
}

/**
 * Scrapes a dcgm-exporter `/metrics` once, within timeoutMs, ending early when `stop` aborts; never
 * throws. The request's timeout runs on `timers` (ref'd, so a poll in flight ends within its limit).
 */
export async function readDcgm(
  src: { url: string; fetch?: TelemetryFetch },
  timeoutMs: number,
  stop: AbortSignal,
  timers: TelemetryTimers,
): Promise<PollResult> {
  const f: TelemetryFetch | undefined = src.fetch ?? (typeof fetch === "function" ? fetch : undefined);
  if (!f) return { ok: false, error: "no fetch available to read the DCGM exporter", permanent: true };
  const ac = new AbortController();
  const onStop = () => ac.abort();
  stop.addEventListener("abort", onStop, { once: true });
  const timer = timers.setTimeout(() => ac.abort(), timeoutMs);
  try {
    const res = await f(src.url, { signal: ac.signal });
    const body = await res.text();
    if (res.status === 404 || res.status === 401 || res.status === 403) {
      return { ok: false, error: `DCGM exporter ${src.url} answered HTTP ${res.status}`, permanent: true };
    }
    if (res.status < 200 || res.status >= 300) {
      return { ok: false, error: `DCGM exporter ${src.url} answered HTTP ${res.status}`, permanent: false };
    }
    const parse = parseDcgmText(body);
    if (parse.gpus.length === 0) {
      return { ok: false, error: `no DCGM_FI_DEV_* GPU metrics at ${src.url}`, permanent: true };
    }
    return { ok: true, parse };
  } catch (e) {
    const why = ac.signal.aborted && !stop.aborted
      ? `timed out after ${timeoutMs} ms`
      : e instanceof Error
      ? e.message
      : String(e);
    return { ok: false, error: `DCGM exporter ${src.url} could not be read (${why})`, permanent: false };
  } finally {
    timers.clearTimeout(timer);
    stop.removeEventListener("abort", onStop);
  }
}
