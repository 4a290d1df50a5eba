/**
 * The flags and parser of `ik mock`, and their parsed type. Parser only: it reads the mock's
 * names (../mock/options.ts) and fault syntax (../mock/faults.ts), plain modules without the server
 * (Hono), which is mock.ts.
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
import { IkError } from "../cli/errors.ts";
import { type FaultSpec, parseFault } from "../mock/faults.ts";
import { ENGINES, STARTUP_LOG_ENGINES } from "../mock/options.ts";

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

const FAULT_HELP = "Inject a fault: http429, http500, http503, error-event, truncate, malformed, stall[:S], " +
  "slow-headers[:S] (S seconds, default 1), reset, usage-mismatch[:D] (usage reports D more tokens than streamed, default 1; a negative D lies " +
  "low, floored at 0); @N every N-th request, ~P with probability P (seeded). Repeatable.";

/** Builds the parser for `ik mock` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const mockCommand = () => command(
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
export type MockFlags = InferValue<ReturnType<typeof mockCommand>>;
