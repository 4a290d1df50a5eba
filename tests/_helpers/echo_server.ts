/**
 * A loopback OpenAI-compatible server that echoes what it is sent back in every channel ik reads:
 * the Authorization header and the request body in response headers, in the streamed content, in
 * error bodies (every third completion request, and every unknown path) and on /metrics (answered
 * 200 with the echo, as a proxy that echoes headers would). For the secret canary tests: a client that
 * stores or prints any of it leaks the secret. Listens on 127.0.0.1 only.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** A running echo server. */
export interface EchoServer {
  /** `http://127.0.0.1:PORT`. */
  base: string;
  port: number;
  /** Completion requests answered so far. */
  completions(): number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok) => {
    let s = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (s += d));
    req.on("end", () => ok(s));
    req.on("error", () => ok(s));
  });
}

function chunk(model: string, delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "echo-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/** Starts the echo server; `model` is the one served name. */
export async function startEchoServer(model = "echo-model", port = 0): Promise<EchoServer> {
  let n = 0;
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const auth = String(req.headers.authorization ?? "");
    const echo = `authorization=${auth} body=${body.slice(0, 4000)}`;
    res.setHeader("x-echo-authorization", auth.replace(/[^\x20-\x7e]/g, "?"));
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    if (req.method === "GET" && path === "/v1/models") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ object: "list", data: [{ id: model, object: "model", owned_by: auth }] }));
      return;
    }
    if (req.method === "GET" && (path === "/health" || path === "/ready")) {
      res.end("ok");
      return;
    }
    if (req.method === "GET" && path === "/state") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ admission: 0, resident: 0, echo: auth }));
      return;
    }
    if (req.method === "POST" && (path === "/v1/chat/completions" || path === "/v1/completions")) {
      n++;
      if (n % 3 === 0) {
        res.statusCode = 500;
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ error: { message: `internal error, you sent ${echo}`, type: "server_error" } }));
        return;
      }
      res.setHeader("content-type", "text/event-stream");
      res.setHeader("cache-control", "no-cache");
      const chat = path === "/v1/chat/completions";
      const piece = (text: string) => chat ? chunk(model, { content: text }) : `data: ${JSON.stringify({ id: "echo-1", object: "text_completion", created: 1, model, choices: [{ index: 0, text, finish_reason: null }] })}\n\n`;
      if (chat) res.write(chunk(model, { role: "assistant", content: "" }));
      const words = [`you sent ${auth} `, `and ${body.slice(0, 4000)} `, "three ", "four "];
      for (const w of words) {
        res.write(piece(w));
        await new Promise((r) => setTimeout(r, 2));
      }
      res.write(chat ? chunk(model, {}, "length") : `data: ${JSON.stringify({ id: "echo-1", object: "text_completion", created: 1, model, choices: [{ index: 0, text: "", finish_reason: "length" }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id: "echo-1", object: chat ? "chat.completion.chunk" : "text_completion", created: 1, model, choices: [], usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 } })}\n\n`);
      res.end("data: [DONE]\n\n");
      return;
    }
    // /metrics: 200 with the echo as its text (what a header-echoing proxy answers; not Prometheus
    // text, so ik quotes its first line). Everything else: an error page that echoes the request.
    res.setHeader("content-type", "text/plain");
    if (path === "/metrics") {
      res.end(`${echo}\n`);
      return;
    }
    res.statusCode = 404;
    res.end(`no such thing (${req.method} ${path}); you sent ${echo}\n`);
  });
  await new Promise<void>((ok) => server.listen(port, "127.0.0.1", ok));
  const addr = server.address();
  const p = typeof addr === "object" && addr ? addr.port : port;
  return {
    base: `http://127.0.0.1:${p}`,
    port: p,
    completions: () => n,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections?.();
      server.close(() => ok());
    }),
  };
}
