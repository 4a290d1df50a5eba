/** The GPU lock: create, live holder → 69 naming it, stale takeover, inherited via IK_GPU_LOCK_HELD, release. */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import {
  acquireGpuLock,
  defaultGpuLockPath,
  GPU_LOCK_HELD_ENV,
  parseGpuLockOwner,
  procAncestors,
} from "../../lib/engines_host/gpu_lock.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const NOW = Date.UTC(2025, 0, 2, 3, 4, 5);

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "ik-gpulock-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const base = { pid: runtime.pid(), command: "ik bench rounds m.json", env: {}, pidAlive: runtime.pidAlive, now: () => NOW };

test("default path: ${XDG_RUNTIME_DIR:-/tmp}/ik-gpu.lock", () => {
  assert.equal(defaultGpuLockPath({}), "/tmp/ik-gpu.lock");
  assert.equal(defaultGpuLockPath({ XDG_RUNTIME_DIR: "" }), "/tmp/ik-gpu.lock");
  assert.equal(defaultGpuLockPath({ XDG_RUNTIME_DIR: "/run/user/1000/" }), "/run/user/1000/ik-gpu.lock");
  assert.equal(defaultGpuLockPath((n) => (n === "XDG_RUNTIME_DIR" ? "/r" : undefined)), "/r/ik-gpu.lock");
});

test("creates the lock naming its owner; release removes it", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const lock = await acquireGpuLock(path, base);
    assert.equal(lock.held, true);
    assert.equal(lock.note, null);
    assert.deepEqual(lock.childEnv, { [GPU_LOCK_HELD_ENV]: path });
    const owner = JSON.parse(await readFile(path, "utf8"));
    assert.deepEqual(owner, { pid: runtime.pid(), command: "ik bench rounds m.json", started_utc: "2025-01-02T03:04:05.000Z" });
    await lock.release();
    await assert.rejects(readFile(path, "utf8"), { code: "ENOENT" });
    await lock.release(); // twice is fine
  });
});

test("a lock held by a live process exits 69 naming pid, command and start time", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const child = runtime.spawn(["sleep", "30"]);
    try {
      const held = { pid: child.pid, command: "ik bench rounds other.json", started_utc: "2025-01-01T00:00:00.000Z" };
      await writeFile(path, JSON.stringify(held));
      await assert.rejects(acquireGpuLock(path, base), (e: unknown) => {
        assert.ok(e instanceof IkError);
        assert.equal(e.code, 69);
        const line = e.oneLine();
        assert.match(line, new RegExp(`pid ${child.pid}\\b`));
        assert.match(line, /ik bench rounds other\.json/);
        assert.match(line, /2025-01-01T00:00:00\.000Z/);
        assert.match(line, new RegExp(path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
        return true;
      });
      // The holder's lock is untouched.
      assert.deepEqual(parseGpuLockOwner(await readFile(path, "utf8")), held);
    } finally {
      child.killGroup("SIGKILL");
      await child.exited;
    }
  });
});

test("a second acquirer is refused while the first holds the lock, and gets it after release", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const child = runtime.spawn(["sleep", "30"]);
    try {
      const first = await acquireGpuLock(path, { ...base, pid: child.pid, command: "first" });
      await assert.rejects(acquireGpuLock(path, { ...base, command: "second" }), /held by pid \d+ \(first\)/);
      await first.release();
      const second = await acquireGpuLock(path, { ...base, command: "second" });
      assert.equal(second.held, true);
      await second.release();
    } finally {
      child.killGroup("SIGKILL");
      await child.exited;
    }
  });
});

test("a stale lock (dead pid, unreadable file, or our own pid) is taken over with a note", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const dead = runtime.spawn(["true"]);
    await dead.exited;
    assert.equal(runtime.pidAlive(dead.pid), false);
    await writeFile(path, JSON.stringify({ pid: dead.pid, command: "ik bench rounds crashed.json", started_utc: "x" }));
    const lock = await acquireGpuLock(path, base);
    assert.equal(lock.held, true);
    assert.match(lock.note ?? "", new RegExp(`took over a stale lock: its owner pid ${dead.pid} \\(ik bench rounds crashed\\.json\\)`));
    assert.equal(parseGpuLockOwner(await readFile(path, "utf8"))?.pid, runtime.pid());
    await lock.release();

    await writeFile(path, "{not json");
    const l2 = await acquireGpuLock(path, base);
    assert.match(l2.note ?? "", /unreadable lock file/);
    await l2.release();

    await writeFile(path, JSON.stringify({ pid: runtime.pid(), command: "earlier", started_utc: "y" }));
    const l3 = await acquireGpuLock(path, { ...base, pidAlive: () => true });
    assert.match(l3.note ?? "", /our own pid/);
    await l3.release();
  });
});

test("IK_GPU_LOCK_HELD: the parent holds it, the child does not take it again", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const parent = await acquireGpuLock(path, base);
    const child = await acquireGpuLock(path, { ...base, pid: 999999, env: parent.childEnv, ancestors: () => [runtime.pid()] });
    assert.equal(child.held, false);
    assert.equal(child.note, null);
    assert.deepEqual(child.childEnv, { [GPU_LOCK_HELD_ENV]: path });
    await child.release(); // a no-op: the parent's lock stays
    assert.equal(parseGpuLockOwner(await readFile(path, "utf8"))?.pid, runtime.pid());
    await parent.release();
  });
});

test("IK_GPU_LOCK_HELD is honoured only for the same lock, held by this process or a live ancestor", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    // Another run (live, not our ancestor) holds the lock; a foreign or stale variable must not let us in.
    await writeFile(path, JSON.stringify({ pid: runtime.pid(), command: "another ik bench rounds", started_utc: "z" }));
    const me = { ...base, pid: 999999, ancestors: () => [1] };
    for (const held of [join(dir, "other.lock"), "/nonexistent/other.lock", path]) {
      await assert.rejects(acquireGpuLock(path, { ...me, env: { [GPU_LOCK_HELD_ENV]: held } }), (e: unknown) => e instanceof IkError && e.code === 69, held);
    }
    // The same file through another name counts as the same lock.
    const parent = { ...base, pid: 999999, ancestors: () => [4242, runtime.pid()] };
    const viaDots = await acquireGpuLock(path, { ...parent, env: { [GPU_LOCK_HELD_ENV]: join(dir, ".", "ik-gpu.lock") } });
    assert.equal(viaDots.held, false);
    // With the lock free, a variable naming another lock is noted and the lock taken as usual.
    await rm(path);
    const taken = await acquireGpuLock(path, { ...me, env: { [GPU_LOCK_HELD_ENV]: "/nonexistent/other.lock" } });
    assert.equal(taken.held, true);
    assert.match(String(taken.note), /IK_GPU_LOCK_HELD=\/nonexistent\/other\.lock not honoured \(no lock file at/);
    assert.equal(parseGpuLockOwner(await readFile(path, "utf8"))?.pid, 999999);
    await taken.release();
  });
});

test("the /proc ancestor chain is the default: our child inherits our lock, an unrelated process does not", { skip: procAncestors(runtime.pid()) === null ? "needs /proc" : false }, async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const parent = await acquireGpuLock(path, base);
    const g = runtime.spawn(["sleep", "5"], {});
    try {
      assert.ok(procAncestors(g.pid)?.includes(runtime.pid()));
      const child = await acquireGpuLock(path, { ...base, pid: g.pid, env: parent.childEnv });
      assert.equal(child.held, false);
      // pid 1 is no descendant of ours: the variable does not let it share the GPU.
      await assert.rejects(acquireGpuLock(path, { ...base, pid: 1, env: parent.childEnv }), (e: unknown) => e instanceof IkError && e.code === 69);
    } finally {
      g.killGroup("SIGKILL");
      await g.exited;
      await parent.release();
    }
  });
});

test("release leaves a lock that someone else took over after us", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "ik-gpu.lock");
    const lock = await acquireGpuLock(path, base);
    const other = JSON.stringify({ pid: 4242, command: "other", started_utc: "z" });
    await writeFile(path, other);
    await lock.release();
    assert.equal(await readFile(path, "utf8"), other);
  });
});
