/**
 * Server text is scrubbed BEFORE it is cut to a message's length: a secret that straddles the cut
 * would no longer match the scrubber, and its first characters would be printed or stored. Covers
 * the error-body reader (lib/client/error_body.ts), `--tokenize-via` (lib/tokenize_remote), the
 * remote writer's notes (lib/live_metrics/remote_write.ts) and the label guard's messages.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { parseErrorBody } from "../../lib/client/error_body.ts";
import { parseEndpoint } from "../../lib/client/endpoint.ts";
import { clearSecrets, registerSecret } from "../../lib/evidence/scrub.ts";
import { labelNameProblem } from "../../lib/live_metrics/label_guard.ts";
import { MetricsRegistry, RemoteWriter } from "../../lib/live_metrics/mod.ts";
import { openRemoteCounter } from "../../lib/tokenize_remote/mod.ts";

afterEach(() => clearSecrets());

/** The first 6 characters of `secret` (what a cut would leave). */
const head = (secret: string) => secret.slice(0, 6);

describe("error bodies", () => {
  test("a registered secret at the 300-character cut is scrubbed whole", () => {
    const pw = "PWVAL1LONGSECRET";
    registerSecret(pw);
    for (const pad of [280, 290, 295]) {
      const info = parseErrorBody(JSON.stringify({ error: { message: "x".repeat(pad) + pw + " y", type: "t" } }), 401);
      assert.ok(!info.message.includes(head(pw)), `pad ${pad}: ${info.message.slice(-30)}`);
      const plain = parseErrorBody("z".repeat(pad) + ` password=${pw}tail`, 500);
      assert.ok(!plain.message.includes(head(pw)), `plain, pad ${pad}`);
    }
  });
  test("a name rule at the cut (api_key='…') is applied before the cut", () => {
    const info = parseErrorBody("z".repeat(280) + " api_key='NOTREGISTERED1234567'", 500);
    assert.ok(!info.message.includes("NOTREG"), info.message.slice(-30));
  });
});

describe("--tokenize-via", () => {
  test("the server's refusal is scrubbed of the API key before it is cut to 200 characters", async () => {
    const key = "sk-LEAKME123";
    const fetch = (url: string, init: RequestInit): Promise<Response> => {
      const auth = new Headers(init.headers).get("authorization")?.replace(/^Bearer /, "") ?? "";
      if (url.endsWith("/v1/models")) return Promise.resolve(Response.json({ object: "list", data: [{ id: "tiny", object: "model" }] }));
      return Promise.resolve(new Response("x".repeat(192) + auth, { status: 401 }));
    };
    const err = await openRemoteCounter(parseEndpoint("http://127.0.0.1:9/"), { engine: "vllm", apiKey: key, fetch }).then(() => null, (e) => e as Error);
    assert.ok(err, "a 401 is refused");
    assert.match(err.message, /cannot tokenize: HTTP 401 x+/);
    assert.ok(!err.message.includes("sk-LEA"), err.message.slice(-40));
  });
  test("a registered secret (not the API key) too", async () => {
    registerSecret("OTHERSECRET-abcdef");
    const fetch = (url: string): Promise<Response> =>
      Promise.resolve(url.endsWith("/v1/models") ? Response.json({ data: [{ id: "tiny" }] }) : new Response("x".repeat(190) + "OTHERSECRET-abcdef", { status: 400 }));
    const err = await openRemoteCounter(parseEndpoint("http://127.0.0.1:9/"), { engine: "vllm", fetch }).then(() => null, (e) => e as Error);
    assert.ok(err, "a 400 is refused");
    assert.ok(!err.message.includes("OTHERS"), err.message.slice(-40));
  });
});

describe("remote write notes", () => {
  test("a header's token echoed at the 160-character cut is scrubbed whole", async () => {
    const token = "SECRETHDR1LONGTOKENVALUE";
    const fetch = (_url: string, init: RequestInit): Promise<Response> => {
      const a = new Headers(init.headers).get("authorization")?.replace(/^\S+ /, "") ?? "";
      return Promise.resolve(new Response("x".repeat(145) + " " + a, { status: 401 }));
    };
    const rw = new RemoteWriter({ url: "http://127.0.0.1:9/api/v1/write", headers: { Authorization: `Bearer ${token}` }, fetch, maxAttempts: 1 });
    const reg = new MetricsRegistry({ constLabels: { run: "rw" } });
    reg.gauge({ name: "ik_test_value", help: "v", labelNames: ["i"] }).set({ i: "0" }, 1);
    try {
      rw.push(reg.snapshot(Date.now()));
      await rw.idle();
      const note = rw.stats().lastError ?? "";
      assert.match(note, /^HTTP 401: x+ \*\*\*/);
      assert.ok(!note.includes("SECRET"), note);
    } finally {
      await rw.close();
    }
  });
});

describe("label guard", () => {
  test("a refused label name is scrubbed before it is cut to 40 characters", () => {
    registerSecret("sk-abcdefghijklmnopqrstuvwxyz0123456789");
    const why = labelNameProblem("x".repeat(30) + "-sk-abcdefghijklmnopqrstuvwxyz0123456789") ?? "";
    assert.match(why, /is not \[a-zA-Z_\]/);
    assert.ok(!why.includes("sk-abc"), why);
  });
});
