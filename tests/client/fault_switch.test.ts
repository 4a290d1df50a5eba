/**
 * The client's fault switch (lib/client/_fault.ts) for the selftest mutation test: source runs and
 * normal builds have no fault, build.sh knows exactly the names the client does and refuses any
 * other, a `--fault` build carries its marker and misbehaves, and a normal binary carries no fault
 * name at all (the branches fold away). Building is Bun-only (slow under Deno's test runner: skip).
 * Budget: ~6 s under Bun (two builds of ~2 s, one probe), < 1 s under Deno.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as fault from "../../lib/client/_fault.ts";
import { parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { ikBin, ROOT, runArgv } from "../_helpers/ik.ts";
import { fakeFetch, streamingResponse } from "./_replay.ts";
import { chatChunk, DONE, type RawServer, rawServer } from "./_raw_server.ts";

const MARKER = "x-ik-client-fault";

/** The names build.sh accepts, read from its `case "$fault"` line. */
function buildShNames(): string[] {
  const sh = readFileSync(join(ROOT, "scripts", "build.sh"), "utf8");
  const line = sh.split("\n").find((l) => l.trim().startsWith('""|'));
  assert.ok(line, "build.sh has the fault name list");
  return line.trim().replace(/\)\s*;;\s*$/, "").split("|").slice(1);
}

test("a source run has no fault: the name is empty, every flag off, no marker header sent", async () => {
  assert.equal(fault.CLIENT_FAULT, "");
  for (
    const flag of [
      fault.FAULT_KFIRST_IGNORED,
      fault.FAULT_EVENTS_AS_IDS,
      fault.FAULT_NO_COUNT_MISMATCH,
      fault.FAULT_TTFT_PLUS_5MS,
      fault.FAULT_TPOT_PLUS_5PCT,
      fault.FAULT_USAGE_TRUSTED,
    ]
  ) assert.equal(flag, false);
  assert.equal(fault.FAULT_CLOCK_SKEW_MS, 0);
  assert.equal(fault.FAULT_HEADER, null);
  const f = fakeFetch(() => streamingResponse([new TextEncoder().encode(chatChunk({ content: "a" }, { finish_reason: "stop" }) + DONE)]));
  await streamCompletion(parseEndpoint("http://127.0.0.1:9"), "chat", {}, { fetch: f.fetch });
  assert.equal((f.calls[0].init.headers as Record<string, string>)[MARKER], undefined);
});

test("build.sh knows exactly the client's fault names, and refuses any other with 64", () => {
  assert.deepEqual(buildShNames(), [...fault.CLIENT_FAULT_NAMES]);
  assert.deepEqual([...fault.CLIENT_FAULT_NAMES], [
    "kfirst-ignored",
    "events-as-ids",
    "no-count-mismatch",
    "ttft-plus-5ms",
    "tpot-plus-5pct",
    "clock-skew-50ms",
    "usage-trusted",
  ], "the selftest mutation test and the merge skew test rely on these names");
  for (const bad of ["bogus", "KFIRST-IGNORED", "kfirst"]) {
    const r = spawnSync("bash", ["scripts/build.sh", "--fault", bad, "--outfile", join(tmpdir(), "ik-never-built")], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.equal(r.status, 64, bad);
    assert.match(r.stderr, /unknown --fault/);
  }
});

const bunOnly = runtime.name === "bun" ? false : "builds are Bun-only (slow under Deno)";

describe("a --fault build against a normal one", { skip: bunOnly }, () => {
  let dir = "";
  let srv: RawServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "ik-fault-"));
    srv = await rawServer((req) =>
      req.path.includes("/models")
        ? [{ head: 200, headers: { "content-type": "application/json" } }, { chunk: '{"data":[{"id":"m"}]}' }, { end: true }]
        : [
          { head: 200 },
          { chunk: chatChunk({ content: "abc" }, { token_ids: [1, 2, 3] }) },
          { wait: 20 },
          { chunk: chatChunk({ content: "d" }, { token_ids: [4] }) },
          { wait: 20 },
          { chunk: chatChunk({ content: "e" }, { token_ids: [5], finish_reason: "stop" }) + DONE },
          { end: true },
        ]
    );
  });
  after(async () => {
    await srv.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Builds with build.sh's own flags into the temp dir. */
  function build(name: string, args: string[]): string {
    const out = join(dir, name);
    const r = spawnSync("bash", ["scripts/build.sh", ...args, "--outfile", out], { cwd: ROOT, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return out;
  }

  test("the variant carries its marker and misbehaves; the normal binary has no fault name in it", async () => {
    const variant = build("ik-kfirst-ignored", ["--fault", "kfirst-ignored"]);
    const bytes = readFileSync(variant).toString("latin1");
    assert.ok(bytes.includes(MARKER), "the variant has the marker");
    assert.ok(bytes.includes("kfirst-ignored"), "and its name");
    // A fresh normal build (the folding works on this source) and the binary under test (IK_BIN).
    for (const normal of [build("ik-normal", []), ...(existsSync(ikBin()) ? [ikBin()] : [])]) {
      const plain = readFileSync(normal).toString("latin1");
      for (const n of [...fault.CLIENT_FAULT_NAMES, MARKER]) assert.ok(!plain.includes(n), `${normal} contains '${n}'`);
    }

    // The variant measures k_first wrong on purpose (the first event streamed 3 ids).
    const run = await runArgv([variant], [
      "probe",
      "--base-url",
      `http://127.0.0.1:${srv.port}`,
      "--model",
      "m",
      "--engine-kind",
      "generic",
      "--json",
    ], { timeoutMs: 30_000 });
    assert.equal(run.code, 0, run.stderr);
    const row = JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}");
    assert.equal(row.k_first, 1, "kfirst-ignored: k_first forced to 1");
    const seen = srv.requests.find((q) => q.path.endsWith("/chat/completions"));
    assert.equal(seen?.headers[MARKER], "kfirst-ignored");
    // The same stream measured by the source client: k_first 3.
    const src = await streamCompletion(parseEndpoint(`http://127.0.0.1:${srv.port}`), "chat", {}, { idleTimeoutMs: 5000 });
    assert.equal(requestRow(src).k_first, 3);
  });
});
