/**
 * An engine's life in a rounds cell: launch refusals, readiness that tells an early exit from a
 * slow start, a group stop that escalates to SIGKILL and proves no member is left, live group
 * members without zombies; and GPU memory through a fake `nvidia-smi` on PATH printing the real
 * CSV format (both runtimes, ~8 s).
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../_helpers/ports.ts";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { launchEngine, LaunchError, resolveProgram, stopGroup, waitReady } from "../../lib/engines_host/server.ts";
import { gpuMemoryUsedMib, waitGpuMemory } from "../../lib/engines_host/gpu_memory.ts";
import { runtimeExec } from "../../lib/commands/_exec.ts";

let dir: string;
const env = () => ({ PATH: runtime.env("PATH") ?? "/usr/bin:/bin", HOME: dir });


before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-server-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("launch", () => {
  test("a missing program or working directory is a LaunchError naming it; PATH is searched like execvp", () => {
    assert.throws(() => launchEngine(runtime, ["no-such-engine-xyz"], { env: env(), logPath: join(dir, "a.log") }), (e: unknown) => e instanceof LaunchError && /no-such-engine-xyz/.test((e as Error).message));
    assert.throws(() => launchEngine(runtime, ["sh", "-c", "true"], { env: env(), logPath: join(dir, "a.log"), cwd: join(dir, "nope") }), (e: unknown) => e instanceof LaunchError && /cwd/.test((e as Error).message));
    assert.ok(resolveProgram("sh", "/nonexistent:" + (runtime.env("PATH") ?? ""), dir)?.endsWith("/sh"));
    assert.equal(resolveProgram("sh", "/nonexistent", dir), null);
  });

  test("the engine gets exactly the given environment, and its output goes to the log", async () => {
    const log = join(dir, "env.log");
    const e = launchEngine(runtime, ["sh", "-c", "echo FOO=$FOO; echo IK_RUNS_DIR=${IK_RUNS_DIR:-unset}; echo err >&2"], { env: { ...env(), FOO: "bar" }, logPath: log });
    await e.group.exited;
    const text = await readFile(log, "utf8");
    assert.match(text, /FOO=bar/);
    assert.match(text, /IK_RUNS_DIR=unset/);
    assert.match(text, /err/);
  });
});

describe("readiness", () => {
  test("an engine that exits before it is ready is 'exited' with its code, not a timeout", async () => {
    const e = launchEngine(runtime, ["sh", "-c", "sleep 0.3; exit 3"], { env: env(), logPath: join(dir, "x.log") });
    const r = await waitReady(e, `http://127.0.0.1:${await freePort()}/health`, { timeoutMs: 10_000, pollMs: 100 });
    assert.equal(r.status, "exited");
    assert.equal(r.last, "exit code 3");
    assert.ok(r.seconds < 5);
  });
  test("one that never listens is a timeout with the last answer seen", async () => {
    const e = launchEngine(runtime, ["sleep", "30"], { env: env(), logPath: join(dir, "t.log") });
    try {
      const r = await waitReady(e, `http://127.0.0.1:${await freePort()}/health`, { timeoutMs: 800, pollMs: 100 });
      assert.equal(r.status, "timeout");
      assert.ok(r.polls >= 2);
      assert.equal(r.last, "connection refused");
    } finally {
      await stopGroup(runtime, e, 2000);
    }
  });
});

describe("stop", () => {
  test("TERM to the whole group; a member that ignores it gets SIGKILL after the timeout; none is left", async () => {
    // The shell ignores TERM and so do its sleeps (an ignored signal stays ignored across exec).
    const e = launchEngine(runtime, ["sh", "-c", "trap '' TERM; sleep 30 & sleep 30 & while :; do sleep 0.1; done"], { env: env(), logPath: join(dir, "s.log") });
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(runtime.groupMembers(e.group.pid).length >= 3, "leader and its sleeps are in the group");
    const s = await stopGroup(runtime, e, 500);
    assert.equal(s.signal, "SIGKILL");
    assert.equal(s.group_gone, true);
    assert.deepEqual(runtime.groupMembers(e.group.pid), []);
    assert.ok(s.seconds >= 0.5 && s.seconds < 6, String(s.seconds));
  });
  test("a group that leaves on TERM is not killed harder; an orphaned worker in the group goes too", async () => {
    const e = launchEngine(runtime, ["sh", "-c", "sleep 30 & exec sleep 31"], { env: env(), logPath: join(dir, "o.log") });
    await new Promise((r) => setTimeout(r, 200));
    const s = await stopGroup(runtime, e, 5000);
    assert.equal(s.signal, "SIGTERM");
    assert.equal(s.group_gone, true);
    assert.equal(s.exit?.signal, "SIGTERM");
  });
  test("interrupted: the TERM wait is cut to 3 s whatever the stop timeout, before or during the stop (~7 s)", async () => {
    for (const when of ["before", "during"] as const) {
      const e = launchEngine(runtime, ["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"], { env: env(), logPath: join(dir, `i-${when}.log`) });
      await new Promise((r) => setTimeout(r, 200));
      const ac = new AbortController();
      if (when === "before") ac.abort();
      else setTimeout(() => ac.abort(), 500);
      const s = await stopGroup(runtime, e, 30_000, { signal: ac.signal });
      assert.equal(s.signal, "SIGKILL");
      assert.equal(s.group_gone, true);
      const most = when === "before" ? 3 : 3.5;
      assert.ok(s.seconds >= most - 0.1 && s.seconds < most + 1.5, `${when}: ${s.seconds} s`);
    }
  });
  test("groupMembers of a group that never existed is empty", () => {
    assert.deepEqual(runtime.groupMembers(2 ** 22 + 12345), []);
    assert.deepEqual(runtime.groupMembers(0), []);
  });
});

describe("GPU memory through a fake nvidia-smi on PATH", () => {
  test("the real CSV format is read; the wait ends when memory is back within the tolerance", async () => {
    const bin = join(dir, "bin");
    await runtime.files.mkdir(bin);
    const state = join(dir, "calls");
    await writeFile(state, "0");
    // Prints what `nvidia-smi --query-gpu=memory.used,name --format=csv,noheader,nounits` prints on a
    // 2-GPU host: GPU 0 still holds 20 GiB for the first three calls after the baseline.
    await writeFile(join(bin, "nvidia-smi"), `#!/bin/sh
n=$(cat ${state}); n=$((n+1)); echo $n > ${state}
case "$*" in *memory.used,name*) ;; *) exit 9;; esac
if [ $n -ge 2 ] && [ $n -le 4 ]; then u=20480; else u=1000; fi
echo "$u, NVIDIA H200"
echo "3, NVIDIA H200"
`);
    await chmod(join(bin, "nvidia-smi"), 0o755);
    const oldPath = runtime.env("PATH");
    process.env.PATH = `${bin}:${oldPath}`;
    try {
      const exec = runtimeExec(runtime);
      const before = await gpuMemoryUsedMib(exec);
      assert.equal(before.available, true);
      assert.deepEqual(before.gpus.map((g) => [g.index, g.name, g.usedMib]), [[0, "NVIDIA H200", 1000], [1, "NVIDIA H200", 3]]);
      const w = await waitGpuMemory(before, { exec, toleranceMib: 512, timeoutMs: 10_000, pollMs: 50 });
      assert.equal(w.ok, true);
      assert.equal(w.skipped, false);
      assert.deepEqual(w.last, [1000, 3]);
      assert.ok(Number(await readFile(state, "utf8")) >= 5, "it polled until memory came back");
      await writeFile(state, "1");
      const stuck = await waitGpuMemory([100, 3], { exec, toleranceMib: 512, timeoutMs: 300, pollMs: 50 });
      assert.equal(stuck.ok, false);
      assert.match(String(stuck.note), /GPU 0: \d+ MiB \(baseline 100\)/);
    } finally {
      process.env.PATH = oldPath;
    }
  });
});
