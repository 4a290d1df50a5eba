/**
 * An engine whose launcher exits while a descendant still writes to the inherited pipe (a
 * `sh -c "server & exit 0"` launcher): the exit is noticed at once, the descendant's later lines
 * keep going to the engine's own log (never, through a reused fd number, into another file ik
 * opens meanwhile), and the log's fd is closed once the last writer is gone. Both runtimes, ~3 s.
 */
import assert from "node:assert/strict";
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";

let dir = "";
before(async () => (dir = await mkdtemp(join(tmpdir(), "ik-englog-"))));
after(() => rm(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hasProc = (() => {
  try {
    return readdirSync("/proc/self/fd").length > 0;
  } catch {
    return false;
  }
})();

/** The paths this process has open, from /proc/self/fd. */
function openPaths(): string[] {
  const out: string[] = [];
  for (const n of readdirSync("/proc/self/fd")) {
    try {
      out.push(readlinkSync(`/proc/self/fd/${n}`));
    } catch { /* closed meanwhile */ }
  }
  return out;
}

test("the leader's exit is seen at once; a descendant's later lines stay in the engine's log; the fd closes after it", { skip: hasProc ? false : "needs /proc" }, async () => {
  const log = join(dir, "engine.log");
  const t0 = performance.now();
  const g = runtime.spawn(["sh", "-c", "(for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo late $i; sleep 0.1; done) & echo first; exit 3"], {
    logFile: log, logTransform: (l) => l.toUpperCase(),
  });
  try {
    const st = await g.exited;
    const seenMs = performance.now() - t0;
    assert.deepEqual(st, { code: 3, signal: null });
    assert.ok(seenMs < 700, `the exit was seen ${Math.round(seenMs)} ms after the start: held back by the descendant's pipe`);
    // ik opens other files meanwhile (the next cell's files): they must not receive the engine's lines.
    await sleep(1000 - seenMs > 0 ? 1000 - seenMs + 100 : 100);
    const others = Array.from({ length: 8 }, (_, i) => join(dir, `other${i}.txt`));
    const fds = others.map((p) => openSync(p, "a"));
    try {
      for (let i = 0; i < 60 && !readFileSync(log, "utf8").includes("LATE 15"); i++) await sleep(50);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
    const text = readFileSync(log, "utf8");
    for (let i = 1; i <= 15; i++) assert.ok(text.includes(`LATE ${i}\n`), `line ${i} missing from the engine's log:\n${text}`);
    assert.match(text, /^FIRST$/m);
    for (const p of others) assert.equal(readFileSync(p, "utf8"), "", `${p} got the engine's lines`);
    for (let i = 0; i < 40 && openPaths().includes(log); i++) await sleep(50);
    assert.equal(openPaths().includes(log), false, "the log's fd is closed once the descendant is gone");
  } finally {
    g.killGroup("SIGKILL");
  }
});
