/** How cli.ts reports errors: expected ones keep their exit code; a bug is 70 with its stack in a log file. */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { reportError } from "../../cli.ts";
import { usageError } from "../../lib/cli/errors.ts";
import { runtime } from "../../lib/runtime/mod.ts";

test("an IkError keeps its exit code", async () => {
  assert.equal(await reportError(usageError("--x", "bad value 'y'")), 64);
});

test("an unexpected error is exit 70 and its stack is written to the crash log", async () => {
  const log = join(tmpdir(), `ik-crash-${runtime.pid()}.log`);
  rmSync(log, { force: true });
  assert.equal(await reportError(new TypeError("boom in a test")), 70);
  const text = readFileSync(log, "utf8");
  assert.match(text, /TypeError: boom in a test/);
  assert.match(text, /report_error\.test\.ts/, "the stack names where it happened");
  rmSync(log, { force: true });
});

test("the crash log and the error line hold no secret: this run's key, URL secrets, secret flags", async () => {
  const { clearSecrets, registerSecret } = await import("../../lib/evidence/scrub.ts");
  const canary = "sk-CANARYcrash7Qx";
  registerSecret(canary);
  const log = join(tmpdir(), `ik-crash-${runtime.pid()}.log`);
  rmSync(log, { force: true });
  try {
    const e = new TypeError(`boom with ${canary} at http://u:pw@h/v1?api_key=k1#access_token=t1 and --password hunter22`);
    assert.equal(await reportError(e), 70);
    const text = readFileSync(log, "utf8");
    assert.match(text, /TypeError: boom with \*\*\*/);
    for (const s of [canary, "u:pw", "k1", "t1", "hunter22"]) assert.ok(!text.includes(s), `crash log holds ${s}`);
  } finally {
    clearSecrets();
    rmSync(log, { force: true });
  }
});
