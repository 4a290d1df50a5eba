/**
 * The series ik serves while it runs (`--metrics-listen`) and pushes (`--prometheus-remote-write`):
 * requests scheduled, sent, in flight, ok and failed by kind; output tokens; TTFT, TPOT, ITL and
 * e2e as histograms (buckets in ./buckets.ts); send lag; the event loop's lag; the server's own
 * gauges as ik scrapes them; the current level's target rate. Every series carries `run_id`,
 * `label`, `engine_kind` and `shard` (constant for a run) and, where it is per level, `level`. A
 * request is counted from its journaled row, so the counters at a level's end equal its rows.
 * @module
 */
import { LATENCY_BUCKETS_SECONDS, TOKEN_GAP_BUCKETS_SECONDS } from "./buckets.ts";
import { type Counter, type Gauge, type Histogram, MetricsRegistry } from "./registry.ts";
import type { CounterChild, GaugeChild, HistogramChild } from "./series.ts";

/** Every metric name ik emits (the Grafana dashboard may query only these; a test checks it). */
export const IK_SERIES = [
  "ik_requests_scheduled_total", "ik_requests_sent_total", "ik_requests_in_flight", "ik_requests_ok_total", "ik_requests_failed_total",
  "ik_output_tokens_total", "ik_ttft_seconds", "ik_tpot_seconds", "ik_itl_seconds", "ik_e2e_seconds", "ik_send_lag_seconds",
  "ik_event_loop_lag_seconds", "ik_level_target_rate_rps", "ik_server_requests_running", "ik_server_requests_waiting", "ik_server_kv_cache_usage_ratio",
  "ik_run_info", "ik_gpu_power_watts",
] as const;

/** The row fields read here (a request row, as journaled). */
export interface LiveRow {
  ok: boolean;
  error_kind?: string | null;
  n_tokens?: number | null;
  ttft_ms?: number | null;
  tpot_ms?: number | null;
  e2e_ms?: number | null;
  send_lag_ms?: number | null;
}

/** One level's bound series. */
interface LevelChildren {
  scheduled: CounterChild;
  sent: CounterChild;
  inFlight: GaugeChild;
  ok: CounterChild;
  tokens: CounterChild;
  ttft: HistogramChild;
  tpot: HistogramChild;
  itl: HistogramChild;
  e2e: HistogramChild;
  sendLag: HistogramChild;
  target: GaugeChild;
}

/** A run's constant labels. */
export interface RunLabels {
  run_id: string;
  label: string;
  engine_kind: string;
  /** `K/S` for a shard, `0/1` otherwise. */
  shard: string;
  /** The endpoint as its HMAC tag (never the URL). */
  endpoint: string;
}

/** The registry and ik's series over it. */
export class IkSeries {
  readonly registry: MetricsRegistry;
  readonly #scheduled: Counter;
  readonly #sent: Counter;
  readonly #inFlight: Gauge;
  readonly #ok: Counter;
  readonly #failed: Counter;
  readonly #tokens: Counter;
  readonly #ttft: Histogram;
  readonly #tpot: Histogram;
  readonly #itl: Histogram;
  readonly #e2e: Histogram;
  readonly #sendLag: Histogram;
  readonly #loopLag: Gauge;
  readonly #target: Gauge;
  readonly #running: Gauge;
  readonly #waiting: Gauge;
  readonly #kv: Gauge;
  readonly #power: Gauge;
  readonly #levels = new Map<string, LevelChildren>();

  constructor(labels: RunLabels, mode: string) {
    const { endpoint, ...rest } = labels;
    this.registry = new MetricsRegistry({ constLabels: { ...rest } });
    const r = this.registry;
    const lv = ["level"];
    r.gauge({ name: "ik_run_info", help: "1 while the run goes; its mode and the endpoint's HMAC tag (never the URL)", labelNames: ["mode", "endpoint"] }).set({ mode, endpoint }, 1);
    this.#scheduled = r.counter({ name: "ik_requests_scheduled_total", help: "Requests the level's schedule holds (counted when the level starts)", labelNames: lv });
    this.#sent = r.counter({ name: "ik_requests_sent_total", help: "Requests handed to the HTTP client", labelNames: lv });
    this.#inFlight = r.gauge({ name: "ik_requests_in_flight", help: "Requests sent and not yet ended", labelNames: lv });
    this.#ok = r.counter({ name: "ik_requests_ok_total", help: "Requests that ended ok (journaled rows with ok: true)", labelNames: lv });
    this.#failed = r.counter({ name: "ik_requests_failed_total", help: "Requests that failed, by failure kind (journaled rows)", labelNames: ["level", "kind"] });
    this.#tokens = r.counter({ name: "ik_output_tokens_total", help: "Output tokens of ok requests (the rows' n_tokens)", labelNames: lv });
    this.#ttft = r.histogram({ name: "ik_ttft_seconds", help: "Time to first token of ok requests, client clock", labelNames: lv, buckets: LATENCY_BUCKETS_SECONDS });
    this.#tpot = r.histogram({ name: "ik_tpot_seconds", help: "Time per output token after the first, per ok request", labelNames: lv, buckets: TOKEN_GAP_BUCKETS_SECONDS });
    this.#itl = r.histogram({ name: "ik_itl_seconds", help: "Gaps between consecutive token events", labelNames: lv, buckets: TOKEN_GAP_BUCKETS_SECONDS });
    this.#e2e = r.histogram({ name: "ik_e2e_seconds", help: "End-to-end latency of ok requests", labelNames: lv, buckets: LATENCY_BUCKETS_SECONDS });
    this.#sendLag = r.histogram({ name: "ik_send_lag_seconds", help: "How late each open-loop request was sent after its scheduled time", labelNames: lv, buckets: TOKEN_GAP_BUCKETS_SECONDS });
    this.#loopLag = r.gauge({ name: "ik_event_loop_lag_seconds", help: "The client's event-loop lag, most recent sample", labelNames: [] });
    this.#target = r.gauge({ name: "ik_level_target_rate_rps", help: "The current level's target arrival rate (0 between levels)", labelNames: lv });
    this.#running = r.gauge({ name: "ik_server_requests_running", help: "The server's own running gauge, as ik scraped it", labelNames: [], unsetUntilKnown: true });
    this.#waiting = r.gauge({ name: "ik_server_requests_waiting", help: "The server's own waiting gauge, as ik scraped it", labelNames: [], unsetUntilKnown: true });
    this.#kv = r.gauge({ name: "ik_server_kv_cache_usage_ratio", help: "The server's KV-cache usage (0..1), as ik scraped it", labelNames: [], unsetUntilKnown: true });
    this.#power = r.gauge({ name: "ik_gpu_power_watts", help: "The GPUs' power draw, most recent sample (nvidia-smi or DCGM)", labelNames: ["gpu", "uuid"] });
  }

  /** The bound children of one level (label lookups once per level, not per request or token). */
  #of(level: string): LevelChildren {
    let c = this.#levels.get(level);
    if (!c) {
      const l = { level };
      c = {
        scheduled: this.#scheduled.labels(l), sent: this.#sent.labels(l), inFlight: this.#inFlight.labels(l), ok: this.#ok.labels(l),
        tokens: this.#tokens.labels(l), ttft: this.#ttft.labels(l), tpot: this.#tpot.labels(l), itl: this.#itl.labels(l), e2e: this.#e2e.labels(l),
        sendLag: this.#sendLag.labels(l), target: this.#target.labels(l),
      };
      this.#levels.set(level, c);
    }
    return c;
  }

  /** A level starts: its target rate (null for closed loop) and the requests its schedule holds (null if unbounded). */
  levelStart(level: string, targetRps: number | null, scheduled: number | null): void {
    const c = this.#of(level);
    c.target.set(targetRps ?? 0);
    if (scheduled !== null) c.scheduled.inc(scheduled);
  }

  /** A level ended: its target rate goes to 0. */
  levelEnd(level: string): void {
    this.#of(level).target.set(0);
  }

  /** One request sent. */
  sent(level: string): void {
    const c = this.#of(level);
    c.sent.inc(1);
    c.inFlight.inc(1);
  }

  /** One request ended, from its journaled row and its token gaps (ms). */
  ended(level: string, row: LiveRow, itlMs?: ArrayLike<number> | null): void {
    const c = this.#of(level);
    c.inFlight.dec(1);
    if (row.send_lag_ms !== null && row.send_lag_ms !== undefined) c.sendLag.observe(Math.max(0, row.send_lag_ms) / 1000);
    if (!row.ok) {
      this.#failed.inc({ level, kind: row.error_kind ?? "unknown" }, 1);
      return;
    }
    c.ok.inc(1);
    if (typeof row.n_tokens === "number") c.tokens.inc(row.n_tokens);
    if (typeof row.ttft_ms === "number") c.ttft.observe(row.ttft_ms / 1000);
    if (typeof row.tpot_ms === "number") c.tpot.observe(row.tpot_ms / 1000);
    if (typeof row.e2e_ms === "number") c.e2e.observe(row.e2e_ms / 1000);
    if (itlMs) for (let i = 0; i < itlMs.length; i++) c.itl.observe(itlMs[i] / 1000);
  }

  /** The event loop's lag, ms. */
  loopLag(ms: number): void {
    this.#loopLag.set({}, ms / 1000);
  }

  /** The server's own gauges (any may be unknown). */
  server(g: { running?: number | null; waiting?: number | null; kvCacheUsage?: number | null }): void {
    if (typeof g.running === "number") this.#running.set({}, g.running);
    if (typeof g.waiting === "number") this.#waiting.set({}, g.waiting);
    if (typeof g.kvCacheUsage === "number") this.#kv.set({}, g.kvCacheUsage);
  }

  /** A GPU's power draw, W, by its index and UUID (GPU 0 of two hosts are two series). */
  gpuPower(gpu: string, uuid: string, watts: number): void {
    this.#power.set({ gpu, uuid }, watts);
  }
}
