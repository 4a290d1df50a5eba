/**
 * `npm run bench:node-lag`: where the Node build's TTFT lag comes from, stage by stage, on Node
 * itself (the Node that the Node build embeds, run from .bun-cache after `npm run release` or
 * `bun scripts/release.ts --host-node-only`; NODE=path picks another).
 *
 * A stamping server (a separate process) answers each POST: it stamps when it has read the
 * request body (`recv`), sends the head and a role chunk, and 20 ms later one token event carrying
 * the wall time of its own write (`sent`), then [DONE]. Both stamps are the host's wall clock
 * (timeOrigin + now), as the client's are, so per request:
 * - send leg = recv − the client's wall time just before it called fetch;
 * - receive leg = the client's wall time when the streaming loop timed the event − sent.
 * Rows: the client (undici's fetch, or ik's node:http client) × how the body is read (a bare
 * reader, or ik's whole streaming loop), against the server written on bare node:http or on
 * ik's Node serve shim (what `ik mock` runs on in the Node build). 1 stream, requests one after
 * another after 5 warm-ups; report only, nothing asserted.
 * @module
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseEndpoint, streamCompletion } from "../../lib/client/mod.ts";
import { nodeFetch } from "../../lib/runtime/_node_fetch.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { nearestRank } from "../../lib/stats/mod.ts";
import { cpuName } from "../_host_cpu.ts";

const wall = () => performance.timeOrigin + performance.now();
const REQUESTS = Number(process.env.IK_NODE_LAG_N ?? 200);
const WARM = 5;

function sse(res: { write(s: string): unknown }, content: string) {
  res.write(`data: {"choices":[{"index":0,"delta":{"content":"${content}"}}]}\n\n`);
}

/** The stamping server: `run.ts serve raw|shim` prints its port on stdout. */
async function serveMode(kind: string): Promise<void> {
  const reply = (recv: number) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        const enc = new TextEncoder();
        c.enqueue(enc.encode(`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n`));
        setTimeout(() => {
          c.enqueue(enc.encode(`data: {"choices":[{"index":0,"delta":{"content":"${recv}|${wall()}"}}]}\n\n`));
          c.enqueue(enc.encode(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`));
          c.close();
        }, 20);
      },
    });
  if (kind === "shim") {
    const s = await runtime.serve(async (req) => {
      await req.text();
      return new Response(reply(wall()), { headers: { "content-type": "text/event-stream" } });
    }, { port: 0 });
    process.stdout.write(`${s.port}\n`);
    return;
  }
  const srv = createServer((req, res) => {
    req.on("data", () => {});
    req.on("end", () => {
      const recv = wall();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n`);
      setTimeout(() => {
        sse(res, `${recv}|${wall()}`);
        res.end(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`);
      }, 20);
    });
  });
  srv.listen(0, "127.0.0.1", () => {
    const a = srv.address();
    process.stdout.write(`${typeof a === "object" && a ? a.port : 0}\n`);
  });
}

type Fetch = (u: string, i?: RequestInit) => Promise<Response>;

/** One request read by a bare reader: [send leg, receive leg] in ms. */
async function bare(fetchFn: Fetch, url: string): Promise<[number, number]> {
  const t0 = wall();
  const r = await fetchFn(url, { method: "POST", body: "{}", headers: { "content-type": "application/json" }, redirect: "manual" });
  const rd = r.body!.getReader();
  const dec = new TextDecoder();
  let out: [number, number] = [NaN, NaN];
  for (;;) {
    const { value, done } = await rd.read();
    if (done) break;
    const now = wall();
    const m = dec.decode(value).match(/"content":"([\d.]+)\|([\d.]+)"/);
    if (m) out = [Number(m[1]) - t0, now - Number(m[2])];
  }
  return out;
}

/** One request through ik's streaming loop: [send leg, receive leg] in ms. */
async function loop(fetchFn: Fetch, base: string): Promise<[number, number]> {
  const body = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 1, stream: true };
  const r = await streamCompletion(parseEndpoint(base), "chat", body, { fetch: fetchFn });
  const [recv, sent] = r.text.split("|").map(Number);
  const origin = performance.timeOrigin;
  return [recv - (origin + r.tSendMs), origin + (r.tFirstMs ?? NaN) - sent];
}

function q(xs: number[], pct: number): string {
  return (nearestRank(xs, pct) ?? NaN).toFixed(2);
}

async function startServer(kind: string): Promise<{ port: number; stop(): void }> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [self, "serve", kind], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((ok, fail) => {
    child.stdout.once("data", (d) => ok(Number(String(d).trim())));
    child.once("exit", (c) => fail(new Error(`server exited ${c}`)));
  });
  return { port, stop: () => child.kill("SIGKILL") };
}


async function main(): Promise<void> {
  const undici: Fetch = (u, i) => fetch(u, i);
  const ikHttp: Fetch = nodeFetch(undici);
  const lines = [
    "| server | client | body read by | send leg p50 / p90 / p99 (ms) | receive leg p50 / p90 / p99 (ms) | TTFT error p50 (ms) |",
    "|---|---|---|---:|---:|---:|",
  ];
  for (const server of ["raw", "shim"]) {
    const srv = await startServer(server);
    const base = `http://127.0.0.1:${srv.port}`;
    try {
      for (const [cname, f] of [["fetch (undici)", undici], ["ik node:http", ikHttp]] as const) {
        for (const how of ["bare reader", "ik streaming loop"]) {
          const one = () => how === "bare reader" ? bare(f, base + "/v1/chat/completions") : loop(f, base);
          for (let i = 0; i < WARM; i++) await one();
          const send: number[] = [], recv: number[] = [], sum: number[] = [];
          for (let i = 0; i < REQUESTS; i++) {
            const [s, r] = await one();
            send.push(s), recv.push(r), sum.push(s + r);
          }
          lines.push(
            `| ${server === "raw" ? "bare node:http" : "ik serve shim"} | ${cname} | ${how} | ${q(send, 50)} / ${
              q(send, 90)
            } / ${q(send, 99)} | ${q(recv, 50)} / ${q(recv, 90)} / ${q(recv, 99)} | ${q(sum, 50)} |`,
          );
        }
      }
    } finally {
      srv.stop();
    }
  }
  const head = `Node ${process.version}, host CPU: ${cpuName()}, ${REQUESTS} requests per row, ${
    new Date().toISOString().slice(0, 10)
  }`;
  const table = lines.join("\n");
  process.stdout.write(`${head}\n\n${table}\n`);
  const here = dirname(fileURLToPath(import.meta.url));
  if (process.env.IK_NODE_LAG_WRITE) await writeFile(join(here, "LATEST.md"), `${head}\n\n${table}\n`);
}

if (process.argv[2] === "serve") await serveMode(process.argv[3]);
else await main();
