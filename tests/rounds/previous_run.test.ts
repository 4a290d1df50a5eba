/**
 * A rerun into a run dir that holds an earlier run: that run's outputs move, whole, to
 * `previous/<its start>/`; the user's own files stay; a second earlier run with the same start gets
 * its own folder. In process, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { movePreviousRun } from "../../lib/rounds/previous_run.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-prevrun-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function earlierRun(run: string): Promise<void> {
  for (const d of ["rounds", "logs", "prometheus", "resolved_config"]) await mkdir(join(run, d), { recursive: true });
  await writeFile(join(run, "rounds", "plan.json"), JSON.stringify({ started: "2026-03-04T05:06:07.891Z" }));
  await writeFile(join(run, "rounds", "summary.json"), "{}");
  await writeFile(join(run, "rounds", "a.r1.json"), "{}");
  await writeFile(join(run, "logs", "a.r1.log"), "engine log");
  await writeFile(join(run, "logs", "a.r1.serve.stderr"), "");
  await writeFile(join(run, "prometheus", "a.r1.before.txt"), "");
  await writeFile(join(run, "resolved_config", "a.r1.json"), "{}");
}

test("an earlier run's outputs move to previous/<start>/; the manifest and the user's own files stay", async () => {
  const run = join(dir, "run");
  await earlierRun(run);
  await writeFile(join(run, "manifest.json"), "{}");
  await writeFile(join(run, "logs", "notes.txt"), "mine");
  const m = movePreviousRun(run);
  assert.deepEqual(m, { to: join("previous", "20260304T050607Z"), files: 7 });
  const to = join(run, m!.to);
  for (const f of ["rounds/plan.json", "rounds/summary.json", "rounds/a.r1.json", "logs/a.r1.log", "logs/a.r1.serve.stderr", "prometheus/a.r1.before.txt", "resolved_config/a.r1.json"]) {
    assert.ok(existsSync(join(to, f)), f);
    assert.equal(existsSync(join(run, f)), false, `${f} left in place`);
  }
  assert.equal(readFileSync(join(to, "logs", "a.r1.log"), "utf8"), "engine log");
  assert.equal(existsSync(join(run, "rounds")), false);
  assert.ok(existsSync(join(run, "manifest.json")) && existsSync(join(run, "logs", "notes.txt")));
  assert.equal(movePreviousRun(run), null, "nothing left to move");
  await earlierRun(run);
  assert.equal(movePreviousRun(run)?.to, join("previous", "20260304T050607Z-2"));
});

test("an empty or new run dir has nothing to move", async () => {
  assert.equal(movePreviousRun(join(dir, "nope")), null);
  await mkdir(join(dir, "empty", "logs"), { recursive: true });
  assert.equal(movePreviousRun(join(dir, "empty")), null);
});
