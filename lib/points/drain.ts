/**
 * The fleet's outstanding work for `ik bench points` (seed 004): from the router's `/state`
 * (`{admission, resident}`) or from Prometheus gauges, summing every known running and waiting
 * gauge found (CONTRACTS.md names for vLLM, SGLang, llama.cpp and TensorRT-LLM, every label set),
 * so no engine-kind flag is needed. Plus readiness and the served models, and the waits.
 * @module
 */
import { type Endpoint, listModels, rootUrl } from "../client/mod.ts";
import { readCappedText } from "../client/read_capped.ts";
import { ENGINE_METRICS } from "../scrape/mod.ts";
import { parsePrometheusText } from "../scrape/prometheus_text.ts";

/** One reading of the outstanding work. */
export interface DrainSnapshot {
  /** Whether the source answered with usable numbers. */
  ok: boolean;
  /** Work waiting for admission (queued). */
  admission: number | null;
  /** Work admitted and running. */
  resident: number | null;
  /** Wall clock of the reading, ISO. */
  at: string;
  /** Why not ok, or a note (e.g. which gauges were summed). */
  note: string | null;
  /** The raw `/state` answer (state source), for the record. */
  raw?: unknown;
}

/** Where the outstanding work is read. */
export interface DrainSource {
  kind: "state" | "metrics";
  path: string;
}

const RUNNING = new Set(Object.values(ENGINE_METRICS).flatMap((s) => s.names.running));
const WAITING = new Set(Object.values(ENGINE_METRICS).flatMap((s) => s.names.waiting));

async function getText(ep: Endpoint, path: string, apiKey: string | undefined, timeoutMs: number): Promise<{ status: number; text: string; type: string } | { error: string }> {
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), timeoutMs);
  try {
    const headers: Record<string, string> = {};
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const res = await fetch(rootUrl(ep, path), { headers, signal: ac.signal, redirect: "manual" });
    const body = await readCappedText(res, 8 * 1024 * 1024);
    return { status: res.status, text: body.text, type: res.headers.get("content-type") ?? "" };
  } catch (e) {
    return { error: ac.signal.aborted ? `no answer within ${timeoutMs} ms` : `cannot connect (${String((e as Error)?.message ?? e).slice(0, 80)})` };
  } finally {
    clearTimeout(t);
  }
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);

/** Reads the outstanding work once. Never throws. */
export async function readDrain(ep: Endpoint, src: DrainSource, opts: { apiKey?: string; timeoutMs?: number } = {}): Promise<DrainSnapshot> {
  const at = new Date().toISOString();
  const r = await getText(ep, src.path, opts.apiKey, opts.timeoutMs ?? 3000);
  if ("error" in r) return { ok: false, admission: null, resident: null, at, note: `${src.path}: ${r.error}` };
  if (r.status !== 200) return { ok: false, admission: null, resident: null, at, note: `${src.path}: HTTP ${r.status}` };
  if (src.kind === "state") {
    let v: unknown;
    try {
      v = JSON.parse(r.text);
    } catch {
      return { ok: false, admission: null, resident: null, at, note: `${src.path} did not answer JSON` };
    }
    const o = (v && typeof v === "object" ? v : {}) as Record<string, unknown>;
    const admission = num(o.admission), resident = num(o.resident);
    if (admission === null || resident === null) return { ok: false, admission, resident, at, note: `${src.path} has no numeric admission and resident`, raw: v };
    return { ok: true, admission, resident, at, note: null, raw: v };
  }
  const head = r.text.trimStart()[0];
  if (head === "{" || head === "[") return { ok: false, admission: null, resident: null, at, note: `${src.path} answered JSON, not Prometheus text (TensorRT-LLM's is /prometheus/metrics)` };
  const parsed = parsePrometheusText(r.text);
  let running = 0, waiting = 0;
  const found = new Set<string>();
  for (const s of parsed.samples) {
    if (RUNNING.has(s.name)) {
      running += s.value;
      found.add(s.name);
    } else if (WAITING.has(s.name)) {
      waiting += s.value;
      found.add(s.name);
    }
  }
  if (!found.size) return { ok: false, admission: null, resident: null, at, note: `${src.path} has none of the known running/waiting gauges` };
  return { ok: true, admission: waiting, resident: running, at, note: `summed ${[...found].sort().join(", ")}` };
}

/** How a drain wait ended. */
export interface DrainWait {
  /** True when admission and resident were both 0. */
  drained: boolean;
  /** Seconds waited. */
  seconds: number;
  /** Readings taken. */
  polls: number;
  /** The last reading. */
  last: DrainSnapshot | null;
}

/** Polls until admission = resident = 0, or `timeoutMs`. */
export async function waitDrained(ep: Endpoint, src: DrainSource, o: { timeoutMs: number; pollMs: number; apiKey?: string; signal?: AbortSignal }): Promise<DrainWait> {
  const t0 = performance.now();
  let polls = 0;
  let last: DrainSnapshot | null = null;
  while (true) {
    last = await readDrain(ep, src, { apiKey: o.apiKey });
    polls++;
    const seconds = Math.round(performance.now() - t0) / 1000;
    if (last.ok && last.admission === 0 && last.resident === 0) return { drained: true, seconds, polls, last };
    if (performance.now() - t0 >= o.timeoutMs || o.signal?.aborted) return { drained: false, seconds, polls, last };
    await new Promise((r) => setTimeout(r, Math.min(o.pollMs, Math.max(1, o.timeoutMs - (performance.now() - t0)))));
  }
}

/** Readiness: GET `path` answers 2xx. */
export async function checkReady(ep: Endpoint, path: string, apiKey?: string): Promise<{ ready: boolean; status: number; note: string | null; at: string }> {
  const at = new Date().toISOString();
  const r = await getText(ep, path, apiKey, 5000);
  if ("error" in r) return { ready: false, status: 0, note: r.error, at };
  return { ready: r.status >= 200 && r.status < 300, status: r.status, note: r.status >= 200 && r.status < 300 ? null : `HTTP ${r.status}`, at };
}

/** Whether /v1/models lists `model`, and what it lists. */
export async function checkModel(ep: Endpoint, model: string, apiKey?: string): Promise<{ ok: boolean; served: string[]; note: string | null }> {
  const ans = await listModels(ep, { apiKey, timeoutMs: 10_000 });
  if (!ans.ok) return { ok: false, served: [], note: ans.status === 0 ? `unreachable (${ans.error ?? "no answer"})` : `/v1/models answered HTTP ${ans.status}` };
  const served = ans.models.map((m) => m.id);
  return { ok: served.includes(model), served: served.slice(0, 20), note: served.includes(model) ? null : `'${model}' is not served; /v1/models lists [${served.slice(0, 10).join(", ")}]` };
}
