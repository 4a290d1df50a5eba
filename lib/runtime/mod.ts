/**
 * The runtime shim: the only module that knows whether ik runs on Bun, Deno or Node.
 * Everything else imports {@link runtime} and writes against web standards.
 * @module
 */
import { bunRuntime } from "./bun.ts";
import { denoRuntime } from "./deno.ts";
import { nodeRuntime } from "./node.ts";
import type { Runtime } from "./types.ts";

export type * from "./types.ts";
export { HTTP_CLIENT_ENV, httpClientEnvProblem } from "./_fetch_choice.ts";
export { BUN_FETCH_LIMIT_ENV, COLLECTOR_ENV, COLLECTOR_MIN_STREAMS, COLLECTOR_VALUE, GROWTH_ENV, GROWTH_MIN_STREAMS, GROWTH_VALUE, measuringStartEnv } from "./_start_env.ts";

function detect(): Runtime {
  const g = globalThis as unknown as { Bun?: unknown; Deno?: unknown };
  if (g.Bun) return bunRuntime();
  if (g.Deno) return denoRuntime();
  return nodeRuntime();
}

/** The runtime ik is running on. */
export const runtime: Runtime = detect();
