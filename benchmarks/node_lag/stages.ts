/**
 * Stage by stage, where a Node-build request's TTFT error goes: ik's own client and ik's own mock
 * (both from this checkout, on the Node that the Node build embeds), Node's http/net methods
 * wrapped to stamp each stage (_stamps.ts), 1 stream, requests one after another. Run by
 * `bash benchmarks/node_lag/run.sh stages [undici]` (undici: time Node's own fetch instead). Per
 * request, on the host's wall clock:
 *   call → socket     the loop stamped t_send → the request's bytes handed to the socket
 *   socket → head     → the mock's server parsed the request head
 *   head → body       → its 'end' event for the body (the mock may stamp its arrival earlier: below)
 *   body → arrival    → the mock's arrival stamp (recv_wall_ms)
 *   first → written   the mock stamped its first token (recv_wall_ms + first_ms) → its bytes handed to the kernel
 *   written → read    → the client's socket read carrying it
 *   read → stamped    → the streaming loop's timestamp of that event (t_send + TTFT)
 * and the sum, TTFT − first_ms, which the selftest judges. Report only.
 * @module
 */
import { stampIo, stamps } from "./_stamps.ts";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { main as ikMain } from "../../cli.ts";
import { parseEndpoint, setDefaultFetch, streamCompletion } from "../../lib/client/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { nearestRank } from "../../lib/stats/mod.ts";

const N = Number(process.env.IK_NODE_LAG_N ?? 100);
const WARM = 5;

/** Runs the stage table; `fetchKind` "undici" times Node's own fetch as the client. */
export async function stages(fetchKind: string): Promise<string> {
  const self = fileURLToPath(import.meta.url);
  // IK_NODE_LAG_PIN=1: the mock on CPU 1 (run the client under taskset -c 0), to tell CPU sharing apart.
  const argv = process.env.IK_NODE_LAG_PIN ? ["taskset", "-c", "1", process.execPath] : [process.execPath];
  const child = spawn(argv[0], [...argv.slice(1), self, "stages-mock"], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  let log = "";
  child.stderr.on("data", (d) => (err += d));
  child.stdout.on("data", (d) => (log += d));
  const port = await new Promise<number>((ok, fail) => {
    const t = setInterval(() => {
      const m = err.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) (clearInterval(t), ok(Number(m[1])));
    }, 10);
    child.once("exit", (c) => (clearInterval(t), fail(new Error(`mock exited ${c}: ${err.slice(-300)}`))));
  });
  if (fetchKind !== "undici") setDefaultFetch(runtime.fetch);
  const ep = parseEndpoint(`http://127.0.0.1:${port}`);
  const rows: { tSend: number; tFirst: number }[] = [];
  for (let i = 0; i < WARM + N; i++) {
    const body = { model: "mock-model", messages: [{ role: "user", content: `stage ${"w ".repeat(i + 1)}` }], max_tokens: 2, stream: true };
    const r = await streamCompletion(ep, "chat", body);
    rows.push({ tSend: performance.timeOrigin + r.tSendMs, tFirst: performance.timeOrigin + (r.tFirstMs ?? NaN) });
  }
  await new Promise((r) => setTimeout(r, 200));
  child.kill("SIGTERM");
  const srv = err.split("\n").filter((l) => l.startsWith("STAMP ")).map((l) => JSON.parse(l.slice(6)) as { k: string; t: number });
  const reqs = log.split("\n").filter((l) => l.startsWith("ik-request "));
  const pick = (xs: { k: string; t: number }[], k: string) => xs.filter((x) => x.k === k).map((x) => x.t);
  // The first stamp of kind k after each anchor (a request has two token events, the second later).
  const firstAfter = (xs: number[], anchors: number[]) => anchors.map((a) => xs.find((x) => x > a) ?? NaN);
  const [cw, sh, sb] = [pick(stamps, "cli_write"), pick(srv, "srv_head"), pick(srv, "srv_body")];
  // "written": the token event's bytes handed to the kernel (the socket's own write).
  const sw = firstAfter(pick(srv, "srv_token_kernel"), sb);
  const cr = firstAfter(pick(stamps, "cli_token_read"), sw);
  const names = ["call → socket", "socket → head", "head → body", "body → arrival", "first → written", "written → read", "read → stamped", "TTFT − first_ms"];
  const cols: number[][] = names.map(() => []);
  for (let i = WARM; i < rows.length; i++) {
    const m = reqs[i]?.match(/first_ms=([\d.]+) .*recv_wall_ms=([\d.]+)/);
    if (!m) continue;
    const first = Number(m[2]) + Number(m[1]);
    const v = [cw[i] - rows[i].tSend, sh[i] - cw[i], sb[i] - sh[i], Number(m[2]) - sb[i], sw[i] - first, cr[i] - sw[i], rows[i].tFirst - cr[i], rows[i].tFirst - rows[i].tSend - Number(m[1])];
    v.forEach((x, j) => cols[j].push(x));
  }
  const f = (xs: number[], p: number) => (nearestRank(xs, p) ?? NaN).toFixed(3);
  return [
    `| stage (${fetchKind === "undici" ? "Node's fetch" : "ik's node:http client"}, ${cols[0].length} requests) | p50 ms | p90 ms |`,
    "|---|---:|---:|",
    ...names.map((n, j) => `| ${n} | ${f(cols[j], 50)} | ${f(cols[j], 90)} |`),
  ].join("\n");
}

if (process.argv[2] === "stages-mock") {
  stampIo.print = true;
  await ikMain(["mock", "--port", "0", "--ttft-ms", "20", "--tpot-ms", "5", "--request-log"]);
} else {
  process.stdout.write(`${await stages(process.argv[2] ?? "ik")}\n`);
  process.exit(0);
}
