/**
 * The mock's limits (MOCK.md "Limits"): 405 for a wrong method on a known path, 413 for a body
 * over 100 MiB (read no further, by Content-Length or counted while reading), and memory that
 * does not grow with max_tokens (the compiled mock under `prlimit --as`). Loopback only, every
 * wait bounded; about 5 s in all.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import net from "node:net";
import { describe, it } from "node:test";
import { MAX_MOCK_BODY_BYTES } from "../../lib/cli/limits.ts";
import { createMock } from "../../lib/mock/mod.ts";
import { ikBin, startArgv } from "../_helpers/ik.ts";
import { chatBody, LISTENING, rawRequest, serveMock } from "./_helpers.ts";

describe("405: a wrong method on a known path", () => {
  it("answers as vLLM's FastAPI does, with Allow; unknown paths stay 404", async () => {
    for (const engine of ["vllm", "sglang", "llamacpp", "trtllm", "openai"] as const) {
      const mock = createMock({ engine });
      try {
        const cases: [string, string, string][] = [
          ["GET", "/v1/chat/completions", "POST"],
          ["PUT", "/v1/completions", "POST"],
          ["POST", "/v1/models", "GET, HEAD"],
          ["DELETE", "/health", "GET, HEAD"],
          ["POST", "/metrics", "GET, HEAD"],
          ["POST", "/ready", "GET, HEAD"],
        ];
        for (const [method, path, allow] of cases) {
          const r = await mock.fetch(new Request(`http://mock${path}`, { method }));
          assert.equal(r.status, 405, `${engine} ${method} ${path}`);
          assert.equal(r.headers.get("allow"), allow);
          assert.deepEqual(await r.json(), { detail: "Method Not Allowed" });
        }
        assert.equal((await mock.fetch(new Request("http://mock/v1/models"))).status, 200);
        assert.equal((await mock.fetch(new Request("http://mock/nope", { method: "POST" }))).status, 404);
      } finally {
        mock.close();
      }
    }
  });
});

describe("413: a request body over 100 MiB", () => {
  it("a declared Content-Length over the limit is answered at once, before any body byte", async () => {
    const m = await serveMock({ engine: "vllm" });
    try {
      const answer = await new Promise<string>((resolve) => {
        let got = "";
        const sock = net.connect(m.port, "127.0.0.1", () => {
          // One byte past the limit (below Bun's own 128 MiB cap), and no body sent at all: a
          // server that reads before it checks would wait here until the timeout.
          sock.write(
            `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${MAX_MOCK_BODY_BYTES + 1}\r\n\r\n{`,
          );
        });
        const timer = setTimeout(() => sock.destroy(), 5000);
        sock.on("data", (d) => {
          got += d.toString("latin1");
          if (got.includes("\r\n\r\n")) {
            clearTimeout(timer);
            sock.destroy();
          }
        });
        sock.on("error", () => {});
        sock.on("close", () => resolve(got));
      });
      assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 200));
    } finally {
      await m.close();
    }
  });

  it("a streamed (chunked) body is counted while read and dropped just past the limit", async () => {
    const mock = createMock({ engine: "sglang" });
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Bounded: 300 MiB at most, far past the limit.
        if (pulled >= 300 * chunk.byteLength) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    try {
      const r = await mock.fetch(
        new Request("http://mock/v1/chat/completions", {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
          duplex: "half",
        } as RequestInit),
      );
      assert.equal(r.status, 413);
      assert.match((await r.json()).detail, /too large/);
      assert.ok(pulled > MAX_MOCK_BODY_BYTES, "it read up to the limit");
      assert.ok(pulled <= MAX_MOCK_BODY_BYTES + 4 * chunk.byteLength, `read no further: ${pulled} bytes`);
      // The mock still answers a normal request.
      const ok = await mock.fetch(
        new Request("http://mock/v1/chat/completions", {
          method: "POST",
          body: JSON.stringify(chatBody("still here", { max_tokens: 2, stream: false })),
        }),
      );
      assert.equal(ok.status, 200);
    } finally {
      mock.close();
    }
  });
});

function hasPrlimit(): boolean {
  return spawnSync("prlimit", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * The address-space cap the compiled mock runs under. Bun/JSC reserves a lot of virtual address
 * space: on this machine the unchanged mock needs about 512 MiB to start and serve; 2 GiB
 * leaves room, while a plan of 1e8 events (an object each, ≥ 48 bytes) needs over 4.8 GB.
 */
const AS_BYTES = 2 * 1024 ** 3;

describe("memory does not grow with max_tokens (prlimit --as=2GiB)", () => {
  const cases: [string, string[]][] = [
    ["timing model", ["--ttft-ms", "1", "--tpot-ms", "1"]],
    ["batching simulator", ["--max-batch", "2", "--step-ms", "1"]],
  ];
  for (const [name, flags] of cases) {
    it(
      `${name}: a stream of max_tokens 1e8 starts at once, and the mock survives the client leaving`,
      { skip: hasPrlimit() ? false : "prlimit (util-linux) is not installed" },
      async () => {
        const proc = startArgv(["prlimit", `--as=${AS_BYTES}`, ikBin()], [
          "mock",
          "--port",
          "0",
          "--max-model-len",
          "2000000000",
          ...flags,
        ]);
        try {
          const port = Number((await proc.waitFor(LISTENING, 15_000))[1]);
          // Read the first few token events, then leave (the socket is destroyed at the timeout).
          const huge = await rawRequest(
            port,
            "POST",
            "/v1/chat/completions",
            chatBody("a very long answer", { max_tokens: 100_000_000 }),
            1500,
          );
          assert.equal(huge.status, 200, `status ${huge.status}; stderr: ${proc.stderr().slice(-300)}`);
          const tokenEvents = huge.body.split("\n\n").filter((e) => e.includes('"content":" '));
          assert.ok(tokenEvents.length >= 5, `only ${tokenEvents.length} token events in 1.5 s`);
          // A whole answer that long is refused (400 on max_tokens), not built.
          const whole = await rawRequest(
            port,
            "POST",
            "/v1/chat/completions",
            chatBody("whole", { max_tokens: 100_000_000, stream: false }),
            5000,
          );
          assert.equal(whole.status, 400);
          assert.match(whole.body, /max_tokens/);
          await new Promise((r) => setTimeout(r, 200));
          const after = await rawRequest(
            port,
            "POST",
            "/v1/chat/completions",
            chatBody("still alive", { max_tokens: 3 }),
            5000,
          );
          assert.equal(after.status, 200, proc.stderr().slice(-300));
          assert.match(after.body, /data: \[DONE\]/);
        } finally {
          const r = await proc.stop("SIGTERM");
          assert.equal(
            r.code,
            130,
            `the mock died: ${JSON.stringify(r)}; stderr: ${proc.stderr().slice(-300)}`,
          );
        }
      },
    );
  }
});
