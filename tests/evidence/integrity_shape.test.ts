/**
 * integrityProblem on records whose `artifacts` is not a list of {path, sha256, role} (a hand-edited
 * or foreign evidence.json): a one-line reason, which callers turn into exit 65, never a crash
 * (a string there made report, export and compare exit 70). Both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { integrityProblem } from "../../lib/evidence/store.ts";

test("artifacts that are not a list of {path, sha256, role}: a reason, not a TypeError", async () => {
  const dir = "/nonexistent-ik-record";
  for (
    const [artifacts, want] of [
      ["requests.jsonl", /its 'artifacts' is not a list of \{path, sha256, role\}/],
      [{ path: "a" }, /not a list/],
      [[null], /its 'artifacts' holds null, not a \{path, sha256, role\}/],
      [["requests.jsonl"], /holds "requests\.jsonl"/],
      [[{ path: 3, sha256: "x" }], /holds \{"path":3/],
      [[{ path: "requests.jsonl", sha256: "ab", role: "requests" }], /artifact 'requests\.jsonl' \(requests\) is missing/],
    ] as [unknown, RegExp][]
  ) {
    const why = await integrityProblem(dir, { artifacts: artifacts as never });
    assert.ok(why !== null, JSON.stringify(artifacts));
    assert.match(why, want);
  }
  assert.equal(await integrityProblem(dir, {}), null);
  assert.equal(await integrityProblem(dir, { artifacts: [] }), null);
});
