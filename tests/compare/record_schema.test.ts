/**
 * lib/compare record_schema.ts and its readers: a record of a schema this ik does not know (made by
 * a newer ik) is refused, exit 65, one line naming the file and the schema, whether it is named by
 * id, directory or evidence.json; schemas 1 (no `schema` key) to RECORD_SCHEMA are read. Two
 * records made by different ik versions are compared with a note. Both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { differenceNotes, loadRecordRef, readCheckedRecord, recordSchemaProblem } from "../../lib/compare/mod.ts";
import { RECORD_SCHEMA } from "../../lib/evidence/mod.ts";

const ID_NEW = "serve_benchmark-20261207T210657Z-124fbe3c";
const ID_OK = "serve_benchmark-20261207T210701Z-bb99ac3b";
let root: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), "ik-schema-"));
  for (const [id, schema] of [[ID_NEW, 99], [ID_OK, RECORD_SCHEMA]] as const) {
    await mkdir(join(root, id), { recursive: true });
    await writeFile(join(root, id, "evidence.json"), JSON.stringify({ evidence_id: id, kind: "serve_benchmark", schema, artifacts: [] }));
  }
});
after(() => rm(root, { recursive: true, force: true }));

/** The one-line message of the IkError `p` rejects with, checking its code. */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof IkError, String(e));
    assert.equal(e.code, 65);
    return e.oneLine();
  }
  assert.fail("not refused");
}

describe("record schema", () => {
  test("known: none (schema 1), 1 to RECORD_SCHEMA; anything else is named", () => {
    for (const r of [{}, { schema: 1 }, { schema: RECORD_SCHEMA }]) assert.equal(recordSchemaProblem(r), null, JSON.stringify(r));
    assert.equal(recordSchemaProblem({ schema: 99 }), `record schema 99, which this ik does not know (it reads schemas 1 to ${RECORD_SCHEMA})`);
    for (const s of [RECORD_SCHEMA + 1, 0, 2.5, "2", null]) assert.match(recordSchemaProblem({ schema: s })!, /^record schema .* which this ik does not know/, String(s));
  });

  test("a newer schema is refused by id, by directory and by evidence.json: 65, one line naming the file and the schema", async () => {
    const file = join(root, ID_NEW, "evidence.json");
    for (const ref of [ID_NEW, join(root, ID_NEW), file]) {
      const line = await refusal(loadRecordRef(ref, root, "/", "compare B"));
      assert.equal(line, `ik: compare B: ${file}: record schema 99, which this ik does not know (it reads schemas 1 to ${RECORD_SCHEMA}); made by a newer ik? use that version`, ref);
    }
    assert.match(await refusal(readCheckedRecord(join(root, ID_NEW), "report x")), /^ik: report x: .*record schema 99/);
    const ok = await loadRecordRef(ID_OK, root, "/", "compare A");
    assert.equal(ok.record.evidence_id, ID_OK);
    assert.equal(ok.dir, join(root, ID_OK));
  });

  test("records from different ik versions: a note naming both; the same version: none", () => {
    const rec = (version: string) => ({ kind: "serve_benchmark", complete: true, tool: { name: "ik", version, rev: "x" } });
    const notes = differenceNotes(rec("0.1.0"), rec("0.2.0"));
    assert.equal(notes.length, 1, notes.join(" | "));
    assert.match(notes[0], /^made by different ik versions: A 0\.1\.0, B 0\.2\.0; /);
    assert.deepEqual(differenceNotes(rec("0.1.0"), rec("0.1.0")), []);
  });
});
