/**
 * The orphan watchdog (lib/runtime/_watchdog.ts): whatever ik starts through runtime.spawn ends
 * within 2 s of ik's death, even a SIGKILL that runs none of ik's own cleanup; in normal operation
 * the watchdogs neither leak nor hold ik (or its stdout) open. Budget: ~6 s, plus ~5 s for the
 * binary's selftest case.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { WATCHDOG_NAME } from "../../lib/runtime/_watchdog.ts";
import { ikBin, ROOT, startArgv } from "../_helpers/ik.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MARKER = `ik-orphan-${runtime.pid()}-${Date.now().toString(36)}`;

interface Proc {
  pid: number;
  pgid: number;
  argv: string[];
}

/** Live (non-zombie) processes, from /proc. */
function procs(): Proc[] {
  const out: Proc[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const fields = readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1].split(" ");
      if (fields[0] === "Z" || fields[0] === "X") continue;
      const argv = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (argv.at(-1) === "") argv.pop();
      out.push({ pid: Number(d), pgid: Number(fields[2]), argv });
    } catch { /* raced with exit */ }
  }
  return out;
}

const groupAlive = (pgid: number) => procs().some((p) => p.pgid === pgid);
const pidAlive = (pid: number) => procs().some((p) => p.pid === pid);
/** Watchdogs watching `target` ("-<pgid>" or "<pid>"): `sh -c <script> ik-watchdog <ik pid> <target>`. */
const watchdogs = (target: string) =>
  procs().filter((p) => p.argv[3] === WATCHDOG_NAME && p.argv[5] === target);
const marked = (m: string) => procs().filter((p) => p.argv.some((a) => a.includes(m)));

async function within(ms: number, ok: () => boolean): Promise<boolean> {
  const end = performance.now() + ms;
  for (;;) {
    if (ok()) return true;
    if (performance.now() > end) return false;
    await sleep(25);
  }
}

function fixtureArgv(): string[] {
  const script = join(ROOT, "tests/runtime/_fixtures/orphan_parent.ts");
  return runtime.name === "deno" ? [runtime.execPath(), "run", "-A", script] : [runtime.execPath(), script];
}

async function ready(p: ReturnType<typeof startArgv>): Promise<string> {
  await within(15_000, () => /ready .*\n/.test(p.stdout()) || p.stderr().length > 0);
  const line = p.stdout().match(/ready (.*)\n/)?.[1];
  assert.ok(line, `fixture is ready: ${p.stdout()} ${p.stderr()}`);
  return line;
}

// Should a case fail, take its leftovers (whole groups: their sleeps carry no marker) with it.
after(() => {
  for (const p of marked(MARKER)) {
    try {
      process.kill(p.pgid === p.pid ? -p.pid : p.pid, "SIGKILL");
    } catch { /* gone */ }
  }
});

test("SIGKILL of the parent: every spawned group and child is gone within 2 s", async () => {
  const marker = `${MARKER}-a`;
  const p = startArgv(fixtureArgv(), ["hang", marker]);
  const line = await ready(p);
  const term = Number(line.match(/term=(\d+)/)?.[1]);
  const ignore = Number(line.match(/ignore=(\d+)/)?.[1]);
  const same = Number(line.match(/same=(\d+)/)?.[1]);
  assert.ok(groupAlive(term) && groupAlive(ignore) && pidAlive(same), "all alive before the kill");
  assert.ok(procs().filter((x) => x.pgid === term).length >= 2, "the group has its grandchild");
  assert.equal(watchdogs(`-${term}`).length, 1, "one watchdog per group");
  assert.equal(watchdogs(String(same)).length, 1, "a same-group child has a watchdog too");
  // It holds none of the parent's pipes (whoever reads ik's stdout waits for EOF), and is in
  // neither the parent's group nor the child's.
  const fds = (pid: number) =>
    readdirSync(`/proc/${pid}/fd`).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`));
  const parentPipes = [1, 2].map((fd) => readlinkSync(`/proc/${p.pid}/fd/${fd}`));
  assert.ok(
    parentPipes.every((l) => /^(pipe|socket):/.test(l)),
    `the parent's stdout and stderr are pipes: ${parentPipes}`,
  );
  const [wd] = watchdogs(`-${term}`);
  assert.deepEqual(
    fds(wd.pid).filter((l) => parentPipes.includes(l)),
    [],
    "watchdog holds no pipe of the parent",
  );
  assert.ok(
    wd.pgid !== term && wd.pgid !== procs().find((x) => x.pid === p.pid)?.pgid,
    "watchdog in a group of its own",
  );
  process.kill(p.pid, "SIGKILL");
  const t0 = performance.now();
  await p.exited;
  const gone = await within(
    2000 - (performance.now() - t0),
    () => !groupAlive(term) && !groupAlive(ignore) && !pidAlive(same) && marked(marker).length === 0,
  );
  assert.ok(
    gone,
    `left after 2 s: ${JSON.stringify(marked(marker).concat(procs().filter((x) => x.pid === same)))}`,
  );
  // A killed orphan is a zombie until init reaps it, and kill -0 counts zombies, so a watchdog can
  // sit out its whole SIGTERM grace (1 s) where init reaps lazily (as in some sandboxes).
  assert.ok(
    await within(1500, () => watchdogs(`-${term}`).length + watchdogs(`-${ignore}`).length === 0),
    "watchdogs end with their groups",
  );
});

test("SIGKILL of a parent that stays a zombie (its own parent never waits): still gone within 2 s", async () => {
  // `exec sleep` leaves the fixture the child of a process that never reaps it, so the killed
  // fixture's pid stays "alive" for kill -0; the watchdog must look at its own parent instead.
  const marker = `${MARKER}-z`;
  const q = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const sh = startArgv([
    "sh",
    "-c",
    `${[...fixtureArgv(), "hang", marker].map(q).join(" ")} & echo "fixture $!"; exec sleep 30`,
  ], []);
  try {
    const line = await ready(sh);
    const fixture = Number(sh.stdout().match(/fixture (\d+)/)?.[1]);
    const term = Number(line.match(/term=(\d+)/)?.[1]);
    assert.ok(fixture > 0 && groupAlive(term), sh.stdout());
    process.kill(fixture, "SIGKILL");
    const t0 = performance.now();
    assert.ok(await within(500, () => !pidAlive(fixture)), "the fixture died");
    assert.equal(runtime.pidAlive(fixture), true, "... and is a zombie that kill -0 still finds");
    const gone = await within(
      2000 - (performance.now() - t0),
      () => !groupAlive(term) && marked(marker).length === 0,
    );
    assert.ok(gone, `left after 2 s: ${JSON.stringify(marked(marker))}`);
  } finally {
    await sh.stop("SIGKILL");
  }
});

test("normal operation: ik exits at once though a watchdog is live, and nothing is left behind", async () => {
  const marker = `${MARKER}-c`;
  const p = startArgv(fixtureArgv(), ["natural", marker]);
  const line = await ready(p);
  const pgid = Number(line.match(/group=(\d+)/)?.[1]);
  const t0 = performance.now();
  // The group outlives its leader (a 30 s member): only the watchdog can end it, and it must not
  // keep the parent's event loop alive or its stdout open (startArgv waits for stdout to close).
  const done = await Promise.race([p.exited.then(() => true), sleep(5000).then(() => false)]);
  assert.ok(done, "the parent exited (stdout closed) within 5 s of returning from main");
  assert.equal((await p.exited).code, 0);
  assert.ok(performance.now() - t0 < 3000, `parent took ${Math.round(performance.now() - t0)} ms to end`);
  assert.ok(await within(2000, () => !groupAlive(pgid) && marked(marker).length === 0), "the group is gone");
  assert.ok(
    await within(1500, () => watchdogs(`-${pgid}`).length === 0),
    "its watchdog is gone (see above on zombies)",
  );
});

test("a watchdog ends with its group while ik lives (no leak, one per group)", async () => {
  const marker = `${MARKER}-leak`;
  const groups = [0, 1, 2].map(() => runtime.spawn(["sh", "-c", "sleep 0.2", marker]));
  assert.ok(
    await within(2000, () => groups.every((g) => watchdogs(`-${g.pid}`).length === 1)),
    "one watchdog each",
  );
  await Promise.all(groups.map((g) => g.exited));
  assert.ok(
    await within(1000, () => groups.every((g) => watchdogs(`-${g.pid}`).length === 0)),
    "watchdogs ended with their groups",
  );
  // and a group killed by ik takes its watchdog with it, stdout unaffected
  const piped = runtime.spawn(["sh", "-c", "echo hello; exec sleep 300", marker], { pipeStdout: true });
  const reader = piped.stdout!.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "hello\n");
  piped.killGroup("SIGKILL");
  await piped.exited;
  assert.equal(
    (await reader.read()).done,
    true,
    "the child's stdout closes when it dies (the watchdog does not hold it)",
  );
  assert.ok(
    await within(1000, () => watchdogs(`-${piped.pid}`).length === 0),
    "watchdog gone after killGroup",
  );
});

test("kill -9 of `ik selftest` (compiled binary): no `ik mock` of it is left after 2.5 s", {
  skip: !existsSync(ikBin()) ? `no binary at ${ikBin()}` : false,
}, async () => {
  // A private copy, so that pgrep-style matching can only see this test's processes.
  const dir = mkdtempSync(join(tmpdir(), "ik-orphan-bin-"));
  try {
    const bin = join(dir, "ik");
    copyFileSync(ikBin(), bin);
    const child = spawn(bin, ["selftest"], { stdio: "ignore", env: { ...runtime.envAll(), NO_COLOR: "1" } });
    const closed = new Promise((r) => child.on("exit", r));
    const mocks = () => procs().filter((p) => p.argv[0] === bin && p.argv[1] === "mock");
    assert.ok(await within(20_000, () => mocks().length >= 2), "selftest started its mocks");
    const before = mocks().length;
    child.kill("SIGKILL");
    const t0 = performance.now();
    await closed;
    const gone = await within(2500 - (performance.now() - t0), () => mocks().length === 0);
    assert.ok(gone, `${mocks().length} of ${before} mocks still running 2.5 s after kill -9`);
  } finally {
    for (const p of procs().filter((x) => x.argv[0]?.startsWith(dir))) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch { /* gone */ }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
