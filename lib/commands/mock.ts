/**
 * `ik mock`: runs the mock OpenAI-compatible server standalone (../../shared/spec/MOCK.md).
 *
 * stderr carries, once listening, exactly one line `ik mock: listening on http://HOST:PORT (…)`
 * (tests and `ik selftest` find the port there with --port 0); with --spawn-child also
 * `ik mock: child pid N`; with --startup-log the engine's log. stdout carries only the
 * --request-log lines. Runs until SIGINT/SIGTERM (exit 130), exits 1 after --exit-after-s, and
 * exits 0 once the --parent-pid process is gone (checked every 0.25 s).
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, flag, option } from "@optique/core/primitives";
import {
  choice,
  float,
  integer,
  string,
  type ValueParser,
  type ValueParserResult,
} from "@optique/core/valueparser";
import { ExitCode } from "../cli/exit_codes.ts";
import { IkError, usageError } from "../cli/errors.ts";
import {
  createMock,
  ENGINES,
  type FaultSpec,
  type MockOptions,
  parseFault,
  resolveMockOptions,
  STARTUP_LOG_ENGINES,
  startupLog,
} from "../mock/mod.ts";
import type { ProcessGroup } from "../runtime/mod.ts";
import type { CommandContext } from "./context.ts";

/** `--fault KIND[:S][@N or ~P]`, checked by {@link parseFault} so a typo is a usage error naming the value. */
function faultValue(): ValueParser<"sync", FaultSpec> {
  return {
    mode: "sync",
    metavar: "KIND[:S][@N|~P]",
    placeholder: { kind: "reset", text: "reset" },
    parse(input: string): ValueParserResult<FaultSpec> {
      try {
        return { success: true, value: parseFault(input) };
      } catch (e) {
        const what = e instanceof IkError ? `${e.message}; ${e.hint}` : String(e);
        return { success: false, error: message`${text(`'${input}': ${what}`)}` };
      }
    },
    format: (v) => v.text,
  };
}

type Flag = `--${string}`;
const about = (description: string) => ({ description: message`${text(description)}` });
const ms = (name: Flag, def: number, description: string) =>
  withDefault(option(name, float({ min: 0, metavar: "MS" }), about(description)), def);
const seconds = (name: Flag, def: number, description: string) =>
  withDefault(option(name, float({ min: 0, metavar: "S" }), about(description)), def);
const maybeMs = (name: Flag, description: string) =>
  optional(option(name, float({ min: 0, metavar: "MS" }), about(description)));
const maybeCount = (name: Flag, description: string) =>
  optional(option(name, integer({ min: 1, metavar: "N" }), about(description)));
const onOff = (name: Flag, description: string) => withDefault(flag(name, about(description)), false);

const FAULT_HELP = "Inject a fault: http429, http500, http503, error-event, truncate, malformed, stall:S, " +
  "slow-headers:S, reset, usage-mismatch[:D] (usage reports D more tokens than streamed, default 1; a negative D lies " +
  "low, floored at 0); @N every N-th request, ~P with probability P (seeded). Repeatable.";

/** Parser for `ik mock`. */
export const mockCommand = command(
  "mock",
  object({
    cmd: constant("mock" as const),
    host: withDefault(
      option("--host", string({ metavar: "HOST" }), about("Interface to listen on.")),
      "127.0.0.1",
    ),
    port: withDefault(
      option("--port", integer({ min: 0, max: 65535, metavar: "PORT" }), about("0 picks a free port.")),
      8000,
    ),
    engine: withDefault(
      option("--engine", choice(ENGINES, { metavar: "ENGINE" }), about("Wire personality.")),
      "vllm" as const,
    ),
    model: withDefault(
      option("--model", string({ metavar: "NAME" }), about("The served model name.")),
      "mock-model",
    ),
    maxModelLen: withDefault(
      option(
        "--max-model-len",
        integer({ min: 1, metavar: "TOKENS" }),
        about("prompt + max_tokens over this is 'too long'."),
      ),
      8192,
    ),
    // No withDefault on the timing-model flags: only flags really given conflict with --max-batch.
    ttftMs: maybeMs("--ttft-ms", "Time to first token (timing model; default 50)."),
    prefillMsPerToken: ms("--prefill-ms-per-token", 0, "Extra time to first token per prompt token."),
    tpotMs: maybeMs("--tpot-ms", "Time per output token (timing model; default 10)."),
    tokensPerEvent: optional(
      option(
        "--tokens-per-event",
        integer({ min: 1, metavar: "N" }),
        about("Tokens per token event (timing model; default 1; the last may carry fewer)."),
      ),
    ),
    specDepth: maybeCount(
      "--spec-depth",
      "Speculative decoding: drafts proposed per step (with --spec-accept).",
    ),
    specAccept: optional(
      option(
        "--spec-accept",
        float({ min: 0, max: 1, metavar: "P" }),
        about("Probability each draft is accepted."),
      ),
    ),
    eosAfter: maybeCount(
      "--eos-after",
      "Natural end after N tokens unless an honoured exact-length field is set.",
    ),
    jitterMs: ms("--jitter-ms", 0, "Each gap varies by ± uniform(J) ms, seeded."),
    seed: withDefault(
      option("--seed", integer({ metavar: "S" }), about("Seeds words, jitter, drafts, ~P faults.")),
      0,
    ),
    maxBatch: maybeCount("--max-batch", "Batching simulator with B slots (replaces the timing model)."),
    stepMs: maybeMs("--step-ms", "Simulator: fixed step time (default 10, the --tpot-ms default)."),
    stepMsPerSeq: maybeMs("--step-ms-per-seq", "Simulator: extra step time per running request."),
    kvTokens: maybeCount("--kv-tokens", "Simulator: KV budget, Σ prompt + max_tokens over the batch."),
    prefixCacheTokens: withDefault(
      option(
        "--prefix-cache-tokens",
        integer({ min: 0, metavar: "N" }),
        about(
          "Prefix cache of N tokens (LRU of 16-token blocks): a prompt's leading whole blocks seen " +
            "before cost no prefill, and are reported as cached (request log cached=, usage " +
            "prompt_tokens_details.cached_tokens, llama.cpp timings.cache_n). 0 = off.",
        ),
      ),
      0,
    ),
    faults: multiple(option("--fault", faultValue(), about(FAULT_HELP))),
    metrics: withDefault(
      option(
        "--metrics",
        choice(["on", "off"] as const, { metavar: "on|off" }),
        about("off emulates an engine started without metrics."),
      ),
      "on" as const,
    ),
    startupDelayS: seconds("--startup-delay-s", 0, "Do not listen for S seconds (an engine loading)."),
    readyDelayS: seconds("--ready-delay-s", 0, "Listen, but answer 503 on /ready and /health for S seconds."),
    startupLog: optional(
      option(
        "--startup-log",
        choice(STARTUP_LOG_ENGINES, { metavar: "ENGINE" }),
        about("Print that engine's startup log for these flags."),
      ),
    ),
    exitAfterS: optional(
      option("--exit-after-s", float({ min: 0, metavar: "S" }), about("Exit 1 after S seconds.")),
    ),
    spawnChild: onOff("--spawn-child", "Start a sleeping child in the mock's own process group."),
    requestLog: onOff("--request-log", "One stdout line per finished request (ik-request serial=N …)."),
    parentPid: optional(
      option(
        "--parent-pid",
        integer({ min: 1, metavar: "PID" }),
        about("Exit (status 0) once that process is gone, checked every 0.25 s."),
      ),
    ),
  }),
  {
    brief: message`Run the mock OpenAI-compatible server.`,
    description: message`${
      text(
        "Serves /v1/chat/completions and /v1/completions (streamed and whole) in an engine's wire personality, " +
          "paced by a timing model or a batching simulator, with injected faults and an optional " +
          "prefix cache (--prefix-cache-tokens: only uncached prompt tokens cost prefill); also /v1/models, /health, " +
          "metrics at the engine's path, /ready and /state. Prints 'ik mock: listening on http://HOST:PORT' " +
          "on stderr once listening.",
      )
    }`,
  },
);

/** The parsed flags of `ik mock`. */
export type MockFlags = InferValue<typeof mockCommand>;

/** Maps parsed flags to mock settings. */
export function mockOptionsFromFlags(f: MockFlags): MockOptions {
  if (f.specDepth !== undefined && f.specAccept === undefined) {
    throw usageError("--spec-depth", "needs --spec-accept P (the draft acceptance probability)");
  }
  return resolveMockOptions({
    host: f.host,
    port: f.port,
    engine: f.engine,
    model: f.model,
    maxModelLen: f.maxModelLen,
    ttftMs: f.ttftMs,
    prefillMsPerToken: f.prefillMsPerToken,
    tpotMs: f.tpotMs,
    tokensPerEvent: f.tokensPerEvent,
    specDepth: f.specDepth,
    specAccept: f.specAccept,
    eosAfter: f.eosAfter ?? null,
    jitterMs: f.jitterMs,
    seed: f.seed,
    maxBatch: f.maxBatch ?? null,
    stepMs: f.stepMs ?? null,
    stepMsPerSeq: f.stepMsPerSeq ?? 0,
    kvTokens: f.kvTokens ?? null,
    prefixCacheTokens: f.prefixCacheTokens,
    faults: [...f.faults],
    metrics: f.metrics === "on",
    startupDelayS: f.startupDelayS,
    readyDelayS: f.readyDelayS,
    startupLog: f.startupLog ?? null,
    exitAfterS: f.exitAfterS ?? null,
    spawnChild: f.spawnChild,
    requestLog: f.requestLog,
    parentPid: f.parentPid ?? null,
  });
}

/** How often `--parent-pid` is checked, ms (MOCK.md: at least every 0.5 s). */
const PARENT_CHECK_MS = 250;

function waitFor(signal: AbortSignal, ms = Infinity): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Runs `ik mock` until interrupted (exit 130 via cli.ts), --exit-after-s (exit 1) or the
 * --parent-pid process is gone (exit 0).
 * @throws IkError (usage, exit 64) for bad flag values or combinations, and when it cannot listen
 */
export async function runMock(ctx: CommandContext, flags: MockFlags): Promise<number> {
  return await serveMock(ctx, mockOptionsFromFlags(flags));
}

async function serveMock(ctx: CommandContext, o: MockOptions): Promise<number> {
  const rt = ctx.runtime;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  ctx.signal.addEventListener("abort", onSignal, { once: true });
  if (ctx.signal.aborted) stop.abort();
  let expired = false;
  const exitTimer = o.exitAfterS === null ? undefined : setTimeout(() => {
    expired = true;
    stop.abort();
  }, o.exitAfterS * 1000);
  let orphaned = false;
  const parentTimer = o.parentPid === null ? undefined : setInterval(() => {
    if (o.parentPid !== null && !rt.pidAlive(o.parentPid)) {
      orphaned = true;
      stop.abort();
    }
  }, PARENT_CHECK_MS);
  const log = o.startupLog ? startupLog(o.startupLog, o, rt.pid()) : null;
  let child: ProcessGroup | null = null;
  try {
    if (log) ctx.err(log.before.join("\n") + "\n");
    if (o.spawnChild) {
      // Same process group as the mock (newGroup: false): killing the mock's group must take it too.
      child = rt.spawn(["sleep", "3600"], { newGroup: false });
      ctx.err(`ik mock: child pid ${child.pid}\n`);
    }
    if (o.startupDelayS > 0) await waitFor(stop.signal, o.startupDelayS * 1000);
    if (!stop.signal.aborted) {
      const mock = createMock(o, { requestLog: (line) => ctx.out(line + "\n"), pid: rt.pid() });
      let served;
      try {
        served = await rt.serve(mock.fetch, { hostname: o.host, port: o.port });
      } catch (e) {
        mock.close();
        throw new IkError(
          ExitCode.USAGE,
          `--host ${o.host} --port ${o.port}`,
          `cannot listen: ${(e as Error).message}`,
          "pick another --port (0 = any free port) or --host",
        );
      }
      if (log) ctx.err(log.after(urlHost(o.host), served.port).join("\n") + "\n");
      ctx.err(
        `ik mock: listening on http://${
          urlHost(o.host)
        }:${served.port} (engine ${o.engine}, model ${o.model}, ${
          o.maxBatch === null ? "timing model" : `simulator B=${o.maxBatch}`
        })\n`,
      );
      await waitFor(stop.signal);
      mock.close();
      await served.close();
    }
  } finally {
    clearTimeout(exitTimer);
    clearInterval(parentTimer);
    ctx.signal.removeEventListener("abort", onSignal);
    child?.killGroup("SIGTERM");
  }
  if (orphaned) {
    ctx.err(`ik mock: exiting, --parent-pid ${o.parentPid} is gone\n`);
    return ExitCode.OK;
  }
  if (expired) {
    ctx.err(`ik mock: exiting after --exit-after-s ${o.exitAfterS}\n`);
    return ExitCode.VERDICT_NEGATIVE;
  }
  return ExitCode.OK;
}
