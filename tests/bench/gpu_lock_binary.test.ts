/**
 * `ik bench serve --gpu-lock PATH` through dist/ik (CONTRACTS "GPU lock": bench serve takes it only
 * when given; it was an unknown option): held for the whole run and released after it; a lock a
 * live process holds is exit 69 naming it, before any request; a dead owner's lock is taken over
 * with a note. Bun only (spawns the binary and a mock): ~5 s.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

const skip = runtime.name !== "bun" ? "binary tests run under Bun only" : false;

describe("bench serve --gpu-lock", { skip }, () => {
  let dir = "", mock: MockProc;
  let env: Record<string, string> = {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-gpulock-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    mock = await startMock(["--ttft-ms", "150", "--tpot-ms", "1"]);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const serve = (lock: string) => ["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "1", "--warmup", "0", "--max-tokens", "4",
    "--buckets", "very_short", "--resamples", "100", "--gpu-lock", lock];

  test("held while the run measures (naming ik bench serve and its pid), released after", async () => {
    const lock = join(dir, "held.lock");
    const p = startArgv([ikBin()], serve(lock), { env });
    let seen: { pid: number; command: string } | null = null;
    for (let i = 0; i < 200 && !seen; i++) {
      if (existsSync(lock)) seen = JSON.parse(readFileSync(lock, "utf8"));
      else await new Promise((ok) => setTimeout(ok, 25));
    }
    const end = await p.exited;
    assert.equal(end.code, 0, p.stderr());
    assert.ok(seen, "the lock file existed during the run");
    assert.equal(seen.command, "ik bench serve");
    assert.equal(existsSync(lock), false, "released");
  });

  test("a lock a live process holds: exit 69 naming its owner, one line; a dead owner's is taken over with a note", async () => {
    const holder = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const lock = join(dir, "live.lock");
      await writeFile(lock, JSON.stringify({ pid: holder.pid, command: "another benchmark", started_utc: "2026-12-07T00:00:00.000Z" }));
      const r = await runIk(serve(lock), { env, timeoutMs: 60_000 });
      assert.equal(r.code, 69, r.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`pid ${holder.pid} \\(another benchmark\\)`));
      assert.ok(existsSync(lock), "the holder's lock is left as it was");
    } finally {
      holder.kill();
    }
    const stale = join(dir, "stale.lock");
    await writeFile(stale, JSON.stringify({ pid: 2 ** 22 + 12345, command: "a run that died", started_utc: "2026-12-07T00:00:00.000Z" }));
    const r = await runIk(serve(stale), { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /bench serve: .*a run that died/);
    assert.equal(existsSync(stale), false);
  });
});

if (skip) test("bench serve --gpu-lock (skipped)", { skip }, () => {});
