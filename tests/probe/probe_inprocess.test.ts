/**
 * runProbe in-process (fast, on the runtime running the suite): the row printed as JSON or as a
 * table, the request actually sent for an engine profile, and an interrupt ending the request
 * as `aborted`.
 */
import { IkError } from "../../lib/cli/errors.ts";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parse } from "@optique/core/parser";
import type { CommandContext } from "../../lib/commands/context.ts";
import { runProbe } from "../../lib/commands/probe.ts";
import { probeCommand } from "../../lib/commands/probe_flags.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { chatChunk, DONE, type RawServer, rawServer } from "../client/_raw_server.ts";

function ctx(
  json: boolean,
  signal = new AbortController().signal,
): CommandContext & { stdout: string; stderr: string } {
  const c = {
    runtime,
    json,
    signal,
    stdout: "",
    stderr: "",
    out: (t: string) => void (c.stdout += t),
    err: (t: string) => void (c.stderr += t),
  };
  return c;
}

function flags(args: string[]) {
  const r = parse(probeCommand(), ["probe", ...args]);
  if (!r.success) throw new Error(`parse failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

describe("runProbe", () => {
  let srv: RawServer;
  before(async () => {
    srv = await rawServer((req) =>
      // GETs (probe's /v1/models check and engine detection) get a quick 404, as from a real server.
      req.method === "GET"
        ? [{ head: 404, headers: { "content-type": "application/json" } }, {
          chunk: '{"detail":"Not Found"}',
        }, { end: true }]
        : req.path.startsWith("/slow")
        ? [
          { head: 200 },
          ...Array.from({ length: 40 }, () => [{ chunk: chatChunk({ content: "a" }) }, { wait: 25 }]).flat(),
          { end: true },
        ]
        : [
          { head: 200 },
          { chunk: chatChunk({ role: "assistant", content: "" }) },
          { chunk: chatChunk({ content: "one" }, { token_ids: [5] }) },
          { chunk: chatChunk({ content: " two" }, { token_ids: [6, 7], finish_reason: "length" }) },
          { chunk: DONE },
          { end: true },
        ]
    );
  });
  after(async () => {
    await srv.close();
  });

  test("--json prints one row; the body follows the engine profile and the flags", async () => {
    const c = ctx(true);
    const code = await runProbe(
      c,
      flags([
        "--base-url",
        `http://127.0.0.1:${srv.port}/`,
        "--model",
        "qwen",
        "--engine-kind",
        "vllm",
        "--api",
        "completions",
        "--prompt",
        "Paris is",
        "--max-tokens",
        "3",
        "--extra-body",
        '{"top_p":0.5}',
      ]),
    );
    assert.equal(code, 0, c.stderr);
    const row = JSON.parse(c.stdout);
    assert.equal(row.ok, true);
    assert.equal(row.n_tokens, 3);
    assert.equal(row.token_count_method, "ids");
    assert.equal(row.k_first, 1);
    assert.equal(row.tokens_per_event_max, 2);
    assert.equal(row.engine_kind, "vllm");
    assert.deepEqual(row.asked, {
      exact_length: ["ignore_eos", "min_tokens"],
      token_ids: { via: "free", fields: ["return_token_ids"] },
    });
    const sent = srv.requests[srv.requests.length - 1];
    assert.equal(sent.path, "/v1/completions");
    const body = JSON.parse(sent.body);
    assert.equal(body.prompt, "Paris is");
    assert.equal(body.model, "qwen");
    assert.equal(body.max_tokens, 3);
    assert.equal(body.min_tokens, 3);
    assert.equal(body.return_token_ids, true);
    assert.equal(body.top_p, 0.5);
    assert.equal(body.temperature, 0);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(sent.headers.authorization, undefined, "no key unless --api-key-env");
  });

  test("human output is a table", async () => {
    const c = ctx(false);
    assert.equal(
      await runProbe(c, flags(["--base-url", `http://127.0.0.1:${srv.port}`, "--model", "m"])),
      0,
      c.stderr,
    );
    assert.match(c.stdout, /TTFT .*ms \(includes connection set-up\)/);
    assert.match(c.stdout, /3 \(ids\)/);
    assert.match(c.stdout, /text: "one two"/);
  });

  test("an interrupt ends the request as aborted (the CLI then exits 130)", async () => {
    const ac = new AbortController();
    const c = ctx(true, ac.signal);
    const t = setTimeout(() => ac.abort(), 120);
    const code = await runProbe(
      c,
      flags(["--base-url", `http://127.0.0.1:${srv.port}/slow`, "--model", "m", "--engine-kind", "generic"]),
    );
    clearTimeout(t);
    assert.equal(code, 1);
    const row = JSON.parse(c.stdout);
    assert.equal(row.error_kind, "aborted");
    assert.ok(row.n_token_events >= 1);
  });

  test("usage errors are thrown as IkError (64) whose one line names the flag", async () => {
    const c = ctx(true);
    await assert.rejects(runProbe(c, flags(["--base-url", "nope", "--model", "m"])), (e: unknown) => {
      assert.ok(e instanceof IkError);
      assert.equal(e.code, 64);
      assert.match(e.oneLine(), /^ik: --base-url: 'nope' is not an http:\/\/ or https:\/\/ URL; /);
      return true;
    });
    assert.equal(c.stdout, "");
  });
});
