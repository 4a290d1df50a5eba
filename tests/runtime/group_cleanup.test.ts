/** Every spawned group dies when ik exits or is signalled (SIGINT/SIGTERM/SIGHUP). */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { WATCHDOG_NAME } from "../../lib/runtime/_watchdog.ts";
import { ROOT, startArgv } from "../_helpers/ik.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Live (non-zombie) members of a process group, read from /proc. */
function members(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const fields = readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1].split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") out.push(Number(d));
    } catch { /* raced with exit */ }
  }
  return out;
}

/** Orphan watchdogs (lib/runtime/_watchdog.ts) still watching this group. */
function watchdogsOf(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (argv[3] === WATCHDOG_NAME && argv[5] === `-${pgid}` && !/\) [ZX] /.test(readFileSync(`/proc/${d}/stat`, "utf8"))) {
        out.push(Number(d));
      }
    } catch { /* raced with exit */ }
  }
  return out;
}

function fixtureArgv(): string[] {
  const script = join(ROOT, "tests/runtime/_fixtures/spawn_then_wait.ts");
  return runtime.name === "deno" ? [runtime.execPath(), "run", "-A", script] : [runtime.execPath(), script];
}

for (const how of ["SIGINT", "SIGTERM", "SIGHUP", "exit"] as const) {
  test(`spawned groups are killed on ${how}`, async () => {
    const p = startArgv(fixtureArgv(), [how === "exit" ? "exit" : "signal"]);
    for (let i = 0; i < 200 && !/group \d+/.test(p.stdout()); i++) await sleep(25);
    const pgid = Number(p.stdout().match(/group (\d+)/)?.[1]);
    assert.ok(pgid > 0, `fixture printed its group: ${p.stdout()} ${p.stderr()}`);
    if (how !== "exit") {
      assert.ok(members(pgid).length >= 1, "group alive before the signal");
      assert.equal(watchdogsOf(pgid).length, 1, "the group has its orphan watchdog");
      await p.stop(how);
    }
    const st = await p.exited;
    assert.equal(st.code, how === "exit" ? 0 : 130, JSON.stringify(st) + p.stderr());
    for (let i = 0; i < 50 && members(pgid).length; i++) await sleep(20);
    assert.deepEqual(members(pgid), [], "no member of the spawned group survives");
    // Its watchdog ends with it: at the next poll, or after its 1 s grace where init reaps the
    // killed orphans lazily (a zombie still counts for kill -0).
    for (let i = 0; i < 75 && watchdogsOf(pgid).length; i++) await sleep(20);
    assert.deepEqual(watchdogsOf(pgid), [], "no watchdog is left behind");
  });
}

test("replaceEnv gives the child exactly the env it is handed (an engine's clean environment)", async () => {
  const g = runtime.spawn(["/bin/sh", "-c", "env"], { env: { PATH: "/usr/bin:/bin", IK_ONLY: "1" }, replaceEnv: true, pipeStdout: true });
  let out = "";
  for await (const c of g.stdout!) out += new TextDecoder().decode(c);
  await g.exited;
  const keys = out.trim().split("\n").map((l) => l.split("=")[0]).filter((k) => k && !["PWD", "SHLVL", "_"].includes(k));
  assert.deepEqual(keys.sort(), ["IK_ONLY", "PATH"]);
});
