/**
 * Which HTTP client measures (IK_HTTP_CLIENT): ik's HTTP/1.1 client by default, the runtime's
 * fetch when asked or when an HTTP proxy is set, and an unknown value refused by the binary
 * (exit 64, one line naming the variable and the values it takes).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { httpClientEnvProblem, runtime } from "../../lib/runtime/mod.ts";
import { measuredFetchChoice } from "../../lib/runtime/_fetch_choice.ts";
import { runIk } from "../_helpers/ik.ts";

test("the default is ik's HTTP/1.1 client; IK_HTTP_CLIENT=fetch or an HTTP proxy picks the runtime's fetch", () => {
  assert.equal(measuredFetchChoice({}), "h1");
  assert.equal(measuredFetchChoice({ IK_HTTP_CLIENT: "h1" }), "h1");
  assert.equal(measuredFetchChoice({ IK_HTTP_CLIENT: " FETCH " }), "fetch");
  assert.equal(measuredFetchChoice({ http_proxy: "http://proxy:3128" }), "fetch");
  assert.equal(measuredFetchChoice({ HTTP_PROXY: "http://proxy:3128" }), "fetch");
  assert.equal(measuredFetchChoice({ HTTP_PROXY: "" }), "h1");
  assert.equal(httpClientEnvProblem({}), null);
  assert.equal(httpClientEnvProblem({ IK_HTTP_CLIENT: "fetch" }), null);
  assert.match(httpClientEnvProblem({ IK_HTTP_CLIENT: "curl" }) ?? "", /unknown HTTP client 'curl'/);
});

test("on Bun the runtime's measured client is ik's HTTP/1.1 client unless the environment says otherwise", { skip: runtime.name !== "bun" }, () => {
  const asked = measuredFetchChoice(runtime.envAll());
  assert.equal(typeof (runtime.fetch as { closeIdle?: unknown }).closeIdle === "function", asked === "h1");
});

test("the binary refuses an unknown IK_HTTP_CLIENT with exit 64 and one line saying what to set", async () => {
  const r = await runIk(["bench", "serve", "--base-url", "http://127.0.0.1:9", "--model", "m"], { env: { IK_HTTP_CLIENT: "curl" } });
  assert.equal(r.code, 64, r.stderr);
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.match(r.stderr, /^ik: env IK_HTTP_CLIENT: unknown HTTP client 'curl'; set it to h1 .* or fetch/);
});
