/**
 * bench serve and ik prompts through the compiled binary against `ik mock` processes: --extend
 * across two processes, malformed prompt sets (exit 65, one line naming file:line), and SIGINT
 * leaving the journaled rows and an incomplete record (exit 130). ~15 s.
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk, startArgv, ikBin, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let mock: MockProc;
let dir: string;
let env: Record<string, string>;

before(async () => {
  mock = await startMock(["--engine", "sglang", "--ttft-ms", "15", "--tpot-ms", "2"]);
  dir = await mkdtemp(join(tmpdir(), "ik-bench-bin-"));
  env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
});
after(async () => {
  await mock.stop();
  await rm(dir, { recursive: true, force: true });
});

const base = (limit = 1) => ["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--warmup", "0", "--limit-per-bucket", String(limit), "--max-tokens", "8", "--resamples", "200"];

describe("bench serve through the binary", { skip: BINARY_ONLY_SUITE }, () => {
  test("a record, then --extend from a second process; a different --seed is refused naming it", async () => {
    const a = await runIk([...base(), "--rounds", "2", "--json"], { env, timeoutMs: 60_000 });
    assert.equal(a.code, 0, a.stderr);
    const ra = JSON.parse(a.stdout);
    assert.equal(ra.identity.engine.name, "sglang");
    assert.equal(ra.identity.engine.kind_source, "owned_by");
    assert.equal(ra.data.buckets.all.n_requests, 8);
    assert.deepEqual(ra.data.token_count_methods, { usage: 8 });
    // ik's request path ran in memory before the first round (the server saw only the 8 rows).
    assert.ok(ra.data.client_warm_up.requests >= 10 && ra.data.client_warm_up.ms > 0, JSON.stringify(ra.data.client_warm_up));
    assert.ok(ra.limitations.some((l: string) => /usage\.completion_tokens/.test(l)));
    const b = await runIk([...base(), "--rounds", "1", "--extend", ra.evidence_id, "--json"], { env, timeoutMs: 60_000 });
    assert.equal(b.code, 0, b.stderr);
    const rb = JSON.parse(b.stdout);
    assert.equal(rb.data.rounds.length, 3);
    assert.equal(rb.data.extends, ra.evidence_id);
    const c = await runIk([...base(), "--rounds", "1", "--seed", "9", "--extend", ra.evidence_id], { env, timeoutMs: 60_000 });
    assert.equal(c.code, 64);
    assert.match(c.stderr, /^ik: --extend: .*these differ: seed; /m);
    assert.equal(c.stderr.trim().split("\n").length, 1);
  });

  test("every malformed prompt set: exit 65, one line naming file:line", async () => {
    const ok = { id: "a", bucket: "short", messages: [{ role: "user", content: "x" }] };
    const cases: [string, string | Uint8Array, RegExp][] = [
      ["dup.jsonl", [ok, ok].map((o) => JSON.stringify(o)).join("\n"), /dup\.jsonl:2: duplicate id 'a'/],
      ["slash.jsonl", JSON.stringify({ ...ok, id: "a/b" }), /slash\.jsonl:1: 'id'/],
      ["dot.jsonl", JSON.stringify({ ...ok, bucket: ".x" }), /dot\.jsonl:1: 'bucket'/],
      ["empty-id.jsonl", JSON.stringify({ ...ok, id: "" }), /empty-id\.jsonl:1: 'id'/],
      ["msgs.jsonl", JSON.stringify({ ...ok, messages: [] }), /msgs\.jsonl:1: 'messages'/],
      ["mt.jsonl", JSON.stringify({ ...ok, max_tokens: 0 }), /mt\.jsonl:1: 'max_tokens'/],
      ["notjson.jsonl", JSON.stringify(ok) + "\n{nope", /notjson\.jsonl:2:/],
      ["latin1.jsonl", new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x7d, 0x0a]), /latin1\.jsonl/],
      ["corrupt.jsonl.gz", gzipSync(JSON.stringify(ok)).subarray(0, 20), /corrupt\.jsonl\.gz/],
      ["none.jsonl", "\n\n", /none\.jsonl: no prompts/],
    ];
    for (const [name, body, re] of cases) {
      const p = join(dir, name);
      await writeFile(p, body);
      for (const args of [["prompts", "validate", p], [...base(), "--prompts", p]]) {
        const r = await runIk(args, { env, timeoutMs: 30_000 });
        assert.equal(r.code, 65, `${name} ${args[0]}: ${r.stderr}`);
        assert.match(r.stderr, re, name);
        assert.equal(r.stderr.trim().split("\n").length, 1, `${name}: ${r.stderr}`);
        assert.match(r.stderr, /^ik: /);
      }
    }
  });

  test("SIGINT mid-run: exit 130, the rows journaled so far and an incomplete record", async () => {
    const p = startArgv([ikBin()], [...base(0), "--rounds", "200", "--json"], { env });
    await p.waitFor(/round 1\/200/, 30_000);
    const r = await p.stop("SIGINT");
    assert.equal(r.code, 130, p.stderr());
    const rec = JSON.parse(p.stdout());
    assert.equal(rec.complete, false);
    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n");
    assert.ok(rows.length >= 12, `${rows.length}`);
    assert.ok(rec.limitations.some((l: string) => l === `interrupted after ${rows.length} of 2400 requests`), rec.limitations.join("\n"));
    assert.match(p.stderr(), /interrupted/);
  });
});
