/**
 * Convenience forms of the SSE parser for code that is not on the hot path (tests, the models
 * check, tools): an async iterator over a byte stream, and an encoder for servers such as the mock.
 * The client's streaming loop uses {@link SseParser} directly, which allocates no event objects.
 * @module
 */
import { SseParser } from "./parser.ts";

/** One parsed server-sent event. */
export interface SseEvent {
  /** The data lines joined with "\n". */
  data: string;
  /** The event type ("message" unless an `event:` field said otherwise). */
  event: string;
  /** The last event id seen on the stream so far ("" when none). */
  id: string;
}

/**
 * Iterates over the events of an SSE byte stream, in order.
 *
 * @example
 * ```ts
 * const res = await fetch(url, { method: "POST", body });
 * for await (const ev of sseEvents(res.body!)) if (ev.data === "[DONE]") break;
 * ```
 */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<SseEvent, void, undefined> {
  let queue: SseEvent[] = [];
  const parser: SseParser = new SseParser({
    onEvent: (data, event) => queue.push({ data, event, id: parser.lastEventId }),
  });
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) {
        finished = true;
        parser.end();
      } else {
        parser.pushBytes(r.value);
      }
      if (queue.length > 0) {
        const ready = queue;
        queue = [];
        yield* ready;
      }
      if (finished) return;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** Parses a whole SSE text (or bytes) at once and returns its events. */
export function parseSseText(input: string | Uint8Array): SseEvent[] {
  const out: SseEvent[] = [];
  const parser: SseParser = new SseParser({
    onEvent: (data, event) => out.push({ data, event, id: parser.lastEventId }),
  });
  if (typeof input === "string") parser.pushText(input);
  else parser.pushBytes(input);
  parser.end();
  return out;
}

/**
 * Encodes one event the way OpenAI-compatible servers write it: `data: <payload>\n\n`.
 * Payloads with newlines become several `data:` lines, so the receiver gets the same string back.
 * @param data the payload (a JSON text or "[DONE]")
 * @param event an optional event type (`event: error` for instance)
 */
export function encodeSseEvent(data: string, event?: string): string {
  const head = event ? `event: ${event}\n` : "";
  if (data.indexOf("\n") === -1 && data.indexOf("\r") === -1) return `${head}data: ${data}\n\n`;
  return head + data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("") + "\n";
}
