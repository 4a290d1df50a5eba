/** fileSha256: the sha256 of a file's bytes at every size around its read buffer (1 MiB). */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileSha256 } from "../../lib/evidence/mod.ts";

test("fileSha256 equals sha256 of the whole bytes: empty, small, one buffer exactly, several and a tail", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-sha-"));
  try {
    const MiB = 1 << 20;
    for (const size of [0, 1, 1000, MiB - 1, MiB, MiB + 1, 2 * MiB + 12345]) {
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 2654435761) >>> 24;
      const p = join(dir, `f${size}`);
      writeFileSync(p, bytes);
      assert.equal(await fileSha256(p), createHash("sha256").update(bytes).digest("hex"), `${size} bytes`);
    }
    await assert.rejects(fileSha256(join(dir, "missing")), /ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
