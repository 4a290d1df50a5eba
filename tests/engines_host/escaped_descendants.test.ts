/**
 * An engine that forks a listener with `setsid` and exits (issue 18 §3): with ik a child
 * subreaper the listener reparents to ik, the exited_early readiness names it as the holder of
 * the port, and the stop ends it, so the port is free for the next cell; without a subreaper
 * (the fallback) a /proc poll that saw it ends it too. A port already taken names its holder.
 * Both runtimes, ~6 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { freePort } from "../_helpers/ports.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { launchEngine, stopGroup, waitReady } from "../../lib/engines_host/server.ts";
import { probePort } from "../../lib/engines_host/port_check.ts";
import { portHolders, procInfo } from "../../lib/engines_host/proc_table.ts";

let dir: string;
let engineScript: string;
const env = () => ({ PATH: runtime.env("PATH") ?? "/usr/bin:/bin", HOME: dir });
const linux = procInfo(runtime.pid()) !== null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The listener: a python3 that binds the port and sleeps; the engine: bash that starts it in a
// session of its own, waits until it accepts, lingers `$2` s and exits 0.
const LISTENER = "import socket,sys,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',int(sys.argv[1])))\ns.listen(8)\ntime.sleep(60)\n";

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-escape-"));
  await writeFile(join(dir, "listener.py"), LISTENER);
  engineScript = join(dir, "engine.sh");
  await writeFile(engineScript, `#!/bin/bash
setsid python3 ${join(dir, "listener.py")} "$1" </dev/null >/dev/null 2>&1 &
for i in $(seq 1 100); do
  if (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null; then sleep "$2"; exit 0; fi
  sleep 0.05
done
exit 1
`, { mode: 0o755 });
});
const seen: number[] = [];
after(async () => {
  // A failing case must not leave its listener behind.
  for (const pid of seen) runtime.signalPid(pid, "SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

async function escapeCase(rt: typeof runtime, linger: string) {
  const port = await freePort();
  const e = launchEngine(rt, [engineScript, String(port), linger], { env: env(), logPath: join(dir, `e${port}.log`) });
  // /health never answers 2xx (the listener speaks no HTTP): the wait ends when bash exits.
  const r = await waitReady(e, `http://127.0.0.1:${port}/health`, { timeoutMs: 15_000, pollMs: 100 });
  const holders = portHolders(port);
  seen.push(...holders);
  const stop = await stopGroup(rt, e, 2000);
  return { port, r, holders, stop, after: await probePort("127.0.0.1", port) };
}

test("with ik a subreaper, the setsid'd listener is named on exited_early and ended by the stop", { skip: linux ? false : "needs /proc" }, async () => {
  const { port, r, holders, stop, after } = await escapeCase(runtime, "0");
  assert.equal(r.status, "exited");
  assert.equal(holders.length, 1, "the listener held the port when bash had exited");
  assert.match(String(r.last), new RegExp(`^exit code 0; port ${port} is held by pid ${holders[0]} \\(.*python3.*listener\\.py ${port}\\)`));
  assert.equal(r.port_holder?.startsWith(`port ${port} is held by pid ${holders[0]}`), true);
  assert.equal(stop.subreaper.active, true, stop.subreaper.detail);
  assert.equal(stop.group_gone, true);
  assert.deepEqual(stop.survivors, []);
  assert.ok(stop.orphans.some((o) => o.startsWith(`pid ${holders[0]} (`)), JSON.stringify(stop.orphans));
  assert.equal(after.inUse, false, "the port is free after the stop");
  assert.equal(procInfo(holders[0]), null, "the listener is gone and reaped (no zombie left)");
});

test("without a subreaper, descendants seen by the /proc poll are ended by the stop", { skip: linux ? false : "needs /proc" }, async () => {
  const rt = { ...runtime, childSubreaper: () => ({ active: false, detail: "test: no FFI" }) };
  const { r, holders, stop, after } = await escapeCase(rt, "0.6");
  assert.equal(r.status, "exited");
  assert.equal(stop.subreaper.active, false);
  assert.ok(stop.orphans.some((o) => o.startsWith(`pid ${holders[0]} (`)), JSON.stringify(stop.orphans));
  assert.equal(after.inUse, false);
  for (let i = 0; i < 20 && procInfo(holders[0]) !== null && procInfo(holders[0])?.state !== "Z"; i++) await sleep(50);
  assert.notEqual(procInfo(holders[0])?.state ?? "gone", "S");
});

test("a port already taken names the process holding it", { skip: linux ? false : "needs /proc" }, async () => {
  const ac = new AbortController();
  const s = await runtime.serve(() => new Response("x"), { port: 0, signal: ac.signal });
  try {
    const p = await probePort("127.0.0.1", s.port);
    assert.equal(p.inUse, true);
    assert.match(String(p.holder), new RegExp(`^port ${s.port} is held by pid ${runtime.pid()} \\(`));
  } finally {
    await s.close();
  }
  assert.equal((await probePort("127.0.0.1", s.port)).holder ?? null, null);
});
