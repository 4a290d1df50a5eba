/**
 * ik as a library: the mock server, the streaming client, engine profiles and the runtime shim.
 *
 * @example
 * ```ts
 * import { runtime } from "./mod.ts";
 * const served = await runtime.serve(() => new Response("ok"), { port: 0 });
 * await served.close();
 * ```
 * @module
 */
export { runtime } from "./lib/runtime/mod.ts";
export type * from "./lib/runtime/types.ts";
export { ExitCode } from "./lib/cli/exit_codes.ts";
export { IkError } from "./lib/cli/errors.ts";
export * from "./lib/mock/mod.ts";
export { BUILD_TARGET, GIT_REV, VERSION } from "./lib/version.ts";
export * from "./lib/sse/mod.ts";
export * from "./lib/client/mod.ts";
export * from "./lib/engines/mod.ts";
export * from "./lib/prompts/mod.ts";
export * from "./lib/datasets/mod.ts";
export * from "./lib/tokenize_remote/mod.ts";
export * from "./lib/stats/mod.ts";
