/**
 * Issue 18 §3 and issue 21 goal 1 end to end through dist/ik (Bun only: heavy, CONTRACTS.md "CI time"; ~30 s):
 * - By default `bench serve` is one process (ik execve's itself with Bun's connection limit raised,
 *   see BUN_FETCH_LIMIT in cli.ts): the pid that was started measures, with the raised limit in its
 *   own environment and no ik child; SIGKILLed mid-run, it leaves a .staging journal that
 *   `ik report` reads as INCOMPLETE.
 * - With IK_LAUNCHER=1 a launcher waits on a worker: the worker SIGKILLed mid-run, the launcher
 *   exits 137 with one line naming the worker, SIGKILL and the .staging journal; `ik report` of
 *   that journal is INCOMPLETE with the rows, exit 0.
 * - `bench rounds` with an engine that forks a listener with `setsid` and exits: each of its cells
 *   is exited_early naming the listener as the holder of the port, and the next one is not
 *   port_busy (ik, a subreaper, stopped the listener with the engine); the rounds worker is then
 *   SIGKILLed: the line names the rounds dir, and `ik report` of it is INCOMPLETE, exit 0.
 * - The Node build (dist/ik-node, when built: `bun scripts/release.ts --host-node-only`) has no
 *   re-exec, but is a subreaper too, through Node 26's node:ffi: the same engine, cell after cell.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type IkProcess, ikBin, runArgv, runIk, startArgv } from "../_helpers/ik.ts";
import { freePorts } from "../_helpers/ports.ts";
import { COLLECTOR_ENV, COLLECTOR_VALUE, GROWTH_ENV, GROWTH_VALUE, runtime } from "../../lib/runtime/mod.ts";
import { processTable } from "../../lib/engines_host/proc_table.ts";

const BUN = runtime.name === "bun";
const HAVE = BUN && existsSync(ikBin()) && existsSync("/proc/self/stat");
// Only the Bun build re-executes itself (a launcher waiting on a worker); the Node build is one process.
const NODE_BUILD = HAVE && / node-linux-/.test(spawnSync(ikBin(), ["--version"], { encoding: "utf8" }).stdout ?? "");
const PY = (spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout ?? "").trim();
let dir: string;
const mocks: IkProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-killed-"));
});
after(async () => {
  for (const m of mocks) await m.stop("SIGTERM").catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

/** The worker: the launcher's one child (the re-exec), once it is there. */
async function workerOf(launcher: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const kids = processTable().filter((p) => p.ppid === launcher && p.state !== "Z");
    if (kids.length === 1) return kids[0].pid;
    await sleep(50);
  }
  throw new Error(`no worker under ${launcher}`);
}

/**
 * Rows in the one run's journal under `staging`, 0 until it is there. The run's folder is made
 * before its `requests.jsonl`, so a poll can see the folder without the file (CI failed on that).
 */
function journalRows(staging: string): number {
  const ids = existsSync(staging) ? readdirSync(staging) : [];
  if (ids.length !== 1) return 0;
  try {
    return readFileSync(join(staging, ids[0], "requests.jsonl"), "utf8").split("\n").filter(Boolean).length;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw e;
  }
}

async function until(ok: () => boolean, ms: number, proc?: IkProcess): Promise<void> {
  const end = Date.now() + ms;
  let exited = false;
  proc?.exited.then(() => (exited = true));
  while (!ok()) {
    if (exited) throw new Error(`ik exited first: ${proc!.stderr().slice(-1500)}`);
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(50);
  }
}

describe("one process (the default)", { skip: !HAVE ? "Bun only, needs dist/ik and /proc" : false }, () => {
  test("bench serve: the started pid measures, with the raised limit and no ik child; SIGKILLed, its journal reads as INCOMPLETE (~6 s)", async () => {
    const m = startArgv([ikBin()], ["mock", "--port", "0", "--tpot-ms", "10"]);
    mocks.push(m);
    const base = (await m.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
    const env = { IK_RUNS_DIR: join(dir, "runs1"), IK_KEY_FILE: join(dir, "key") };
    const serve = startArgv([ikBin()], ["bench", "serve", "--base-url", base, "--model", "mock-model", "--max-tokens", "4", "--warmup", "0", "--rounds", "200"], { env });
    const staging = join(dir, "runs1", ".staging");
    const rows = () => journalRows(staging);
    await until(() => rows() >= 3, 20_000, serve);
    const environ = readFileSync(`/proc/${serve.pid}/environ`, "utf8").split("\0");
    if (!NODE_BUILD) assert.ok(environ.includes("BUN_CONFIG_MAX_HTTP_REQUESTS=65336"), "the measuring process started with the raised limit");
    // Single mode keeps JSC's default collector (lib/runtime/_start_env.ts: a closed loop of many streams only).
    for (const v of [COLLECTOR_ENV, GROWTH_ENV]) if (!process.env[v]) assert.ok(!environ.some((e) => e.startsWith(`${v}=`)), `single mode: no ${v}`);
    const kids = processTable().filter((p) => p.ppid === serve.pid && p.state !== "Z" && readCmd(p.pid).includes("bench serve"));
    assert.deepEqual(kids.map((k) => readCmd(k.pid)), [], "no second ik process");
    process.kill(serve.pid, "SIGKILL");
    const end = await serve.exited;
    assert.equal(end.signal, "SIGKILL");
    const [id] = readdirSync(staging);
    const n = rows();
    const r = await runIk(["report", join(staging, id)], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# ik report: INCOMPLETE journal serve_benchmark-/);
    assert.match(r.stdout, new RegExp(`rows journaled:\\*\\* ${n} \\(`));
  });
});

describe("the collector setting of a closed loop of many streams", { skip: !HAVE ? "Bun only, needs dist/ik and /proc" : NODE_BUILD ? "the Node build's V8 has no such setting" : false }, () => {
  // As a `bench rounds` cell starts: its parent ik already raised the fetch cap, and it inherits that.
  // 256 streams: the full-collection trigger; 512 and more: the heap growth instead (lib/runtime/_start_env.ts).
  const cases = [
    ["256", "", {}, `${COLLECTOR_ENV}=${COLLECTOR_VALUE}`, GROWTH_ENV],
    ["256", ", also when the fetch cap is inherited (a rounds cell)", { BUN_CONFIG_MAX_HTTP_REQUESTS: "65336" }, `${COLLECTOR_ENV}=${COLLECTOR_VALUE}`, GROWTH_ENV],
    ["512", " (the heap growth, not the trigger)", {}, `${GROWTH_ENV}=${GROWTH_VALUE}`, COLLECTOR_ENV],
  ] as const;
  for (const [streams, what, inherited, setting, absent] of cases) {
    test(`bench serve --closed-loop --concurrency ${streams}: the measuring process starts with its collector setting, and its JSC takes it${what} (~3 s)`, async () => {
      const m = startArgv([ikBin()], ["mock", "--port", "0", "--tpot-ms", "10"]);
      mocks.push(m);
      const base = (await m.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
      const runs = join(dir, `runs-gc${streams}-${Object.keys(inherited).length}`);
      const env = { ...inherited, IK_RUNS_DIR: runs, IK_KEY_FILE: join(dir, "key") };
      const args = ["bench", "serve", "--base-url", base, "--model", "mock-model", "--mode", "load", "--closed-loop", "--concurrency", streams, "--duration-s", "60", "--max-requests-per-level", "20000", "--max-tokens", "64", "--warmup", "0"];
      const serve = startArgv([ikBin()], args, { env });
      const environ = () => {
        try {
          return readFileSync(`/proc/${serve.pid}/environ`, "utf8").split("\0");
        } catch {
          return [];
        }
      };
      // After the execve the process's environ is the measuring one; rows follow once the first requests end.
      const staging = join(runs, ".staging");
      const rows = () => journalRows(staging);
      let taken: boolean, both: boolean;
      try {
        await until(() => rows() >= 1, 30_000, serve);
        const now = environ();
        taken = now.includes(setting);
        // Only one of ik's two collector settings: the other is absent.
        both = now.some((e) => e.startsWith(`${absent}=`));
      } finally {
        process.kill(serve.pid, "SIGINT");
      }
      const end = await serve.exited;
      if (!process.env[COLLECTOR_ENV] && !process.env[GROWTH_ENV]) {
        assert.ok(taken, `the measuring process started with ${setting}`);
        assert.ok(!both, "one collector setting, not both");
      }
      assert.equal(end.code, 130, serve.stderr().slice(-800));
      assert.doesNotMatch(serve.stderr(), /invalid JSC environment variable/);
    });
  }
});

describe("a SIGKILLed worker (IK_LAUNCHER=1)", { skip: !HAVE ? "Bun only, needs dist/ik and /proc" : NODE_BUILD ? "the Node build has no launcher and worker (one process)" : false }, () => {
  test("bench serve: the launcher names the journal, exits 137; ik report reads it as INCOMPLETE (~8 s)", async () => {
    const m = startArgv([ikBin()], ["mock", "--port", "0", "--tpot-ms", "10"]);
    mocks.push(m);
    const base = (await m.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
    const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key"), IK_LAUNCHER: "1" };
    const serve = startArgv([ikBin()], ["bench", "serve", "--base-url", base, "--model", "mock-model", "--max-tokens", "4", "--warmup", "0", "--rounds", "200"], { env });
    const worker = await workerOf(serve.pid);
    const staging = join(dir, "runs", ".staging");
    const rows = () => journalRows(staging);
    await until(() => rows() >= 3, 20_000, serve);
    process.kill(worker, "SIGKILL");
    const end = await serve.exited;
    assert.equal(end.code, 137, serve.stderr());
    const [id] = readdirSync(staging);
    const path = join(staging, id);
    const lines = serve.stderr().split("\n").filter((l) => l.startsWith("ik: "));
    assert.deepEqual(lines, [`ik: bench serve: the worker (pid ${worker}) was killed by SIGKILL (out of memory? kill -9?); rows journaled so far are in ${path}; 'ik report ${path}' reads it as incomplete`]);
    const n = rows();
    const r = await runIk(["report", path], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# ik report: INCOMPLETE journal serve_benchmark-/);
    assert.match(r.stdout, new RegExp(`rows journaled:\\*\\* ${n} \\(`));
    const j = await runIk(["report", id, "--json"], { env, timeoutMs: 30_000 });
    assert.equal(j.code, 0, j.stderr);
    assert.equal(JSON.parse(j.stdout).input.kind, "journal");
  });

  test("bench rounds: a setsid'd survivor is named and stopped, cell after cell; then a SIGKILL leaves an INCOMPLETE rounds dir (~15 s)", { skip: PY ? false : "needs python3" }, async () => {
    const [pEsc, pMock] = await freePorts(2);
    await writeFile(join(dir, "listener.py"), "import socket,sys,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',int(sys.argv[1])))\ns.listen(8)\ntime.sleep(60)\n");
    await writeFile(join(dir, "engine.sh"), `#!/bin/bash\nsetsid ${PY} ${join(dir, "listener.py")} "$1" </dev/null >/dev/null 2>&1 &\nfor i in $(seq 1 100); do\n  if (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null; then exit 0; fi\n  sleep 0.05\ndone\nexit 1\n`, { mode: 0o755 });
    await writeFile(join(dir, "two.jsonl"), JSON.stringify({ id: "p1", bucket: "short", messages: [{ role: "user", content: "Hi" }], max_tokens: 4 }) + "\n");
    const manifest = {
      model: { id: "mock-model" },
      engines: [
        { label: "esc", name: "vllm", launch: [join(dir, "engine.sh"), String(pEsc)], port: pEsc, ready_check: "/health" },
        // Slow to answer, so the run is still going when it is killed.
        { label: "m", name: "vllm", launch: [ikBin(), "mock", "--engine", "vllm", "--port", String(pMock), "--tpot-ms", "400"], port: pMock },
      ],
    };
    await writeFile(join(dir, "m.json"), JSON.stringify(manifest));
    const run = join(dir, "run");
    const env = { IK_RUNS_DIR: join(dir, "runs2"), IK_KEY_FILE: join(dir, "key"), IK_LAUNCHER: "1" };
    const rounds = startArgv([ikBin()], ["bench", "rounds", join(dir, "m.json"), "--prompts", join(dir, "two.jsonl"), "--rounds", "8", "--run-dir", run,
      "--gpu-lock", join(dir, "lock"), "--stop-timeout-s", "2", "--warmup", "0", "--serve-args", "--max-tokens 4 --warmup 0"], { env });
    const worker = await workerOf(rounds.pid);
    const rd = join(run, "rounds");
    const escCells = () => (existsSync(rd) ? readdirSync(rd).filter((n) => /^esc\.r\d+\.json$/.test(n)) : []);
    await until(() => escCells().length >= 2, 90_000, rounds);
    process.kill(worker, "SIGKILL");
    const end = await rounds.exited;
    assert.equal(end.code, 137, rounds.stderr().slice(-2000));
    for (const n of escCells()) {
      const c = JSON.parse(readFileSync(join(rd, n), "utf8"));
      assert.equal(c.status, "exited_early", `${n}: ${c.status} ${c.detail}`);
      assert.match(c.detail, new RegExp(`exit code 0; port ${pEsc} is held by pid \\d+ \\(.*listener\\.py ${pEsc}\\)`));
      assert.equal(c.stop.subreaper.active, true);
      assert.equal(c.stop.orphans.length >= 1, true, JSON.stringify(c.stop));
    }
    const lines = rounds.stderr().split("\n").filter((l) => l.startsWith("ik: "));
    assert.equal(lines.length, 1, rounds.stderr().slice(-2000));
    assert.match(lines[0], new RegExp(`^ik: bench rounds: the worker \\(pid ${worker}\\) was killed by SIGKILL \\(out of memory\\? kill -9\\?\\); rows journaled so far are in ${rd}[ ;]`));
    assert.equal(existsSync(join(rd, "summary.json")), false);
    const r = await runIk(["report", run], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# ik report: bench rounds .*\(INCOMPLETE\)/);
    assert.match(r.stdout, /INCOMPLETE: the run never wrote summary\.json/);
    // The SIGKILL took nothing of ik's along: no listener nor mock engine of this test is left.
    const left = () => processTable().filter((p) => p.state !== "Z" && (readCmd(p.pid).includes(join(dir, "listener.py")) || readCmd(p.pid).includes(`--port ${pMock}`)));
    await until(() => left().length === 0, 5_000).catch(() => {
      throw new Error(`left running: ${left().map((p) => `${p.pid} ppid ${p.ppid} ${readCmd(p.pid)}`).join("; ")}`);
    });
  });
});

const NODE_BIN = join(ikBin(), "..", "ik-node");

test("the Node build is a subreaper through node:ffi: the setsid'd survivor is stopped, cell after cell (~6 s)", { skip: BUN && existsSync(NODE_BIN) && PY && existsSync("/proc/self/stat") ? false : "Bun only, needs dist/ik-node, python3 and /proc" }, async () => {
  const [p] = await freePorts(1);
  const d = await mkdtemp(join(tmpdir(), "ik-node-sr-"));
  try {
    await writeFile(join(d, "listener.py"), "import socket,sys,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',int(sys.argv[1])))\ns.listen(8)\ntime.sleep(60)\n");
    await writeFile(join(d, "engine.sh"), `#!/bin/bash\nsetsid ${PY} ${join(d, "listener.py")} "$1" </dev/null >/dev/null 2>&1 &\nfor i in $(seq 1 100); do\n  if (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null; then exit 0; fi\n  sleep 0.05\ndone\nexit 1\n`, { mode: 0o755 });
    await writeFile(join(d, "p.jsonl"), JSON.stringify({ id: "p1", bucket: "short", messages: [{ role: "user", content: "Hi" }], max_tokens: 4 }) + "\n");
    await writeFile(join(d, "m.json"), JSON.stringify({ model: { id: "x" }, engines: [{ label: "esc", name: "vllm", launch: [join(d, "engine.sh"), String(p)], port: p, ready_check: "/health" }] }));
    const r = await runArgv([NODE_BIN], ["bench", "rounds", join(d, "m.json"), "--prompts", join(d, "p.jsonl"), "--rounds", "2", "--run-dir", d, "--gpu-lock", join(d, "lock"), "--stop-timeout-s", "2", "--warmup", "0"], { env: { IK_RUNS_DIR: join(d, "runs"), IK_KEY_FILE: join(d, "key") }, timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr.slice(-1500));
    assert.doesNotMatch(r.stderr, /ExperimentalWarning/);
    for (const k of [1, 2]) {
      const c = JSON.parse(readFileSync(join(d, "rounds", `esc.r${k}.json`), "utf8"));
      assert.equal(c.status, "exited_early", `r${k}: ${c.status} ${c.detail}`);
      assert.equal(c.stop.subreaper.active, true, c.stop.subreaper.detail);
      assert.equal(c.stop.orphans.length, 1);
    }
  } finally {
    await rm(d, { recursive: true, force: true });
  }
});

function readCmd(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}
