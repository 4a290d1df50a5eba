/**
 * A gzip-encoded body that is corrupt is a `protocol` failure (the bytes arrived; they are not a
 * stream), not `network`, and the runtime prints nothing: run in a child process so its stderr can
 * be checked. A good gzip body still reads. Budget: ~3 s (three short children).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { ROOT } from "../_helpers/ik.ts";

function runChild(how: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = join(ROOT, "tests", "client", "_gzip_child.ts");
  const argv = runtime.name === "deno" ? [runtime.execPath(), "run", "-A", child] : [runtime.execPath(), child];
  return new Promise((ok) => {
    const p = spawn(argv[0], [...argv.slice(1), how], {
      cwd: ROOT,
      env: { ...runtime.envAll(), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "", stderr = "";
    p.stdout!.on("data", (d) => (stdout += d));
    p.stderr!.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => p.kill("SIGKILL"), 30_000);
    p.on("close", (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

for (const how of ["corrupt", "cut"]) {
  test(`a ${how} gzip body: protocol, and nothing on stderr`, async () => {
    const out = await runChild(how);
    assert.equal(out.code, 0, out.stderr);
    const r = JSON.parse(out.stdout.trim());
    assert.equal(r.ok, false);
    assert.equal(r.errorKind, "protocol", r.error);
    assert.match(r.error, /^corrupt gzip body: /);
    assert.equal(out.stderr, "", "the runtime printed on stderr");
  });
}

test("a good gzip body (a server that compresses although asked not to) reads, quietly", async () => {
  const out = await runChild("good");
  assert.equal(out.code, 0, out.stderr);
  const r = JSON.parse(out.stdout.trim());
  assert.equal(r.ok, true, r.error);
  assert.equal(r.text, "a");
  assert.equal(out.stderr, "");
});
