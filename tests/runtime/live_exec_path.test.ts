/**
 * The argv that re-runs ik when its executable was replaced during a run: Linux names it
 * `PATH (deleted)`, which runs nothing (a rounds cell exited 127 with no message), and a path that
 * now holds another file runs another build; /proc/self/exe runs the same program. End to end in
 * tests/points/points_binary.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { liveExecPath, scriptArgv } from "../../lib/runtime/_common.ts";

test("a deleted or replaced executable is re-run through /proc/self/exe; the running one by its path", () => {
  const same = (p: string) => ({ dev: 1, ino: p === "/proc/self/exe" || p === "/opt/ik/bin/ik" ? 7 : 9 });
  assert.equal(liveExecPath("/opt/ik/bin/ik", same), "/opt/ik/bin/ik");
  assert.equal(liveExecPath("/opt/other/ik", same), "/proc/self/exe", "the path now holds another file");
  assert.equal(liveExecPath("/opt/ik/bin/ik (deleted)", same), "/proc/self/exe");
  const noProc = () => {
    throw new Error("ENOENT");
  };
  assert.equal(liveExecPath("/opt/ik/bin/ik", noProc), "/opt/ik/bin/ik", "no /proc: the path as given");
  assert.deepEqual(scriptArgv("/opt/ik/bin/ik (deleted)", ["/opt/ik/bin/ik (deleted)", "/$bunfs/root/ik", "bench"]), ["/proc/self/exe"]);
  assert.deepEqual(scriptArgv("/usr/bin/bun (deleted)", ["/usr/bin/bun (deleted)", "/src/cli.ts", "bench"]), ["/proc/self/exe", "/src/cli.ts"]);
  // This very process: its own executable path is live.
  assert.equal(liveExecPath(process.execPath), process.execPath);
});
