/**
 * Server-Sent Events: a fast incremental parser (bytes to events), an async-iterator form and an
 * encoder.
 *
 * @example
 * ```ts
 * import { SseParser } from "./mod.ts";
 * const seen: string[] = [];
 * const p = new SseParser({ onEvent: (data) => seen.push(data) });
 * p.pushText("data: {\"a\":1}\r\n\r\ndata: [DONE]\n\n");
 * p.end(); // seen = ['{"a":1}', "[DONE]"]
 * ```
 * @module
 */
export { formatByteCap, SseParser, type SseParserOptions, type SseSink } from "./parser.ts";
export { encodeSseEvent, parseSseText, type SseEvent, sseEvents } from "./events.ts";
