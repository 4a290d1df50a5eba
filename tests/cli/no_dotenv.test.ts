/**
 * The compiled binary reads no `.env` from the directory it runs in (Bun's standalone executables
 * load one by default): a file there must not change what ik measures or sends. Through dist/ik.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runIk } from "../_helpers/ik.ts";

test("a .env in the working directory is not loaded (IK_OUTPUT=json there changes nothing)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-dotenv-"));
  try {
    writeFileSync(join(dir, ".env"), "IK_OUTPUT=json\nIK_HTTP_CLIENT=curl\n");
    const r = await runIk(["--version"], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ik \d+\.\d+\.\d+ \(rev /, "the plain version line, not JSON");
    const bench = await runIk(["bench", "serve", "--base-url", "http://127.0.0.1:9", "--model", "m", "--help"], { cwd: dir });
    assert.doesNotMatch(bench.stderr, /IK_HTTP_CLIENT/, "the .env's IK_HTTP_CLIENT was not read");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
