/**
 * A server's own tokenizer over HTTP (`--tokenize-via`): vLLM and SGLang `/tokenize` with chat
 * messages, llama.cpp `/apply-template` + `/tokenize`.
 *
 * @example
 * ```ts
 * import { parseEndpoint } from "../client/mod.ts";
 * import { openRemoteCounter } from "./mod.ts";
 * const rc = await openRemoteCounter(parseEndpoint("http://127.0.0.1:8080"));
 * console.log(rc.engine, await rc.countChat([{ role: "user", content: "hello" }]));
 * ```
 * @module
 */
export {
  type CountMessage,
  openRemoteCounter,
  type RemoteCounter,
  type RemoteCounterOptions,
} from "./remote_counter.ts";
export { TOKENIZE_ENGINES, type TokenizeEngine } from "./engines.ts";
