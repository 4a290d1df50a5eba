/**
 * The runtime's memory floor for `bench:memory`: the least a Bun program can hold while it keeps N
 * streams open against `ik mock`, compiled the way dist/ik is (`bun build --compile --smol`). It is
 * not a benchmark client: one `Bun.connect` socket per stream, one fixed request (the same body
 * shape ik sends), and per read only a look at the last bytes for the chunked body's end (no HTTP
 * parsing, no SSE, no JSON, no rows). What ik holds above this figure at the same streams is ik's
 * own; what this holds is the runtime's (its code pages, JSC's heap, a socket each).
 *
 * With a fifth argument `parse` it also does the least a client that measures every token must do,
 * in plain code: each read decoded to text, split into lines, every `data:` line JSON.parse'd, the
 * delta's text appended, the read's time written to a Float64Array reserved for the stream, and at
 * each request's end one row object serialized (and dropped). What ik holds above this figure is
 * what its own structure costs, not what the work needs.
 *
 * Usage: floor_client PORT STREAMS SECONDS MAX_TOKENS [parse]. Prints one JSON line: requests ended,
 * bytes read, tokens seen (parse only), the process's peak RSS (VmHWM, kB).
 * @module
 */
import { readFileSync } from "node:fs";

interface Sock {
  write(d: Uint8Array): number;
  end(): void;
  setNoDelay(on: boolean): boolean;
}
interface BunApi {
  connect(o: {
    hostname: string;
    port: number;
    socket: { binaryType: "uint8array"; data(s: Sock, d: Uint8Array): void; close(s: Sock): void; error(s: Sock, e: Error): void };
  }): Promise<Sock>;
}

const [port, streams, seconds, maxTokens] = process.argv.slice(2, 6).map(Number);
const PARSE = process.argv[6] === "parse";
if (!(port > 0 && streams > 0 && seconds > 0 && maxTokens > 0) || (process.argv[6] !== undefined && !PARSE)) {
  process.stderr.write("usage: floor_client PORT STREAMS SECONDS MAX_TOKENS [parse]\n");
  process.exit(64);
}
const body = JSON.stringify({
  model: "mock-model",
  messages: [{ role: "user", content: "hello ".repeat(32) }],
  max_tokens: maxTokens,
  stream: true,
  stream_options: { include_usage: true },
});
const req = new TextEncoder().encode(
  `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
);
// The chunked body ends with "0\r\n\r\n"; a read may split it, so the last 5 bytes seen are kept as a number.
const END = [48, 13, 10, 13, 10];
const bun = (globalThis as unknown as { Bun: BunApi }).Bun;
const stopAt = performance.now() + seconds * 1000;
let ended = 0, bytes = 0, open = 0, tokens = 0, rowBytes = 0;
let resolveAll: () => void;
const allDone = new Promise<void>((r) => (resolveAll = r));

/** One stream is over: the last one to end lets the program report. */
function streamOver(): void {
  if (--open === 0) resolveAll();
}

/** The parse mode's per-stream state: a decoder, the unfinished line, the text and the token times. */
class Parsed {
  decoder = new TextDecoder();
  rest = "";
  pieces: string[] = [];
  times = new Float64Array(maxTokens + 1);
  n = 0;
  tSend = performance.now();

  read(d: Uint8Array): void {
    const now = performance.now();
    const lines = (this.rest + this.decoder.decode(d, { stream: true })).split("\n");
    this.rest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: ") || line.startsWith("data: [DONE]")) continue;
      const ev = JSON.parse(line.slice(6));
      const piece = ev.choices?.[0]?.delta?.content;
      if (typeof piece === "string" && piece.length > 0) {
        this.pieces.push(piece);
        if (this.n < this.times.length) this.times[this.n++] = now;
        tokens++;
      }
    }
  }

  /** The request ended: its row, serialized, then the state starts over for the next request. */
  end(): void {
    const row = { t_send_ms: this.tSend, ttft_ms: this.n > 0 ? this.times[0] - this.tSend : null, n_tokens: this.n, text: this.pieces.join(""), itl_ms: Array.from(this.times.subarray(1, this.n), (t, i) => t - this.times[i]) };
    rowBytes += JSON.stringify(row).length;
    this.pieces = [];
    this.times = new Float64Array(maxTokens + 1);
    this.n = 0;
    this.rest = "";
    this.tSend = performance.now();
  }
}

function stream(): Promise<void> {
  const tail = new Uint8Array(5);
  const parsed = PARSE ? new Parsed() : null;
  let over = false;
  return bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      binaryType: "uint8array",
      data(s, d) {
        bytes += d.length;
        parsed?.read(d);
        for (let i = Math.max(0, d.length - 5); i < d.length; i++) {
          tail.copyWithin(0, 1);
          tail[4] = d[i];
        }
        if (tail[0] === END[0] && tail[1] === END[1] && tail[2] === END[2] && tail[3] === END[3] && tail[4] === END[4]) {
          ended++;
          tail.fill(0);
          parsed?.end();
          if (performance.now() < stopAt) s.write(req);
          else {
            over = true;
            s.end();
            streamOver();
          }
        }
      },
      // A connection the server dropped ends its stream too (else the program would wait for it).
      close() {
        if (!over) {
          over = true;
          streamOver();
        }
      },
      error() {},
    },
  }).then((s) => {
    open++;
    s.setNoDelay(true);
    s.write(req);
  });
}

await Promise.all(Array.from({ length: streams }, stream));
await allDone;
const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN);
process.stdout.write(JSON.stringify({ streams, ended, bytes, ...(PARSE ? { tokens, row_bytes: rowBytes } : {}), peak_rss_kb: hwm }) + "\n");
process.exit(0);
