/**
 * The mock's Hono app: generation endpoints, `/v1/models`, health, metrics at the personality's
 * paths, and the router view (`/ready`, `/state`).
 * @module
 */
import { Hono } from "hono";
import { admit, jsonResponse } from "./generation.ts";
import { metricsAnswer } from "./metrics_render.ts";
import type { EngineName } from "./options.ts";
import { unixNow } from "./personality.ts";
import type { EndpointKind } from "./request.ts";
import { streamResponse, wholeResponse } from "./respond.ts";
import type { MockState } from "./state.ts";
import { registerTokenize } from "./tokenize.ts";

/** The version string `/version` reports for engines that have one. */
const VERSIONS: Partial<Record<EngineName, string>> = { vllm: "0.11.0", trtllm: "1.1.0", sglang: "0.5.0" };

/** What the server hands the app beside the request (see Mock.fetch). */
export type MockBindings = { bodyReadMs: number | null };

async function generate(
  state: MockState,
  kind: EndpointKind,
  request: Request,
  env: MockBindings | undefined,
): Promise<Response> {
  const intake = await admit(state, kind, request, env?.bodyReadMs ?? null);
  if ("response" in intake) return intake.response;
  const g = intake.generation;
  return g.req.stream ? streamResponse(g) : await wholeResponse(g);
}

/** A wrong method on a known path, as FastAPI (vLLM, SGLang, trtllm-serve) answers it. */
function methodNotAllowed(allow: string): Response {
  return new Response(JSON.stringify({ detail: "Method Not Allowed" }), {
    status: 405,
    headers: { "content-type": "application/json", allow },
  });
}

function notFound(engine: EngineName, method: string, path: string): Response {
  switch (engine) {
    case "llamacpp":
      return jsonResponse(404, { error: { code: 404, message: "File Not Found", type: "not_found_error" } });
    case "openai":
      return jsonResponse(404, {
        error: {
          message: `Invalid URL (${method} ${path})`,
          type: "invalid_request_error",
          param: null,
          code: null,
        },
      });
    default:
      return jsonResponse(404, { detail: "Not Found" });
  }
}

/** Builds the Hono app over one mock's state. */
export function buildApp(state: MockState): Hono<{ Bindings: MockBindings }> {
  const app = new Hono<{ Bindings: MockBindings }>();
  const o = state.opts;
  const p = state.personality;
  const createdS = unixNow();

  app.post("/v1/chat/completions", (c) => generate(state, "chat", c.req.raw, c.env));
  app.post("/v1/completions", (c) => generate(state, "completions", c.req.raw, c.env));
  app.get("/v1/models", () => jsonResponse(200, p.models(o, createdS)));
  const tokenizePaths = registerTokenize(app, o, p);

  const health = () => {
    const h = p.health(state.ready());
    return new Response(h.body === "" ? null : h.body, {
      status: h.status,
      headers: h.json ? { "content-type": "application/json" } : {},
    });
  };
  app.get("/health", health);
  if (o.engine === "llamacpp") app.get("/v1/health", health);
  const version = VERSIONS[o.engine];
  if (version) app.get("/version", () => jsonResponse(200, { version }));

  app.get(
    "/ready",
    () => (state.ready() ? jsonResponse(200, { ready: true }) : jsonResponse(503, { ready: false })),
  );
  app.get("/state", () => jsonResponse(200, { admission: state.waiting(), resident: state.running() }));

  const metrics = (path: string) => {
    const a = metricsAnswer(path, state.snapshot(), state.metrics, state.io.pid ?? 0);
    return a
      ? new Response(a.body, { status: a.status, headers: a.headers })
      : notFound(o.engine, "GET", path);
  };
  app.get("/metrics", () => metrics("/metrics"));
  app.get("/prometheus/metrics", () => metrics("/prometheus/metrics"));

  // Registered after every real route, so they only see the methods those routes do not take
  // (HEAD is answered by the GET route, as Starlette does).
  for (const path of ["/v1/chat/completions", "/v1/completions", ...tokenizePaths]) {
    app.all(path, () => methodNotAllowed("POST"));
  }
  const getPaths = ["/v1/models", "/health", "/ready", "/state", "/metrics", "/prometheus/metrics"];
  if (o.engine === "llamacpp") getPaths.push("/v1/health");
  if (version) getPaths.push("/version");
  for (const path of getPaths) app.all(path, () => methodNotAllowed("GET, HEAD"));

  app.notFound((c) => notFound(o.engine, c.req.method, c.req.path));
  app.onError((err) =>
    jsonResponse(500, {
      error: {
        message: `ik mock internal error: ${err.message}`,
        type: "InternalServerError",
        param: null,
        code: 500,
      },
    })
  );
  return app;
}
