/**
 * One SSE line is capped (CONTRACTS.md "Limits": 64 MiB, past it `protocol`), and memory stays
 * bounded: the client stops reading the body at the cap. A unit test with a small injected cap,
 * and one child process under `prlimit` that meets a 1 GiB line with the real cap, so a regression
 * fails one test instead of taking the machine. Budget: ~2 s.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as net from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Buffer } from "node:buffer";
import { parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { ROOT } from "../_helpers/ik.ts";
import { chatChunk, DONE } from "./_raw_server.ts";

const enc = new TextEncoder();

/** A body that starts one line and never ends it; counts the reads the client asked for. */
function endlessLine(first: string) {
  let pulls = 0;
  let cancelled = false;
  const block = new Uint8Array(4096).fill(0x61);
  const body = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      pulls++;
      // Bounded either way: a client that reads on past the cap meets an error, not a hang.
      if (pulls > 2000) ctrl.error(new Error("read on far past the cap"));
      else ctrl.enqueue(pulls === 1 ? enc.encode(first) : block);
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { body, pulls: () => pulls, cancelled: () => cancelled };
}

test("a line over the (injected) cap fails as protocol and the body is cancelled, not read on", async () => {
  const src = endlessLine(chatChunk({ content: "a" }) + 'data: {"choices":[{"delta":{"content":"');
  const r = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, {
    fetch: () => Promise.resolve(new Response(src.body, { headers: { "content-type": "text/event-stream" } })),
    maxSseLineBytes: 64 * 1024,
    idleTimeoutMs: 5000,
    timeoutMs: 10_000,
  });
  assert.equal(r.ok, false);
  assert.equal(r.errorKind, "protocol");
  assert.equal(r.error, "SSE line over 65536 bytes");
  assert.equal(r.nTokenEvents, 1, "what came before the line still counts");
  assert.equal(requestRow(r).error_kind, "protocol");
  assert.ok(src.pulls() <= 20, `${src.pulls()} reads of 4 KiB for a 64 KiB cap`);
  assert.equal(src.cancelled(), true, "the body was cancelled");
});

test("a line at the cap is fine", async () => {
  const text = `data: ${JSON.stringify({ choices: [{ delta: { content: "x".repeat(1000) }, finish_reason: "stop" }] })}\n\n`;
  const cap = text.indexOf("\n");
  const r = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, {
    fetch: () =>
      Promise.resolve(new Response(text + DONE, { headers: { "content-type": "text/event-stream" } })),
    maxSseLineBytes: cap,
  });
  assert.equal(r.ok, true, r.error ?? "");
  const over = await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, {
    fetch: () =>
      Promise.resolve(new Response(text + DONE, { headers: { "content-type": "text/event-stream" } })),
    maxSseLineBytes: cap - 1,
  });
  assert.equal(over.errorKind, "protocol");
});

/** A loopback server that answers every request with one SSE line of `totalBytes`, never ended. */
async function hugeLineServer(totalBytes: number): Promise<{ port: number; sent: () => number; close: () => Promise<void> }> {
  const block = Buffer.alloc(1 << 20, 0x61);
  const frame = Buffer.concat([Buffer.from(block.length.toString(16) + "\r\n"), block, Buffer.from("\r\n")]);
  const sockets = new Set<net.Socket>();
  let sent = 0;
  const srv = net.createServer((sock) => {
    sockets.add(sock);
    sock.on("error", () => {});
    sock.on("close", () => sockets.delete(sock));
    sock.once("data", async () => {
      const head = 'data: {"choices":[{"delta":{"content":"';
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
      sock.write(`${head.length.toString(16)}\r\n${head}\r\n`);
      for (let n = 0; n < totalBytes && !sock.destroyed; n += block.length) {
        sent += block.length;
        if (!sock.write(frame)) {
          await new Promise<void>((ok) => {
            const done = () => {
              sock.off("drain", done);
              sock.off("close", done);
              ok();
            };
            sock.on("drain", done);
            sock.on("close", done);
          });
        }
      }
      sock.destroy();
    });
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
  return {
    port: (srv.address() as net.AddressInfo).port,
    sent: () => sent,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        srv.close(() => ok());
      }),
  };
}

const hasPrlimit = spawnSync("prlimit", ["--version"], { stdio: "ignore" }).status === 0;

describe("the real 64 MiB cap, in a child under prlimit", () => {
  let srv: Awaited<ReturnType<typeof hugeLineServer>>;
  before(async () => {
    srv = await hugeLineServer(1024 * 1024 * 1024);
  });
  after(async () => {
    await srv.close();
  });

  test("a 1 GiB line: protocol 'SSE line over 64 MiB', within the memory limit", { skip: hasPrlimit ? false : "prlimit is not installed" }, async () => {
    // Bun runs in 1 GiB of address space. Deno cannot: V8 and Oilpan reserve tens of GiB of address
    // space at start, so --as would kill it before any work; RLIMIT_DATA bounds what it writes.
    // Without the cap the line is buffered whole and the child dies (Bun) or runs past the limit.
    const limit = runtime.name === "deno" ? `--data=${768 * 2 ** 20}` : `--as=${1024 * 2 ** 20}`;
    const child = join(ROOT, "tests", "client", "_line_cap_child.ts");
    const argv = runtime.name === "deno"
      ? [runtime.execPath(), "run", "-A", child]
      : [runtime.execPath(), child];
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((ok) => {
      const p = spawn("prlimit", [limit, "--", ...argv, String(srv.port)], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "", stderr = "";
      p.stdout!.on("data", (d) => (stdout += d));
      p.stderr!.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => p.kill("SIGKILL"), 60_000);
      p.on("close", (code) => {
        clearTimeout(timer);
        ok({ code, stdout, stderr });
      });
    });
    assert.equal(out.code, 0, `child under prlimit ${limit} failed: ${out.stderr.slice(-500)}`);
    const res = JSON.parse(out.stdout.trim().split("\n").pop() ?? "{}");
    assert.equal(res.errorKind, "protocol", out.stdout);
    assert.equal(res.error, "SSE line over 64 MiB");
    assert.ok(srv.sent() < 512 * 2 ** 20, `the client read on to ${srv.sent() >> 20} MiB`);
  });
});
