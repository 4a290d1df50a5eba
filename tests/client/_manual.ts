/**
 * A manual clock and an injected fetch that delivers scripted chunks at scripted times, so
 * timing rules (first token, per-event times, TPOT) can be checked exactly, with no real waiting.
 */
import {
  parseEndpoint,
  type RequestResult,
  streamCompletion,
  type StreamOptions,
} from "../../lib/client/mod.ts";
import type { Api } from "../../lib/client/mod.ts";

/** A chunk of response text delivered when the clock reads `at` ms. */
export interface Timed {
  at: number;
  text: string;
}

/** Runs one request whose response arrives as `chunks` (headers at `headersAt`, send at 0). */
export async function runScripted(
  chunks: Timed[],
  opts: { api?: Api; headersAt?: number; status?: number; contentType?: string; stream?: StreamOptions } = {},
): Promise<RequestResult> {
  let now = 0;
  const enc = new TextEncoder();
  let i = 0;
  const fetch = (_url: string, _init: RequestInit): Promise<Response> => {
    now = opts.headersAt ?? 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (i >= chunks.length) {
          ctrl.close();
          return;
        }
        now = chunks[i].at;
        ctrl.enqueue(enc.encode(chunks[i++].text));
      },
    }, { highWaterMark: 0 }); // pull only when the client reads, so `now` is the arrival of that read
    return Promise.resolve(
      new Response(body, {
        status: opts.status ?? 200,
        headers: { "content-type": opts.contentType ?? "text/event-stream" },
      }),
    );
  };
  return await streamCompletion(parseEndpoint("http://127.0.0.1:9"), opts.api ?? "chat", { model: "m" }, {
    fetch,
    clock: () => now,
    idleTimeoutMs: 60_000,
    ...opts.stream,
  });
}
