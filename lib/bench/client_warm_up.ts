/**
 * ik's own request path warmed before a load run, in memory, with nothing sent. A fresh process
 * runs its first requests on cold code: the JavaScript engine interprets each function until it
 * has run often enough to be compiled, and compiles it on background threads that then compete
 * with the event loop for the CPUs. Measured through `ik bench serve` against `ik mock` (TTFT 0,
 * 500 req/s, 4-token requests; 2-vCPU AMD EPYC, 3 runs): the first 50 requests' TTFT median was
 * 0.76–1.51 ms against 0.65–0.72 ms for the rest of the level (the client's own overhead, up to
 * doubled), and the level's first half-second held 8–34 of its sends over 1 ms late. The two
 * warm-up requests a run sends the server (`--warmup`) are far too few to compile anything.
 *
 * So before the first level ik runs its request path on a canned response: the runner's real body
 * for each prompt (built, serialized, framed), ik's HTTP/1.1 client over a transport with no
 * network (h1/memory_transport.ts), the response head and chunked body parsed, the SSE events
 * scanned and their tokens counted, the result built, and the row, output and input documents
 * turned into their scrubbed JSON lines (not written). No byte leaves the process, and the server
 * sees nothing. It is bounded by a request count and a time budget, then waits a moment for the
 * background compilers to finish before the first level starts.
 * @module
 */
import { setTimeout as sleep } from "node:timers/promises";
import { itlMs, parseEndpoint, requestRow, streamCompletion } from "../client/mod.ts";
import { scrubJsonLine } from "../evidence/scrub.ts";
import { h1Fetch } from "../h1/fetch.ts";
import { memoryConnect } from "../h1/memory_transport.ts";
import type { Prompt } from "../prompts/mod.ts";
import type { Runner } from "./runner.ts";
import { outputDoc, promptTokens } from "./single_rows.ts";

/** Requests a warm-up runs at most: enough for the engine to compile the per-request and per-event code. */
export const WARM_UP_REQUESTS = 1000;
/** The longest a warm-up runs (a slow host stops here, warmed as far as it got), ms. */
export const WARM_UP_BUDGET_MS = 400;
/** Tokens in the canned response: the per-event code runs this many times a request. */
export const WARM_UP_TOKENS = 8;
/** The pause after the warm-up, for the compilations it queued to finish off the event loop's CPU, ms. */
export const WARM_UP_SETTLE_MS = 50;

/** What a warm-up did (recorded as the run's `client_warm_up`). */
export interface ClientWarmUp {
  /** Requests run through the client in memory. */
  requests: number;
  /** How long they took, ms (the settle pause not counted). */
  ms: number;
}

const encoder = new TextEncoder();

/**
 * A streamed answer as an OpenAI-compatible server (vLLM's shape: token ids per choice, a usage
 * chunk, `[DONE]`) sends it over HTTP/1.1, each event its own chunk, split into three reads.
 */
export function cannedStream(api: "chat" | "completions", tokens: number = WARM_UP_TOKENS): Uint8Array[] {
  const id = "cmpl-ik-warm-up";
  const events: string[] = [];
  const chunk = (choice: Record<string, unknown>) =>
    JSON.stringify(api === "chat"
      ? { id, object: "chat.completion.chunk", created: 0, model: "ik-warm-up", choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] }
      : { id, object: "text_completion", created: 0, model: "ik-warm-up", choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] });
  if (api === "chat") events.push(chunk({ delta: { role: "assistant", content: "" } }));
  for (let i = 0; i < tokens; i++) {
    const text = ` w${i}`;
    const last = i === tokens - 1 ? { finish_reason: "length" } : {};
    events.push(chunk(api === "chat" ? { delta: { content: text }, token_ids: [1000 + i], ...last } : { text, token_ids: [1000 + i], ...last }));
  }
  events.push(JSON.stringify({ id, object: api === "chat" ? "chat.completion.chunk" : "text_completion", created: 0, model: "ik-warm-up", choices: [], usage: { prompt_tokens: 16, total_tokens: 16 + tokens, completion_tokens: tokens } }));
  events.push("[DONE]");
  // ASCII throughout: a string's length is its byte count.
  const framed = events.map((e) => {
    const line = `data: ${e}\n\n`;
    return `${line.length.toString(16)}\r\n${line}\r\n`;
  });
  const head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
  const a = Math.min(2, framed.length), b = Math.max(a, framed.length - 2);
  return [head + framed.slice(0, a).join(""), framed.slice(a, b).join(""), framed.slice(b).join("") + "0\r\n\r\n"]
    .filter((s) => s.length > 0)
    .map((s) => encoder.encode(s));
}

/**
 * Runs ik's request path in memory for up to `requests` requests or `budgetMs`, whichever ends
 * first (or until the signal aborts), one request at a time over `prompts` in order, then pauses
 * {@link WARM_UP_SETTLE_MS}. Nothing is sent and nothing is written; a request the canned answer
 * fails (it should not) ends the warm-up early.
 */
export async function warmUpClient(
  runner: Runner,
  prompts: readonly Prompt[],
  opts: { requests?: number; budgetMs?: number; settleMs?: number; signal?: AbortSignal } = {},
): Promise<ClientWarmUp> {
  const requests = opts.requests ?? WARM_UP_REQUESTS, budget = opts.budgetMs ?? WARM_UP_BUDGET_MS;
  const api = runner.cfg.api === "completions" ? "completions" : "chat";
  const fetch = h1Fetch(memoryConnect(cannedStream(api)), () => Promise.reject(new Error("the warm-up's client has no network")));
  // A port nothing listens on: the memory transport never connects anywhere.
  const ep = parseEndpoint("http://127.0.0.1:9");
  const t0 = performance.now();
  let n = 0;
  try {
    for (; n < requests && prompts.length > 0 && !opts.signal?.aborted && performance.now() - t0 < budget; n++) {
      const prompt = prompts[n % prompts.length];
      const salt = `ik-warm-up-${n}`;
      const body = runner.body(prompt, salt);
      const result = await streamCompletion(ep, runner.cfg.api, body, {
        // No token counter: the canned answer carries ids and usage, and a counter may ask the server.
        fetch, timeoutMs: runner.cfg.timeoutMs, idleTimeoutMs: runner.cfg.idleTimeoutMs,
        id: prompt.id, bucket: prompt.bucket, salt, tScheduledMs: performance.now(),
      });
      if (!result.ok) break;
      // The lines a level journals for each request, built and dropped.
      const maxTokens = runner.maxFor(prompt);
      scrubJsonLine(requestRow(result, { level: "warm-up", seq: n, label: "warm-up", max_tokens: maxTokens, prompt_tokens: promptTokens(result), send_cpu_wait_ms: 0 }));
      scrubJsonLine(outputDoc(result, prompt, maxTokens, { level: "warm-up", seq: n, salt }));
      scrubJsonLine({ id: prompt.id, level: "warm-up", seq: n, salt, body });
      itlMs(result);
    }
  } finally {
    fetch.closeIdle();
  }
  const ms = performance.now() - t0;
  if (n > 0 && !opts.signal?.aborted) await sleep(opts.settleMs ?? WARM_UP_SETTLE_MS);
  return { requests: n, ms };
}
