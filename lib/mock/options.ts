/**
 * The mock's settings: one field per `ik mock` flag (MOCK.md "Flags"), camelCase with units.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { MAX_DURATION_S, MAX_TIMER_MS } from "../cli/limits.ts";
import type { FaultSpec } from "./faults.ts";

/** Wire personalities the mock can put on. */
export const ENGINES = ["vllm", "sglang", "llamacpp", "trtllm", "openai"] as const;

/** One wire personality. */
export type EngineName = typeof ENGINES[number];

/** Engines whose startup log the mock can print (`--startup-log`). */
export const STARTUP_LOG_ENGINES = ["vllm", "sglang", "llamacpp", "trtllm"] as const;

/** An engine with a startup-log format. */
export type StartupLogEngine = typeof STARTUP_LOG_ENGINES[number];

/** Everything `ik mock` can be told; see {@link defaultMockOptions} for the defaults. */
export interface MockOptions {
  /** `--host`: interface to listen on. */
  host: string;
  /** `--port`: 0 picks a free port. */
  port: number;
  /** `--engine`: wire personality. */
  engine: EngineName;
  /** `--model`: the served model name. */
  model: string;
  /** `--max-model-len`: prompt + max_tokens above this gets the "too long" error. */
  maxModelLen: number;
  /** `--ttft-ms`: base time to first token (timing model). */
  ttftMs: number;
  /** `--prefill-ms-per-token`: extra TTFT per prompt token (and prefill step time in the simulator). */
  prefillMsPerToken: number;
  /** `--tpot-ms`: time per output token (timing model). */
  tpotMs: number;
  /** `--tokens-per-event`: tokens carried by each token event. */
  tokensPerEvent: number;
  /** `--spec-depth`: draft tokens proposed per step; 0 = no speculative decoding. */
  specDepth: number;
  /** `--spec-accept`: probability each draft is accepted (in order, until the first rejection). */
  specAccept: number;
  /** `--eos-after`: natural end after this many tokens; null = off. */
  eosAfter: number | null;
  /** `--jitter-ms`: each gap varies by ± uniform(jitterMs). */
  jitterMs: number;
  /** `--seed`: seeds output words, jitter, draft acceptance and `~P` faults. */
  seed: number;
  /** `--max-batch`: batching simulator slots; null = timing model instead. */
  maxBatch: number | null;
  /** `--step-ms`: fixed part of a simulator step; null = `tpotMs`. */
  stepMs: number | null;
  /** `--step-ms-per-seq`: extra step time per running request. */
  stepMsPerSeq: number;
  /** `--kv-tokens`: KV budget (Σ prompt + max_tokens of the batch); null = unlimited. */
  kvTokens: number | null;
  /** `--prefix-cache-tokens`: prefix cache capacity in tokens (16-token blocks); 0 = no cache. */
  prefixCacheTokens: number;
  /** `--fault` (repeatable). */
  faults: FaultSpec[];
  /** `--metrics on|off`. */
  metrics: boolean;
  /** `--startup-delay-s`: do not listen for this long. */
  startupDelayS: number;
  /** `--ready-delay-s`: answer 503 on /ready and /health for this long after listening. */
  readyDelayS: number;
  /** `--startup-log ENGINE`: print that engine's startup log; null = none. */
  startupLog: StartupLogEngine | null;
  /** `--exit-after-s`: exit with status 1 after this long; null = run until signalled. */
  exitAfterS: number | null;
  /** `--spawn-child`: start a sleeping child in the mock's own process group. */
  spawnChild: boolean;
  /** `--request-log`: one stdout line per finished request. */
  requestLog: boolean;
  /** `--parent-pid`: exit once this process is gone; null = off. */
  parentPid: number | null;
}

/** The defaults of every mock flag (MOCK.md's table). */
export function defaultMockOptions(): MockOptions {
  return {
    host: "127.0.0.1",
    port: 8000,
    engine: "vllm",
    model: "mock-model",
    maxModelLen: 8192,
    ttftMs: 50,
    prefillMsPerToken: 0,
    tpotMs: 10,
    tokensPerEvent: 1,
    specDepth: 0,
    specAccept: 0,
    eosAfter: null,
    jitterMs: 0,
    seed: 0,
    maxBatch: null,
    stepMs: null,
    stepMsPerSeq: 0,
    kvTokens: null,
    prefixCacheTokens: 0,
    faults: [],
    metrics: true,
    startupDelayS: 0,
    readyDelayS: 0,
    startupLog: null,
    exitAfterS: null,
    spawnChild: false,
    requestLog: false,
    parentPid: null,
  };
}

/** Timing-model flags that the batching simulator replaces: giving one with `--max-batch` is a usage error. */
const TIMING_MODEL_ONLY: [keyof MockOptions, string][] = [
  ["ttftMs", "--ttft-ms"],
  ["tpotMs", "--tpot-ms"],
  ["tokensPerEvent", "--tokens-per-event"],
  ["specDepth", "--spec-depth"],
  ["specAccept", "--spec-accept"],
];

function need(ok: boolean, flag: string, what: string, hint?: string): void {
  if (!ok) throw usageError(flag, what, hint);
}

/**
 * Fills in defaults and checks values and combinations. Only the fields present (not undefined)
 * in `partial` count as given: `--ttft-ms`, `--tpot-ms`, `--tokens-per-event` and `--spec-*`
 * given together with `--max-batch` are refused, their defaults are not.
 * Seconds flags accept at most {@link MAX_DURATION_S}, ms flags at most {@link MAX_TIMER_MS}.
 * @throws IkError (usage, exit 64) naming the offending flag
 */
export function resolveMockOptions(partial: Partial<MockOptions> = {}): MockOptions {
  // Already resolved (e.g. `ik mock` hands its checked settings to createMock): every field is
  // present there, so "given" would be meaningless; it was checked when it was made.
  if (RESOLVED.has(partial)) return partial as MockOptions;
  const o = checkMockOptions(stripUndefined(partial));
  RESOLVED.add(o);
  return o;
}

/** Settings objects {@link resolveMockOptions} made (and checked). */
const RESOLVED = new WeakSet<object>();

function checkMockOptions(given: Partial<MockOptions>): MockOptions {
  const o: MockOptions = { ...defaultMockOptions(), ...given };
  need(
    typeof o.host === "string" && o.host.trim() !== "",
    "--host",
    "the host is empty (that would listen on every interface)",
    "give an address, e.g. 127.0.0.1 (or 0.0.0.0 to listen on every interface on purpose)",
  );
  if (given.maxBatch !== undefined && given.maxBatch !== null) {
    for (const [key, flag] of TIMING_MODEL_ONLY) {
      need(
        !(key in given),
        `${flag} with --max-batch`,
        `${flag} cannot be combined with --max-batch (the batching simulator replaces the timing model)`,
        `drop ${flag} (the simulator paces by --step-ms and --step-ms-per-seq), or drop --max-batch`,
      );
    }
  }
  need(
    (ENGINES as readonly string[]).includes(o.engine),
    "--engine",
    `unknown engine '${o.engine}'`,
    `use one of ${ENGINES.join(", ")}`,
  );
  need(
    Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535,
    "--port",
    `${o.port} is not a port number`,
    "use 0-65535",
  );
  need(o.model.length > 0, "--model", "the model name is empty", "give a name, e.g. mock-model");
  const nonNeg: [string, number][] = [
    ["--ttft-ms", o.ttftMs],
    ["--prefill-ms-per-token", o.prefillMsPerToken],
    ["--tpot-ms", o.tpotMs],
    ["--jitter-ms", o.jitterMs],
    ["--step-ms-per-seq", o.stepMsPerSeq],
    ["--startup-delay-s", o.startupDelayS],
    ["--ready-delay-s", o.readyDelayS],
  ];
  for (const [flag, v] of nonNeg) {
    need(Number.isFinite(v) && v >= 0, flag, `${v} must be a number of 0 or more`);
  }
  const msFlags: [string, number | null][] = [
    ["--ttft-ms", o.ttftMs],
    ["--prefill-ms-per-token", o.prefillMsPerToken],
    ["--tpot-ms", o.tpotMs],
    ["--jitter-ms", o.jitterMs],
    ["--step-ms", o.stepMs],
    ["--step-ms-per-seq", o.stepMsPerSeq],
  ];
  for (const [flag, v] of msFlags) {
    need(
      v === null || !(v > MAX_TIMER_MS),
      flag,
      `${v} ms is over the limit of ${MAX_TIMER_MS} ms (2^31 - 1, the JS timer limit)`,
      `give at most ${MAX_TIMER_MS}`,
    );
  }
  const secondsFlags: [string, number | null][] = [
    ["--startup-delay-s", o.startupDelayS],
    ["--ready-delay-s", o.readyDelayS],
    ["--exit-after-s", o.exitAfterS],
  ];
  for (const [flag, v] of secondsFlags) {
    need(
      v === null || !(v > MAX_DURATION_S),
      flag,
      `${v} s is over the limit of ${MAX_DURATION_S} s (2^31 - 1 ms, the JS timer limit)`,
      `give at most ${MAX_DURATION_S}`,
    );
  }
  need(
    o.parentPid === null || (Number.isSafeInteger(o.parentPid) && o.parentPid >= 1),
    "--parent-pid",
    `${o.parentPid} is not a process id`,
    "give the pid of a running process, 1 or more",
  );
  const posInt: [string, number | null][] = [
    ["--max-model-len", o.maxModelLen],
    ["--tokens-per-event", o.tokensPerEvent],
    ["--eos-after", o.eosAfter],
    ["--max-batch", o.maxBatch],
    ["--kv-tokens", o.kvTokens],
  ];
  for (const [flag, v] of posInt) {
    need(v === null || (Number.isInteger(v) && v >= 1), flag, `${v} must be a whole number, 1 or more`);
  }
  need(
    Number.isInteger(o.specDepth) && o.specDepth >= 0,
    "--spec-depth",
    `${o.specDepth} must be a whole number, 0 or more`,
  );
  need(
    Number.isFinite(o.specAccept) && o.specAccept >= 0 && o.specAccept <= 1,
    "--spec-accept",
    `${o.specAccept} must be a probability in [0, 1]`,
  );
  need(Number.isInteger(o.seed), "--seed", `${o.seed} must be a whole number`);
  need(
    Number.isSafeInteger(o.prefixCacheTokens) && o.prefixCacheTokens >= 0,
    "--prefix-cache-tokens",
    `${o.prefixCacheTokens} must be a whole number of tokens, 0 (off) or more`,
  );
  need(
    o.stepMs === null || (Number.isFinite(o.stepMs) && o.stepMs >= 0),
    "--step-ms",
    `${o.stepMs} must be a number of 0 or more`,
  );
  need(
    o.exitAfterS === null || (Number.isFinite(o.exitAfterS) && o.exitAfterS >= 0),
    "--exit-after-s",
    `${o.exitAfterS} must be a number of 0 or more`,
  );
  if (o.maxBatch === null) {
    const simOnly: [string, boolean][] = [["--step-ms", o.stepMs !== null], [
      "--step-ms-per-seq",
      o.stepMsPerSeq !== 0,
    ], ["--kv-tokens", o.kvTokens !== null]];
    for (const [flag, given] of simOnly) {
      need(!given, flag, "only applies to the batching simulator", "add --max-batch B, or drop it");
    }
  }
  if (o.specDepth === 0) {
    need(
      o.specAccept === 0,
      "--spec-accept",
      "needs --spec-depth D (draft tokens per step)",
      "add --spec-depth, or drop --spec-accept",
    );
  }
  if (o.startupLog !== null) {
    need(
      (STARTUP_LOG_ENGINES as readonly string[]).includes(o.startupLog),
      "--startup-log",
      `no startup log format for '${o.startupLog}'`,
      `use one of ${STARTUP_LOG_ENGINES.join(", ")}`,
    );
  }
  return o;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The simulator's fixed step time: `--step-ms`, else `--tpot-ms`. */
export function stepMsOf(o: MockOptions): number {
  return o.stepMs ?? o.tpotMs;
}
