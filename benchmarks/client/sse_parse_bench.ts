/**
 * sse_parse_bench.ts — CPU per SSE event of ik's parsing path, without the network: the bytes of
 * a vLLM-shaped 256-token chat stream (the same chunk shapes and words as
 * ../shared/perf/sse_server.mjs: role chunk, 256 content chunks, usage chunk, [DONE]) are fed to
 * each parser in reads of a given size, many times over, and the loop is timed.
 *
 *   bun benchmarks/client/sse_parse_bench.ts [--rounds R] [--slice-ms MS] [--read-bytes N,N,...]
 *   deno run -A benchmarks/client/sse_parse_bench.ts [...]
 *
 * Variants (each prints events/s and µs/event per read size):
 *   parser        SseParser alone (decode + split + slice), events counted
 *   parser+json   SseParser + JSON.parse per event
 *   ik-state      SseParser + the client's StreamState (JSON.parse, token/ids/usage/finish
 *                 inspection, a timestamp per read, every token event logged): the real hot path
 *   careful-ts    ../shared/perf/client_min.ts's loop (decode, indexOf("\n\n"), slice, JSON.parse)
 *   eventsource   eventsource-parser@4.1.3 (createParser) + JSON.parse
 * Read sizes: 255 B is about one event per read (the "separate writes" regime of BASELINES.md);
 * 65536 B is the coalesced regime. A benchmark, not a test: it prints and exits 0.
 * @module
 */
import { createParser } from "eventsource-parser";
import { StreamState } from "../../lib/client/_stream_state.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { SseParser } from "../../lib/sse/mod.ts";

const WORDS = [
  " The",
  " quick",
  " brown",
  " fox",
  " jumps",
  " over",
  " the",
  " lazy",
  " dog",
  ".",
  " In",
  " a",
  " distributed",
  " serving",
  " system",
  ",",
  " throughput",
  " and",
  " latency",
  " trade",
  " off",
  " against",
  " each",
  " other",
  ";",
  ' "',
  "quoted",
  '"',
  " text",
  "\n",
  " naïve",
  " café",
  " 42",
  " tokens",
  " per",
  " second",
  " —",
  " fine",
  "!",
];
const TOKENS = 256;
const EVENTS_PER_STREAM = TOKENS + 3;

function streamBytes(): Uint8Array {
  const head = (o: string) =>
    `{"id":"chatcmpl-8d6f0a7c2b7e4e4f9b8f3c1d2e5a6b7c","object":"chat.completion.chunk","created":1732870000,"model":"meta-llama/Meta-Llama-3.1-8B-Instruct",${o}`;
  let s = `data: ${
    head(
      '"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}',
    )
  }\n\n`;
  for (let i = 0; i < TOKENS; i++) {
    const last = i === TOKENS - 1;
    s += `data: ${
      head(
        `"choices":[{"index":0,"delta":{"content":${
          JSON.stringify(WORDS[i % WORDS.length])
        }},"logprobs":null,"finish_reason":${last ? '"length","stop_reason":null' : "null"}}]}`,
      )
    }\n\n`;
  }
  s += `data: ${
    head(
      `"choices":[],"usage":{"prompt_tokens":32,"total_tokens":${
        32 + TOKENS
      },"completion_tokens":${TOKENS}}}`,
    )
  }\n\n`;
  s += "data: [DONE]\n\n";
  return new TextEncoder().encode(s);
}

function split(bytes: Uint8Array, n: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += n) out.push(bytes.slice(i, i + n));
  return out;
}

type Variant = (reads: Uint8Array[]) => number; // returns events seen (checked)

const variants: Record<string, Variant> = {
  parser(reads) {
    let n = 0;
    const p = new SseParser({ onEvent: () => void n++ });
    for (const r of reads) p.pushBytes(r);
    p.end();
    return n;
  },
  "parser+json"(reads) {
    let n = 0;
    const p = new SseParser({
      onEvent: (d) => {
        if (d !== "[DONE]") JSON.parse(d);
        n++;
      },
    });
    for (const r of reads) p.pushBytes(r);
    p.end();
    return n;
  },
  "ik-state"(reads) {
    const st = new StreamState();
    const p = new SseParser(st);
    for (const r of reads) {
      st.tRead = performance.now();
      p.pushBytes(r);
    }
    p.end();
    if (st.log.length !== TOKENS || st.failKind !== null || !st.sawDone) {
      throw new Error(`ik-state: ${st.log.length} token events, ${st.failMessage}`);
    }
    return st.nSseEvents;
  },
  "careful-ts"(reads) {
    const dec = new TextDecoder();
    let buf = "", n = 0, t = 0, last = 0;
    for (const r of reads) {
      buf += dec.decode(r, { stream: true });
      let start = 0, i: number;
      while ((i = buf.indexOf("\n\n", start)) >= 0) {
        const ev = buf.slice(start, i);
        start = i + 2;
        if (!ev.startsWith("data: ")) continue;
        last = performance.now();
        n++;
        const data = ev.slice(6);
        if (data === "[DONE]") continue;
        const j = JSON.parse(data);
        const c = j.choices[0]?.delta?.content;
        if (c) t++;
      }
      if (start) buf = buf.slice(start);
    }
    if (t !== TOKENS || last < 0) throw new Error("careful-ts: wrong count");
    return n;
  },
  eventsource(reads) {
    const dec = new TextDecoder();
    let n = 0;
    const p = createParser({
      onEvent: (e) => {
        if (e.data !== "[DONE]") JSON.parse(e.data);
        n++;
      },
    });
    for (const r of reads) p.feed(dec.decode(r, { stream: true }));
    return n;
  },
};

function arg(name: string, dflt: string): string {
  const a = runtime.args();
  const i = a.indexOf(name);
  return i >= 0 && a[i + 1] ? a[i + 1] : dflt;
}

/** µs per event of one timed slice of about `ms` milliseconds. */
function slice(fn: Variant, reads: Uint8Array[], ms: number, name: string): number {
  let events = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let k = 0; k < 10; k++) {
      const n = fn(reads);
      if (n !== EVENTS_PER_STREAM) throw new Error(`${name}: ${n} events`);
      events += n;
    }
    t = performance.now();
  }
  return ((t - t0) * 1000) / events;
}

// The variants run interleaved in short slices, round after round, so a noisy neighbour (this
// is often a shared 2-CPU box) hits them all alike; the minimum over rounds is the cost with the
// least interference, the median shows the spread.
const rounds = Number(arg("--rounds", "15"));
const sliceMs = Number(arg("--slice-ms", "60"));
const readSizes = arg("--read-bytes", "255,4096,65536").split(",").map(Number);
const bytes = streamBytes();
runtime.writeStdout(
  `# ${runtime.name} ${runtime.version}: ${bytes.length} B per stream, ${EVENTS_PER_STREAM} events; ` +
    `${rounds} interleaved rounds of ${sliceMs} ms per variant\n`,
);
runtime.writeStdout(
  `${"variant".padEnd(12)} ${"read B".padStart(7)} ${"events/s (best)".padStart(16)} ${"us/event min".padStart(13)} ${"median".padStart(8)}\n`,
);
for (const size of readSizes) {
  const reads = split(bytes, size);
  const names = Object.keys(variants);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) for (let w = 0; w < 300; w++) variants[n](reads); // warm-up (JIT)
  for (let r = 0; r < rounds; r++) for (const n of names) samples[n].push(slice(variants[n], reads, sliceMs, n));
  for (const n of names) {
    const xs = samples[n].sort((a, b) => a - b);
    const min = xs[0];
    const med = xs[Math.floor((xs.length - 1) / 2)];
    runtime.writeStdout(
      `${n.padEnd(12)} ${String(size).padStart(7)} ${Math.round(1e6 / min).toLocaleString("en-US").padStart(16)} ${
        min.toFixed(3).padStart(13)
      } ${med.toFixed(3).padStart(8)}\n`,
    );
  }
}
