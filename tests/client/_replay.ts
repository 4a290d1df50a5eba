/**
 * Test helpers for the client: the engine transcripts and their expected values, an injected
 * fetch that streams exact bytes in small uneven chunks, and a loopback server (runtime.serve)
 * that replays the transcript named by the URL prefix (`/<engine>/<file>.sse/v1/...`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runtime } from "../../lib/runtime/mod.ts";
import type { Served } from "../../lib/runtime/mod.ts";
import { ROOT } from "../_helpers/ik.ts";
import { parseEndpoint } from "../../lib/client/endpoint.ts";

/** tests/testdata/engines */
export const ENGINES_DIR: string = join(ROOT, "tests", "testdata", "engines");

/** What expected.json says about one transcript. */
export interface Expected {
  ok: boolean;
  n_tokens?: number;
  token_count_method?: string;
  n_token_events?: number;
  ended_with_done: boolean;
  error_kind?: string;
}

/** Every `<engine>/<file>.sse` under the fixtures, sorted. */
export function transcriptNames(): string[] {
  const out: string[] = [];
  for (const engine of readdirSync(ENGINES_DIR, { withFileTypes: true })) {
    if (!engine.isDirectory()) continue;
    for (const f of readdirSync(join(ENGINES_DIR, engine.name))) {
      if (f.endsWith(".sse")) out.push(`${engine.name}/${f}`);
    }
  }
  return out.sort();
}

/** The exact bytes of a transcript. */
export function transcriptBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(ENGINES_DIR, name)));
}

/** expected.json, by transcript name. */
export function expectedAll(): Record<string, Expected> {
  return JSON.parse(readFileSync(join(ENGINES_DIR, "expected.json"), "utf8"));
}

/** The API a transcript was recorded on. */
export function apiOf(name: string): "chat" | "completions" {
  return name.includes("completions-") ? "completions" : "chat";
}

/** Uneven chunk sizes (1..23 bytes), deterministic, so UTF-8 and lines split everywhere. */
export function unevenChunks(bytes: Uint8Array, seed = 7): Uint8Array[] {
  const out: Uint8Array[] = [];
  let x = seed;
  for (let i = 0; i < bytes.length;) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const n = 1 + (x % 23);
    out.push(bytes.slice(i, i + n));
    i += n;
  }
  return out;
}

/** A Response whose body yields the given chunks, one per pull, with an optional hook before each. */
export function streamingResponse(
  chunks: Uint8Array[],
  opts: {
    status?: number;
    beforeChunk?: (i: number) => void | Promise<void>;
    headers?: Record<string, string>;
  } = {},
): Response {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      if (i >= chunks.length) {
        ctrl.close();
        return;
      }
      await opts.beforeChunk?.(i);
      ctrl.enqueue(chunks[i++]);
    },
  });
  return new Response(body, {
    status: opts.status ?? 200,
    headers: { "content-type": "text/event-stream", ...opts.headers },
  });
}

/** An injected fetch that answers every request with `make()` and records what was sent. */
export function fakeFetch(
  make: () => Response,
): {
  fetch: (u: string, init: RequestInit) => Promise<Response>;
  calls: { url: string; init: RequestInit }[];
} {
  const calls: { url: string; init: RequestInit }[] = [];
  return {
    calls,
    fetch: (url, init) => {
      calls.push({ url, init });
      return Promise.resolve(make());
    },
  };
}

/** A loopback server replaying `/<engine>/<file>.sse/v1/...` with the file's exact bytes. */
export async function replayServer(): Promise<
  Served & { url(name: string): string; requests: string[]; auths: string[] }
> {
  const requests: string[] = [];
  const auths: string[] = [];
  const served = await runtime.serve(async (req) => {
    const path = new URL(req.url).pathname;
    requests.push(`${req.method} ${path}`);
    auths.push(req.headers.get("authorization") ?? "");
    await req.arrayBuffer();
    const m = /^\/([a-z]+\/[^/]+\.sse)\/v1\//.exec(path);
    if (!m) {
      return new Response(JSON.stringify({ error: { message: `no transcript for ${path}` } }), {
        status: 404,
      });
    }
    const chunks = unevenChunks(transcriptBytes(m[1]));
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (i < chunks.length) ctrl.enqueue(chunks[i++]);
        else ctrl.close();
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }, { port: 0, hostname: "127.0.0.1" });
  return Object.assign(served, {
    requests,
    auths,
    url: (name: string) => `http://127.0.0.1:${served.port}/${name}`,
  });
}

/**
 * A chat stream of `events` token chunks (`extra(i)` is spliced into chunk i's choice, e.g. its
 * token_ids), a finish chunk and [DONE], served by an injected fetch; with the endpoint and a body
 * that asks for exactly `events` tokens.
 */
export function chatStreamOf(events: number, extra: (i: number) => string = () => ""): {
  fetch: () => Promise<Response>;
  ep: ReturnType<typeof parseEndpoint>;
  body: { model: string; messages: { role: string; content: string }[]; max_tokens: number; stream: true };
} {
  const chunk = (i: number) => `data: {"choices":[{"index":0,"delta":{"content":"t${i}"},"finish_reason":null${extra(i)}}]}\n\n`;
  const sse = Array.from({ length: events }, (_, i) => chunk(i)).join("") +
    `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n`;
  return {
    fetch: () => Promise.resolve(new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } })),
    ep: parseEndpoint("http://127.0.0.1:9/v1", "--base-url"),
    body: { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: events, stream: true },
  };
}
