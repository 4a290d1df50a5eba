/**
 * `ik probe` (the compiled binary) against servers that are up but do not answer in HTTP/1.x (an
 * SSH banner, a malformed status line, an HTTP/2-only server's SETTINGS frame): a `protocol`
 * failure, exit 1 by probe's failed-row rule, not "not reachable … start it" with 69. Through both
 * measured clients (ik's HTTP/1.1 client and the runtime's fetch). Spawns the binary: Bun only, as
 * the binary tests beside it. Budget: ~3 s (six probes of ~0.3 s).
 */
import assert from "node:assert/strict";
import * as net from "node:net";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { execFileSync } from "node:child_process";
import { ikBin, runIk } from "../_helpers/ik.ts";

/** Whether the binary under test is the Bun build (IK_BIN may name the Node build). */
const bunBuild = existsSync(ikBin()) && String(JSON.parse(execFileSync(ikBin(), ["--version", "--json"], { encoding: "utf8" })).runtime).startsWith("bun ");

const ANSWERS: Record<string, Uint8Array> = {
  "an SSH banner": new TextEncoder().encode("SSH-2.0-OpenSSH_9.2\r\n"),
  "a malformed status line": new TextEncoder().encode("HTTP/1.1 2OO OK\r\ncontent-type: text/event-stream\r\n\r\n"),
  // What node:http2's server answers an HTTP/1.1 request with: an empty SETTINGS frame, then GOAWAY
  // frames ("invalid connection preface").
  "an HTTP/2-only server": Uint8Array.from(
    "0000000400000000000000220700000000000000000000000001696e76616c696420636f6e6e656374696f6e20707265666163650000080700000000000000000000000002"
      .match(/../g)!.map((h) => parseInt(h, 16)),
  ),
};

describe("ik probe: a server that is up but does not speak HTTP/1.x is a protocol failure (exit 1), not unreachable (69)", { skip: runtime.name !== "bun" }, () => {
  const servers: { name: string; srv: net.Server; port: number }[] = [];
  before(async () => {
    assert.ok(existsSync(ikBin()), `${ikBin()} is missing: build it with scripts/build.sh (or set IK_BIN)`);
    for (const [name, bytes] of Object.entries(ANSWERS)) {
      // Answers the first bytes of any request with `bytes`, and closes a little later.
      const srv = net.createServer((s) => {
        s.on("error", () => {});
        s.once("data", () => {
          s.write(bytes);
          const t = setTimeout(() => s.end(), 100);
          s.once("close", () => clearTimeout(t));
        });
      });
      await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
      servers.push({ name, srv, port: (srv.address() as net.AddressInfo).port });
    }
  });
  after(async () => {
    for (const { srv } of servers) await new Promise<void>((ok) => srv.close(() => ok()));
  });

  for (const client of ["h1", "fetch"]) {
    test(`IK_HTTP_CLIENT=${client}`, async () => {
      for (const { name, port } of servers) {
        const run = await runIk(
          ["probe", "--base-url", `http://127.0.0.1:${port}`, "--model", "m", "--engine-kind", "generic", "--idle-timeout-s", "5", "--json"],
          { env: { IK_HTTP_CLIENT: client }, timeoutMs: 30_000 },
        );
        assert.equal(run.code, 1, `${name}: ${run.stderr}`);
        const row = JSON.parse(run.stdout);
        assert.equal(row.error_kind, "protocol", `${name}: ${row.error}`);
        assert.match(row.error, /malformed/, name);
        // ik's own HTTP/1.1 client names HTTP/2 frames; the Node build's node:http client (what
        // IK_HTTP_CLIENT=h1 selects there) says it in its own words.
        if (client === "h1" && name.includes("HTTP/2") && bunBuild) assert.match(row.error, /the server speaks only HTTP\/2/);
        assert.doesNotMatch(run.stderr, /not reachable/, name);
      }
    });
  }
});
