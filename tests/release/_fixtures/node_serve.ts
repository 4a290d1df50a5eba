/**
 * Bundled for Node by node_runtime.test.ts and run with a real `node`: the runtime shim's Node serve
 * (lib/runtime/node.ts) behind the same handler shapes ik's mock uses. Protocol on stdio:
 *   stdout `info {json}` (runtime name, version, selfArgv, args), then `listening <port>`
 *   stdin  `close\n` → closes the server (streams may be open) → stdout `closed <ms>`; then the process
 *          must end by itself: a timer or socket left behind keeps it alive and fails the test.
 */
import { stdin } from "node:process";
import { runtime } from "../../../lib/runtime/mod.ts";

const enc = new TextEncoder();
const stats = { cancelled: 0, aborted: 0 };

async function handler(req: Request): Promise<Response> {
  const url = new URL(req.url);
  req.signal.addEventListener("abort", () => stats.aborted++);
  switch (url.pathname) {
    case "/stream": {
      let timer: ReturnType<typeof setInterval> | undefined;
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        start(ctl) {
          timer = setInterval(() => ctl.enqueue(enc.encode(`data: {"i":${i++}}\n\n`)), 10);
        },
        cancel() {
          clearInterval(timer);
          stats.cancelled++;
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
    }
    case "/finite": {
      const n = Number(url.searchParams.get("n") ?? "5");
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(ctl) {
          await new Promise((r) => setTimeout(r, 2));
          if (i < n) ctl.enqueue(enc.encode(`data: ${i++}\n\n`));
          else {
            ctl.enqueue(enc.encode("data: [DONE]\n\n"));
            ctl.close();
          }
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    case "/echo": {
      const text = await req.text();
      const h = new Headers({ "x-method": req.method, "x-content-type": req.headers.get("content-type") ?? "" });
      h.append("set-cookie", "a=1");
      h.append("set-cookie", "b=2");
      return new Response(`${text.length}:${text}`, { status: 201, headers: h });
    }
    case "/throw":
      throw new Error("handler failed");
    case "/stats":
      return Response.json(stats);
    default:
      return new Response("not found", { status: 404 });
  }
}

runtime.writeStdout(
  `info ${JSON.stringify({ name: runtime.name, version: runtime.version, selfArgv: runtime.selfArgv(), args: runtime.args() })}\n`,
);
const server = await runtime.serve(handler, { port: 0 });
runtime.writeStdout(`listening ${server.port}\n`);
let buf = "";
stdin.setEncoding("utf8");
stdin.on("data", async (d: string) => {
  buf += d;
  if (!buf.includes("close\n")) return;
  stdin.destroy();
  const t0 = performance.now();
  await server.close();
  runtime.writeStdout(`closed ${Math.round(performance.now() - t0)}\n`);
});
