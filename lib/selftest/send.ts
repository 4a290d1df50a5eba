/**
 * The selftest's one way to send a request: the same body builder (engine profiles) and the same
 * streaming loop (lib/client) that `ik probe` and the benchmarks use, over real loopback HTTP.
 */
import { parseEndpoint, type RequestRow, requestRow, streamCompletion } from "../client/mod.ts";
import { buildBody, type EngineKind, profileForPersonality } from "../engines/mod.ts";

/** The mock's wire personalities. */
export type Personality = "vllm" | "sglang" | "llamacpp" | "trtllm" | "openai";

/** Every personality, in the order selftest checks them. */
export const PERSONALITIES: Personality[] = ["vllm", "sglang", "llamacpp", "trtllm", "openai"];

/** The client profile for a personality (openai → generic). */
export function profileFor(p: Personality): EngineKind {
  return profileForPersonality(p);
}

/** One request the selftest sends. */
export interface SendRequest {
  baseUrl: string;
  engine: Personality;
  maxTokens: number;
  prompt: string;
  /** Send the profile's exact-length fields. */
  exactLength: boolean;
  /** The endpoint (default chat). */
  api?: "chat" | "completions";
  /** Idle timeout in seconds (default 10: the mock never stays silent that long unless told to). */
  idleTimeoutS?: number;
}

/** The request row the client produced. */
export type SendRow = RequestRow;

/** Sends one request and returns its row; never throws for a failed request. */
export type Sender = (req: SendRequest) => Promise<SendRow>;

/** What the selftest steps need: the runtime, the sender, and how to start `ik mock`. */
export interface SelftestDeps {
  rt: import("../runtime/mod.ts").Runtime;
  send: Sender;
  /** argv prefix that runs ik (the mock is started as `<ikArgv> mock ...`). */
  ikArgv: string[];
  /** Aborted when ik is interrupted: steps stop sending and return what they have. */
  signal?: AbortSignal;
}

/** A sender bound to an abort signal (Ctrl-C ends in-flight requests as `aborted` rows). */
export function makeSender(signal: AbortSignal): Sender {
  return async (req) => {
    const ep = parseEndpoint(req.baseUrl);
    const api = req.api ?? "chat";
    const { body } = buildBody(
      api,
      profileFor(req.engine),
      "mock-model",
      [{ role: "user", content: req.prompt }],
      req.maxTokens,
      {
        exactLength: req.exactLength,
      },
    );
    const res = await streamCompletion(ep, api, body, {
      signal,
      idleTimeoutMs: (req.idleTimeoutS ?? 10) * 1000,
      timeoutMs: 60_000,
    });
    return requestRow(res);
  };
}
