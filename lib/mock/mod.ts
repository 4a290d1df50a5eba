/**
 * The mock OpenAI-compatible server (`ik mock`): a Hono app whose `fetch` serves a real loopback
 * port, answers in-process in unit tests, and stands in for an engine. Its behaviour is the
 * ground truth of every measurement check (../../shared/spec/MOCK.md).
 *
 * @example
 * ```ts
 * import { createMock } from "./lib/mock/mod.ts";
 * const mock = createMock({ engine: "sglang", ttftMs: 100, tpotMs: 10 });
 * const res = await mock.fetch(new Request("http://mock/v1/chat/completions", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ model: "mock-model", messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream: true }),
 * }));
 * console.log(await res.text()); // eight paced token events, then a finish chunk and [DONE]
 * mock.close();
 * ```
 * @module
 */
import { buildApp } from "./app.ts";
import { type MockOptions, resolveMockOptions } from "./options.ts";
import { type MockIo, MockState } from "./state.ts";

export { defaultMockOptions, ENGINES, resolveMockOptions, STARTUP_LOG_ENGINES } from "./options.ts";
export type { EngineName, MockOptions, StartupLogEngine } from "./options.ts";
export { FAULT_KINDS, faultsFor, parseFault } from "./faults.ts";
export type { FaultKind, FaultSpec, RequestFaults } from "./faults.ts";
export {
  chatPromptTokens,
  completionPromptTokens,
  countTokens,
  EOS_TOKEN_ID,
  FIRST_WORD_ID,
  OutputGenerator,
  WORDS,
} from "./tokens.ts";
export type { ChatMessageLike, OutputToken } from "./tokens.ts";
export { planOutput } from "./request.ts";
export type { OutputPlan } from "./request.ts";
export { EventPlanner, planEvents } from "./timing_model.ts";
export type { PlannedEvent, TimingParams } from "./timing_model.ts";
export { PERSONALITIES } from "./personalities/mod.ts";
export { startupLog } from "./startup_log.ts";
export type { StartupLog } from "./startup_log.ts";
export type { MockIo } from "./state.ts";
export { requestLogLine } from "./request_log.ts";
export type { RequestLogFields } from "./request_log.ts";
export { MAX_WHOLE_TOKENS } from "./generation.ts";

/** Live counts of a mock. */
export interface MockStats {
  /** Requests generating now (the simulator's batch, else all in flight). */
  running: number;
  /** Requests queued now (simulator only). */
  waiting: number;
  /** Generation requests that ended after generating (complete or cut by a fault or the client). */
  served: number;
}

/** A mock server instance, independent of any socket. */
export interface Mock {
  /**
   * Answers one HTTP request (pass it to runtime.serve, or call it directly in tests). `info`
   * says when the server had already read the body (the request's arrival on the mock's clock).
   */
  fetch(req: Request, info?: { bodyReadMs: number | null }): Promise<Response>;
  /** Live counts. */
  stats(): MockStats;
  /** The resolved settings. */
  readonly options: MockOptions;
  /** Ends every stream and the simulator; later requests still get answers but no timers linger. */
  close(): void;
}

/**
 * Creates a mock with the given settings (defaults for the rest).
 * @param opts any subset of the `ik mock` flags
 * @param io where request-log lines go, and the pid trtllm's gauges report
 * @throws IkError (usage, exit 64) for a bad value or a flag combination that makes no sense
 */
export function createMock(opts: Partial<MockOptions> = {}, io: MockIo = {}): Mock {
  const state = new MockState(resolveMockOptions(opts), io);
  const app = buildApp(state);
  return {
    fetch: (req, info) => Promise.resolve(app.fetch(req, { bodyReadMs: info?.bodyReadMs ?? null })),
    stats: () => ({ running: state.running(), waiting: state.waiting(), served: state.served }),
    options: state.opts,
    close: () => state.close(),
  };
}
