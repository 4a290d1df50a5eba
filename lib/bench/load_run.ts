/**
 * A load run's settings (`bench serve --mode load` and `--mode trace`, a shard's and a merge's
 * too): the type the runner, the record builders and the sharded runner share, in its own file so
 * the runner and the records do not import each other for it.
 * @module
 */
import type { MemoryReading } from "../executors/client_memory.ts";
import type { Slo } from "../metrics/mod.ts";
import type { Prompt, PromptSet } from "../prompts/mod.ts";
import type { TraceSchedule } from "../schedule/trace_schedule.ts";
import type { LevelProgress } from "./load_level.ts";
import type { GpuTelemetrySampler } from "../gpu/mod.ts";
import type { LiveRun } from "../live_metrics/live_run.ts";
import type { Runner } from "./runner.ts";
import type { ServerInfo } from "./server_check.ts";

/** A load run's settings. */
export interface LoadRun {
  runner: Runner;
  set: PromptSet;
  prompts: readonly Prompt[];
  label: string;
  seed: number;
  storeRoot: string;
  runDir: string | null;
  levelKind: "rate" | "concurrency";
  grid: number[];
  closedLoop: boolean;
  /** `--rates auto` / `--concurrency auto`: the levels are searched for (grid is then what was measured). */
  auto?: { precision: number; maxLevels: number; start: number | null } | null;
  /** `--mode trace`: one level whose schedule is the trace's own arrivals (grid is [its mean rate]). */
  trace?: TraceSchedule | null;
  /** The arrival window per level, s (not used with requestsPerLevel). */
  durationS: number;
  maxRequestsPerLevel: number | null;
  /** `--requests N`: exactly N arrivals per level from the same seeded process; the level lasts as long as they take. */
  requestsPerLevel?: number | null;
  burstiness: number;
  /** Open loop: a cap on requests in flight (vLLM's --max-concurrency over its arrivals), or null. */
  maxInFlight?: number | null;
  /** With requestsPerLevel: the N arrivals rescaled to end at N / rate, as vLLM's (default false). */
  rescaleToRate?: boolean;
  refRequests: number;
  refE2eMs: number | null;
  warmup: number;
  slo: Slo;
  sweepAll: boolean;
  gpuCount: number;
  gpuPriceUsdH: number | null;
  server: { limitations: string[]; info: ServerInfo };
  gpu: Record<string, unknown>;
  engine: { name: string; version: string | null; kind_source: string; kind_detail?: string };
  args: Record<string, unknown>;
  keyNote: string | null;
  isLocal: boolean;
  signal?: AbortSignal;
  onProgress?: (p: LevelProgress) => void;
  /** One line for a person before a level runs (its schedule strays more than 10 % from its target). */
  onNote?: (line: string) => void;
  /**
   * This host's clock at the start: a sub-millisecond (wall, monotonic) anchor, so rows' monotonic
   * stamps can be put on the wall axis (performance.timeOrigin + now), and the kernel's clock-sync
   * state (adjtimex); recorded as data.clock.
   */
  clock?: { anchor: { wall_ms: number; mono_ms: number; wall_vs_date_ms?: number }; sync: Record<string, unknown> };
  /** A gauge sampler per level (the server's own view), when available. */
  samplerFor?: (levelName: string, onSample?: (values: Readonly<Record<string, number>>) => void) => { start(): void; stop(): Promise<Record<string, unknown>> };
  /** ik's live metrics for this run (`--metrics-listen`, `--prometheus-remote-write`), when asked for. */
  live?: LiveRun | null;
  /** A GPU sampler per level (nvidia-smi on this host, or `--gpu-metrics-url`), or null where there is none to read. */
  telemetryFor?: (levelName: string) => GpuTelemetrySampler | null;
  /** Reads ik's own memory, recorded per level as `client_memory` (peaks). */
  memory?: () => MemoryReading;
}
