/**
 * Turns a running generation into an HTTP response: a paced SSE stream (each token event its
 * own write, at its own deadline) or, for `stream: false`, one JSON body once the last token
 * is due. Body faults act here: error-event, truncate and malformed after half the tokens,
 * stall and reset after the first.
 * @module
 */
import { type Generation, jsonResponse, Run } from "./generation.ts";
import { malformedEvent, SSE_DONE } from "./sse.ts";
import { nowMs, sleepUntil } from "./token_source.ts";
import type { OutputToken } from "./tokens.ts";

/** How long a reset waits after the first token, so that token leaves before the connection dies. */
const RESET_AFTER_MS = 20;

/**
 * The reason a reset errors the body with. Erroring the response body makes Bun and Deno drop
 * the connection without the chunked terminator; both log the reason unless it is undefined.
 */
function resetError(): undefined {
  return undefined;
}

/** Where the half-way faults strike: after this many tokens. */
function halfOf(outputLen: number): number {
  return Math.max(1, Math.floor(outputLen / 2));
}

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/**
 * Streams the generation as the personality does. Headers and the role chunk go out at once.
 * Each token event is stamped as written (the request log's first_ms/last_ms) right after its
 * chunk is enqueued; the writer waits while the reader is a chunk behind (backpressure), so a
 * slow client or a zero tpot never piles the stream up in memory.
 */
export function streamResponse(g: Generation): Response {
  const run = new Run(g);
  const p = g.state.personality;
  const enc = new TextEncoder();
  let gone = false;
  let pulled: (() => void) | null = null;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (events: string[]): boolean => {
        if (gone || events.length === 0) return false;
        try {
          controller.enqueue(enc.encode(events.join("")));
          return true;
        } catch {
          gone = true;
          return false;
        }
      };
      const drained = () =>
        gone || controller.desiredSize === null || controller.desiredSize > 0
          ? Promise.resolve()
          : new Promise<void>((r) => (pulled = r));
      const finish = (how: "close" | "reset", outcome: "complete" | "abort") => {
        run.end(outcome);
        if (gone) return;
        gone = true;
        try {
          if (how === "reset") controller.error(resetError());
          else controller.close();
        } catch { /* already closed by the client */ }
      };
      // Headers go out with the first body bytes under Bun's server (at once under Deno's): where
      // the personality has no role chunk to send now (/v1/completions, llamacpp), with the first token.
      write(p.streamStart(g.ctx));
      void (async () => {
        const half = halfOf(g.plan.outputLen);
        let halfDone = false;
        let textOffset = 0;
        for (;;) {
          await drained();
          const step = await run.next();
          if (!step || gone) break;
          const cutsHere = !halfDone && step.sent >= half &&
            (g.faults.body === "error-event" || g.faults.body === "truncate");
          const finishReason = step.last && !cutsHere ? g.plan.finishReason : null;
          const written = write(
            p.streamTokens(g.ctx, {
              tokens: step.tokens,
              first: step.first,
              finish: finishReason,
              completionTokens: run.usageTokens(step.sent),
              textOffset,
            }),
          );
          if (written) run.wrote();
          for (const t of step.tokens) textOffset += t.text.length;
          if (step.first && g.faults.body === "reset") {
            await sleepUntil(nowMs() + RESET_AFTER_MS, g.state.closing.signal);
            return finish("reset", "abort");
          }
          if (step.first && g.faults.stallMs > 0) g.source.pause(g.faults.stallMs);
          if (halfDone || step.sent < half) continue;
          halfDone = true;
          if (g.faults.body === "error-event") {
            const e = p.streamError(g.ctx);
            // No error events: the engine re-raises and its server drops the connection mid-body
            // (trtllm-serve under uvicorn: the chunked body is never terminated).
            if (e.events.length === 0) {
              // The tokens already queued go out first (an error discards what is still queued).
              await sleepUntil(nowMs() + RESET_AFTER_MS, g.state.closing.signal);
              return finish("reset", "abort");
            }
            write(e.done ? [...e.events, SSE_DONE] : e.events);
            return finish("close", "abort");
          }
          if (g.faults.body === "truncate") return finish("close", "abort");
          if (g.faults.body === "malformed") write([malformedEvent(p.sampleChunk(g.ctx))]);
        }
        if (gone || g.state.closing.signal.aborted || run.sent < g.plan.outputLen) {
          return finish(g.state.closing.signal.aborted ? "reset" : "close", "abort");
        }
        write(p.streamEnd(g.ctx, run.completion()));
        finish("close", "complete");
      })().catch(() => finish("reset", "abort"));
    },
    pull() {
      const wake = pulled;
      pulled = null;
      wake?.();
    },
    cancel() {
      gone = true;
      run.end("abort");
      const wake = pulled;
      pulled = null;
      wake?.();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** A body that sends `text` and then ends cleanly, or dies (reset). */
function bodyThen(text: string, end: "close" | "reset"): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      if (text) controller.enqueue(new TextEncoder().encode(text));
      if (end === "close") return controller.close();
      await new Promise((r) => setTimeout(r, RESET_AFTER_MS));
      controller.error(resetError());
    },
  });
}

/**
 * Answers `stream: false`: waits until the last token is due, then sends one JSON body.
 * (It runs to the end even if the client leaves: watching request.signal makes Deno warn.)
 * Faults: stall delays it, reset kills the connection after the headers, error-event answers the
 * personality's 500, malformed sends the first half of the JSON and ends, truncate sends it and
 * drops the connection, usage-mismatch
 * inflates the usage. The one body write is stamped as both first and last token write (the
 * request log), just before the Response is handed over.
 */
export async function wholeResponse(g: Generation): Promise<Response> {
  const run = new Run(g);
  const tokens: OutputToken[] = [];
  for (;;) {
    const step = await run.next();
    if (!step) break;
    tokens.push(...step.tokens);
    if (step.first && g.faults.stallMs > 0) g.source.pause(g.faults.stallMs);
  }
  const complete = run.sent >= g.plan.outputLen;
  const outcome = complete && g.faults.body === null ? "complete" : "abort";
  if (!complete) {
    run.end(outcome);
    return new Response(bodyThen("", "reset"), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }
  const response = wholeBody(g, run, tokens);
  if (g.faults.body !== "reset" && g.faults.body !== "error-event") run.wrote();
  run.end(outcome);
  return response;
}

function wholeBody(g: Generation, run: Run, tokens: OutputToken[]): Response {
  const p = g.state.personality;
  const headers = { "content-type": "application/json" };
  switch (g.faults.body) {
    case "reset":
      return new Response(bodyThen("", "reset"), { status: 200, headers });
    case "error-event": {
      const e = p.faultError(500);
      return jsonResponse(e.status, e.body);
    }
    case "truncate":
    case "malformed": {
      // malformed: half a JSON body, ended cleanly; truncate: the connection dies after half of it.
      const json = JSON.stringify(p.whole(g.ctx, { ...run.completion(), tokens }));
      return new Response(bodyThen(json.slice(0, Math.floor(json.length / 2)), g.faults.body === "truncate" ? "reset" : "close"), {
        status: 200,
        headers,
      });
    }
    default:
      return jsonResponse(200, p.whole(g.ctx, { ...run.completion(), tokens }));
  }
}
