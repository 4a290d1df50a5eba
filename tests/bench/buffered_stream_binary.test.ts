/**
 * A stream that reaches ik all at once (what a buffering proxy in front of an engine does: nginx's
 * proxy_buffering): every token event arrives in one read, so no request can be timed between its
 * first and last token. Through dist/ik (Bun only: end to end, ~2 s): the record has no TPOT and
 * says why, instead of dropping the requests from TPOT silently.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";

describe("a buffered stream (dist/ik)", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let dir = "";
  let server: Server;
  let base = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-buffered-"));
    server = createServer((req, res) => {
      if (req.url?.endsWith("/models")) {
        res.setHeader("content-type", "application/json");
        return void res.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model", owned_by: "someone" }] }));
      }
      if (req.method !== "POST") {
        res.statusCode = 404;
        return void res.end("not found");
      }
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const n = Math.max(2, Math.min(16, Number(JSON.parse(body).max_tokens) || 8));
        const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
        let out = ev({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] });
        for (let i = 0; i < n; i++) out += ev({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: i === n - 1 ? "length" : null }] });
        out += ev({ id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: 10 + n } }) + "data: [DONE]\n\n";
        // The whole answer in one write, 40 ms after the request: the generation as a proxy hands it on.
        setTimeout(() => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(out);
        }, 40);
      });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    await new Promise((ok) => server.close(ok));
    await rm(dir, { recursive: true, force: true });
  });

  test("single mode: no TPOT, and a limitation naming the requests and why", async () => {
    const r = await runIk(["bench", "serve", "--base-url", base, "--model", "m", "--rounds", "2", "--warmup", "0", "--limit-per-bucket", "1", "--max-tokens", "8", "--json"],
      { env: { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") }, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(-1500));
    const rec = JSON.parse(r.stdout);
    assert.equal(rec.data.buckets.all.tpot_ms?.median ?? null, null, JSON.stringify(rec.data.buckets.all.tpot_ms));
    const line = rec.limitations.find((l: string) => /have no TPOT/.test(l));
    assert.ok(line, rec.limitations.join("\n"));
    assert.match(line, /^8 request\(s\) have no TPOT: all their tokens reached ik at once \(e\.g\. \S+: 8 tokens in 8 events, in one read\)/);
  });
});
