/**
 * A child's log written through a line transform (SpawnOptions.logTransform: the caller's
 * redaction), on every runtime: a line is transformed before it reaches the file, while the child
 * still runs; a last line without a newline is written at exit; a descendant that keeps the pipe
 * open does not hold `exited` back for more than about a second.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";

let dir = "";
before(async () => (dir = await mkdtemp(join(tmpdir(), "ik-logtx-"))));
after(() => rm(dir, { recursive: true, force: true }));
const hide = (l: string) => l.replaceAll("sk-CANARY", "***");

test("lines are transformed as they are written, while the child runs", async () => {
  const log = join(dir, "running.log");
  const g = runtime.spawn(["sh", "-c", "echo 'key sk-CANARY on stdout'; echo 'err sk-CANARY' >&2; sleep 20"], { logFile: log, logTransform: hide });
  try {
    let text = "";
    for (let i = 0; i < 100 && !(text.includes("on stdout") && text.includes("err")); i++) {
      await new Promise((r) => setTimeout(r, 30));
      text = await readFile(log, "utf8");
    }
    assert.match(text, /key \*\*\* on stdout\n/);
    assert.match(text, /err \*\*\*\n/);
    assert.ok(!text.includes("CANARY"), text);
  } finally {
    g.killGroup("SIGKILL");
    await g.exited;
  }
});

test("a last line without its newline is written (transformed) when the child ends", async () => {
  const log = join(dir, "tail.log");
  const g = runtime.spawn(["sh", "-c", "printf 'a sk-CANARY\\nb'; printf ' sk-CANARY tail' >&2"], { logFile: log, logTransform: hide });
  await g.exited;
  const text = await readFile(log, "utf8");
  assert.ok(text.includes("a ***\n"), text);
  assert.ok(text.includes("b"), text);
  assert.ok(text.includes(" *** tail"), text);
  assert.ok(!text.includes("CANARY"), text);
});

test("a descendant holding the pipe open does not hold exited back", async () => {
  const log = join(dir, "held.log");
  const t0 = performance.now();
  const g = runtime.spawn(["sh", "-c", "(sleep 30 &); echo done sk-CANARY"], { logFile: log, logTransform: hide });
  await g.exited;
  assert.ok(performance.now() - t0 < 5000, `${performance.now() - t0} ms`);
  g.killGroup("SIGKILL");
  assert.match(await readFile(log, "utf8"), /done \*\*\*/);
});
