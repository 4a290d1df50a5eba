/** What every command receives: the runtime, output channels and global switches. */
import type { Runtime } from "../runtime/mod.ts";
import { scrubText } from "../evidence/scrub.ts";

/** The context a command runs in. Commands return an exit code (../cli/exit_codes.ts). */
export interface CommandContext {
  /** The host runtime (serve, spawn, env, signals). */
  runtime: Runtime;
  /** Writes results to stdout (through the scrubber). */
  out(text: string): void;
  /** Writes progress and logs to stderr (through the scrubber). */
  err(text: string): void;
  /** True when `--json` or `IK_OUTPUT=json` asks for one JSON object on stdout. */
  json: boolean;
  /** Aborted when ik is interrupted (SIGINT/SIGTERM/SIGHUP). */
  signal: AbortSignal;
}

/**
 * Builds a context over a runtime. Everything a command prints goes through the scrubber
 * (../evidence/scrub.ts): this run's secret values, URL secrets, secret flags, `Bearer X`.
 */
export function makeContext(runtime: Runtime, json: boolean, signal: AbortSignal): CommandContext {
  return {
    runtime,
    out: (t) => runtime.writeStdout(scrubText(t)),
    err: (t) => runtime.writeStderr(scrubText(t)),
    json: json || runtime.env("IK_OUTPUT") === "json",
    signal,
  };
}
