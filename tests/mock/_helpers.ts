/**
 * Helpers for the mock's tests: start `ik mock` (the compiled binary) on a free loopback port,
 * talk raw HTTP/1.1 over node:net with a timestamp on every byte chunk, split SSE streams,
 * read the engine transcripts. Loopback only; every wait is bounded.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { createMock, type MockOptions } from "../../lib/mock/mod.ts";
import type { Mock } from "../../lib/mock/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { ikBin, type IkProcess, ROOT, startArgv } from "../_helpers/ik.ts";

/** A running `ik mock` process. */
export interface MockProc {
  port: number;
  base: string;
  proc: IkProcess;
  stop(): Promise<{ code: number | null; signal: string | null }>;
}

/** The one line `ik mock` prints once listening. */
export const LISTENING = /ik mock: listening on http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Starts the compiled `ik mock --port 0 ARGS` from `bin` (default the binary under test) and waits
 * for its listening line.
 */
export async function startMock(args: string[], timeoutMs = 15_000, bin: string = ikBin()): Promise<MockProc> {
  const proc = startArgv([bin], ["mock", "--port", "0", ...args]);
  const m = await proc.waitFor(LISTENING, timeoutMs);
  const port = Number(m[1]);
  return { port, base: `http://127.0.0.1:${port}`, proc, stop: () => proc.stop("SIGTERM") };
}

/** A mock served on a real loopback port inside this process. */
export interface InProcessMock {
  mock: Mock;
  port: number;
  base: string;
  close(): Promise<void>;
}

/** Serves createMock(opts) on 127.0.0.1:0 through the runtime shim. */
export async function serveMock(opts: Partial<MockOptions>): Promise<InProcessMock> {
  const mock = createMock({ ...opts, host: "127.0.0.1", port: 0 });
  const served = await runtime.serve(mock.fetch, { hostname: "127.0.0.1", port: 0 });
  return {
    mock,
    port: served.port,
    base: `http://127.0.0.1:${served.port}`,
    close: async () => {
      mock.close();
      await served.close();
    },
  };
}

/** One read from the socket, with its arrival time (ms since the request was written). */
export interface TimedBytes {
  atMs: number;
  text: string;
}

/** A raw HTTP/1.1 exchange. */
export interface RawExchange {
  /** Status code (0 if no status line arrived). */
  status: number;
  /** Header block as received (lower-cased names). */
  headers: Record<string, string>;
  /** When the header block was complete, ms. */
  headersAtMs: number;
  /** Every socket read. */
  reads: TimedBytes[];
  /** The de-chunked body. */
  body: string;
  /** Body pieces with the time their chunk's bytes arrived. */
  bodyPieces: TimedBytes[];
  /** The zero-length terminating chunk arrived (a clean end of a chunked body). */
  terminated: boolean;
  /** The socket failed (e.g. ECONNRESET) rather than closing. */
  socketError: string | null;
  /** When the socket closed, ms. */
  closedAtMs: number;
  /** performance.now() when the request was written (every other time is relative to it). */
  sentAt: number;
}

/** Sends one request over a fresh socket and records everything that comes back (until close or timeoutMs). */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const payload = body === undefined ? "" : JSON.stringify(body);
    const reads: TimedBytes[] = [];
    let socketError: string | null = null;
    let t0 = 0;
    const sock = net.connect(port, "127.0.0.1", () => {
      t0 = performance.now();
      sock.write(
        `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${
          Buffer.byteLength(payload)
        }\r\nConnection: close\r\n\r\n${payload}`,
      );
    });
    const timer = setTimeout(() => sock.destroy(), timeoutMs);
    sock.on("data", (d) => reads.push({ atMs: performance.now() - t0, text: d.toString("latin1") }));
    sock.on("error", (e) => (socketError = (e as NodeJS.ErrnoException).code ?? e.message));
    sock.on("close", () => {
      clearTimeout(timer);
      resolve({ ...parseExchange(reads, socketError, performance.now() - t0), sentAt: t0 });
    });
  });
}

function parseExchange(
  reads: TimedBytes[],
  socketError: string | null,
  closedAtMs: number,
): Omit<RawExchange, "sentAt"> {
  const all = reads.map((r) => r.text).join("");
  const headEnd = all.indexOf("\r\n\r\n");
  const out: Omit<RawExchange, "sentAt"> = {
    status: 0,
    headers: {},
    headersAtMs: -1,
    reads,
    body: "",
    bodyPieces: [],
    terminated: false,
    socketError,
    closedAtMs,
  };
  if (headEnd < 0) return out;
  const lines = all.slice(0, headEnd).split("\r\n");
  out.status = Number(lines[0].split(" ")[1]);
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    out.headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  // Time each byte offset arrived.
  const offsets: { end: number; atMs: number }[] = [];
  let pos = 0;
  for (const r of reads) offsets.push({ end: pos += r.text.length, atMs: r.atMs });
  const timeAt = (offset: number) => offsets.find((o) => o.end > offset)?.atMs ?? -1;
  out.headersAtMs = timeAt(headEnd + 3);
  let i = headEnd + 4;
  const decoder = (s: string) => Buffer.from(s, "latin1").toString("utf8");
  if (out.headers["transfer-encoding"] !== "chunked") {
    out.body = decoder(all.slice(i));
    if (out.body) out.bodyPieces.push({ atMs: timeAt(all.length - 1), text: out.body });
    out.terminated = true;
    return out;
  }
  for (;;) {
    const lineEnd = all.indexOf("\r\n", i);
    if (lineEnd < 0) break;
    const size = parseInt(all.slice(i, lineEnd), 16);
    if (Number.isNaN(size)) break;
    if (size === 0) {
      out.terminated = true;
      break;
    }
    const start = lineEnd + 2;
    if (start + size > all.length) break;
    const piece = decoder(all.slice(start, start + size));
    out.bodyPieces.push({ atMs: timeAt(start + size - 1), text: piece });
    out.body += piece;
    i = start + size + 2;
  }
  return out;
}

/** One SSE event: its data text, parsed JSON (or undefined when not JSON), the raw event text. */
export interface SseEvent {
  data: string;
  json: unknown;
  raw: string;
  atMs: number;
}

/** Splits an SSE body into events (`data: …` blocks ended by a blank line). */
export function splitSse(body: string, pieces: TimedBytes[] = []): SseEvent[] {
  const events: SseEvent[] = [];
  let offset = 0;
  const ends: { end: number; atMs: number }[] = [];
  for (const p of pieces) ends.push({ end: offset += p.text.length, atMs: p.atMs });
  let pos = 0;
  for (const raw of body.split(/(?<=\n\n)/)) {
    pos += raw.length;
    if (!raw.trim()) continue;
    const data = raw.replace(/^data: ?/, "").replace(/\s+$/, "");
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      json = undefined;
    }
    events.push({ data, json, raw, atMs: ends.find((e) => e.end >= pos)?.atMs ?? -1 });
  }
  return events;
}

/** Reads a transcript from tests/testdata/engines. */
export function fixture(path: string): string {
  return readFileSync(join(ROOT, "tests", "testdata", "engines", path), "utf8");
}

/** A chat request body. */
export function chatBody(content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "mock-model", messages: [{ role: "user", content }], stream: true, ...extra };
}

/** The text of the token-bearing chunks of a chat or completions stream. */
export function streamedText(events: SseEvent[]): string {
  let s = "";
  for (const e of events) {
    const c = (e.json as { choices?: { delta?: { content?: string | null }; text?: string }[] } | undefined)
      ?.choices?.[0];
    s += c?.delta?.content ?? c?.text ?? "";
  }
  return s;
}

/** The median of some numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
