/**
 * Issue 23 §3 through dist/ik: `prompts synth --out` into a folder that does not exist is one line
 * naming the path (never "internal error"); and every dependency npm installs runs on the Node the
 * README names (Node 20: no `engines.node` that excludes it, so `npm ci` warns no EBADENGINE).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT, runIk } from "../_helpers/ik.ts";

test("prompts synth --out into a missing folder: one line naming it, not an internal error", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-surface-"));
  try {
    const out = join(dir, "no", "such", "folder", "p.jsonl");
    const r = await runIk(["prompts", "synth", "--bucket", "a:8:4", "--out", out], { env: { IK_RUNS_DIR: join(dir, "runs") } });
    assert.notEqual(r.code, 0);
    assert.notEqual(r.code, 70, "not an internal error");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.ok(r.stderr.includes(out), r.stderr);
    assert.doesNotMatch(r.stderr, /internal error|please report/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("every dependency runs on Node 20 (the README's installer): no engines.node that excludes it", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  for (const name of [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]) {
    let dep: { engines?: { node?: string } };
    try {
      dep = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8"));
    } catch {
      continue; // not installed here (optional)
    }
    const want = dep.engines?.node;
    if (!want) continue;
    // The forms npm packages use: ">=18", ">=20.0.0", "^20 || >=22"; a bare lower bound above 20 excludes it.
    const m = /^>=\s*(\d+)(?:\.(\d+))?/.exec(want.trim());
    if (m) assert.ok(Number(m[1]) <= 20, `${name} wants node ${want}: npm ci on Node 20 warns EBADENGINE`);
  }
});
