/** The evidence store: staging then rename, journal, 0700 dirs, integrity; endpoint key and tags; ids. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  endpointKeyPath, endpointTag, integrityProblem, loadEndpointKey, loadRecord, newEvidenceId, parseEvidenceId, StagedRun,
} from "../../lib/evidence/mod.ts";

describe("evidence ids", () => {
  test("kind-UTC-8hex, sortable, parsed back; anything else refused", () => {
    const id = newEvidenceId("serve_benchmark", new Date(Date.UTC(2026, 11, 1, 9, 5, 7)));
    assert.match(id, /^serve_benchmark-20261201T090507Z-[0-9a-f]{8}$/);
    assert.deepEqual(parseEvidenceId(id)?.utc, "20261201T090507Z");
    for (const bad of ["../x", "serve_benchmark-20261201T090507Z-zz", "a/b-20261201T090507Z-12345678"]) assert.equal(parseEvidenceId(bad), null);
    assert.throws(() => newEvidenceId("Bad Kind"));
  });
});

describe("StagedRun", () => {
  test("journal, artifacts, finish renames into place; integrity catches a changed or missing artifact", async () => {
    const root = await mkdtemp(join(tmpdir(), "ik-store-"));
    try {
      const id = newEvidenceId("serve_benchmark");
      const run = await StagedRun.create(root, id);
      assert.equal((await stat(run.dir)).mode & 0o777, 0o700);
      await run.journal({ ok: true, ttft_ms: 1 });
      await run.journal({ ok: false, error_kind: "http" });
      await run.write("outputs/lbl/short/p1.json", "{}\n");
      const arts = [await run.artifact("requests.jsonl", "requests"), await run.artifact("outputs/lbl/short/p1.json", "output")];
      await assert.rejects(run.write("../escape.txt", "x"), /leaves the run directory/);
      const dir = await run.finish({ evidence_id: id, complete: true, artifacts: arts });
      assert.equal(dir, join(root, id));
      assert.equal((await readFile(join(dir, "requests.jsonl"), "utf8")).trim().split("\n").length, 2);
      // Plain sha256sum agrees with the record.
      const line = execFileSync("sha256sum", ["requests.jsonl"], { cwd: dir, encoding: "utf8" });
      assert.equal(line.split(/\s+/)[0], arts[0].sha256);
      assert.equal((await loadRecord(root, id)).record.complete, true);
      await writeFile(join(dir, "outputs/lbl/short/p1.json"), "{\"x\":1}\n");
      assert.match((await integrityProblem(dir, { artifacts: arts }))!, /p1\.json' \(output\) changed/);
      await rm(join(dir, "requests.jsonl"));
      await assert.rejects(loadRecord(root, id), /requests\.jsonl' \(requests\) is missing/);
      await assert.rejects(loadRecord(root, "../etc"), /not an evidence id/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("endpoint key", () => {
  test("path from IK_KEY_FILE, else XDG_CONFIG_HOME/ik, else ~/.config/ik", () => {
    assert.equal(endpointKeyPath((k) => ({ IK_KEY_FILE: "/k" } as Record<string, string>)[k], "/h"), "/k");
    assert.equal(endpointKeyPath((k) => ({ XDG_CONFIG_HOME: "/x" } as Record<string, string>)[k], "/h"), "/x/ik/endpoint.key");
    assert.equal(endpointKeyPath(() => undefined, "/h"), "/h/.config/ik/endpoint.key");
  });
  test("created 0600 once and reused; tags are stable per key and never contain the address", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-key-"));
    try {
      const p = join(dir, "cfg", "ik", "endpoint.key");
      const a = await loadEndpointKey(p);
      assert.equal(a.persistent, true);
      assert.equal((await stat(p)).mode & 0o777, 0o600);
      const b = await loadEndpointKey(p);
      const ep = { scheme: "http", host: "10.0.0.5", port: 8000, prefix: "" };
      assert.equal(endpointTag(a.key, ep), endpointTag(b.key, { ...ep, host: "10.0.0.5".toUpperCase() }));
      assert.match(endpointTag(a.key, ep), /^hmac-sha256:[0-9a-f]{64}$/);
      assert.notEqual(endpointTag(a.key, ep), endpointTag(a.key, { ...ep, port: 8001 }));
      await writeFile(p, "not hex\n");
      const c = await loadEndpointKey(p);
      assert.equal(c.persistent, false);
      assert.match(c.note!, /valid for this process only/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
