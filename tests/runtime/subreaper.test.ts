/**
 * The runtime's subreaper calls (lib/runtime/_libc.ts): prctl(PR_SET_CHILD_SUBREAPER) through
 * the runtime's FFI, so a detached grandchild reparents to ik; reaping such an adopted orphan
 * (waitpid), which the runtime itself never waits for; ik's own children are never "adopted".
 * Both runtimes, Linux, < 2 s.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";

const LINUX = existsSync("/proc/self/stat");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stat = (pid: number) => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "latin1");
    const rest = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0], ppid: Number(rest[1]) };
  } catch {
    return null;
  }
};

test("childSubreaper is active (idempotent) and an orphaned grandchild reparents to ik, which reaps it", { skip: LINUX ? false : "Linux only" }, async () => {
  const s = runtime.childSubreaper();
  assert.equal(s.active, true, s.detail);
  assert.deepEqual(runtime.childSubreaper(), s);
  // sh starts a detached sleep, prints its pid and exits: the sleep is orphaned.
  const sh = spawn("sh", ["-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!"], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  sh.stdout!.on("data", (d) => (out += d));
  await new Promise((r) => sh.on("close", r));
  const pid = Number(out.trim());
  assert.ok(pid > 1, out);
  for (let i = 0; i < 40 && stat(pid)?.ppid !== runtime.pid(); i++) await sleep(25);
  assert.equal(stat(pid)?.ppid, runtime.pid(), "the orphan reparented to ik, not init");
  assert.equal(runtime.ownChildPids().has(pid), false);
  assert.equal(runtime.reapAdopted(pid), false, "still running: nothing to reap");
  assert.equal(runtime.signalPid(pid, "SIGKILL"), true);
  for (let i = 0; i < 40 && stat(pid)?.state !== "Z"; i++) await sleep(25);
  assert.equal(stat(pid)?.state, "Z", "a killed adopted orphan stays a zombie of ik until reaped");
  assert.equal(runtime.reapAdopted(pid), true);
  assert.equal(stat(pid), null, "reaped");
  assert.equal(runtime.signalPid(pid, "SIGTERM"), false);
});

test("ik's own spawned children (and their watchdogs) are never taken for adopted ones", { skip: LINUX ? false : "Linux only" }, async () => {
  const g = runtime.spawn(["sleep", "5"]);
  assert.equal(runtime.ownChildPids().has(g.pid), true);
  assert.equal(runtime.reapAdopted(g.pid), false, "never waitpid a child the runtime waits for");
  g.killGroup("SIGKILL");
  const st = await g.exited;
  assert.equal(st.signal, "SIGKILL", "the runtime, not ik's reaping, saw its exit");
  assert.equal(runtime.ownChildPids().has(g.pid), false);
});
