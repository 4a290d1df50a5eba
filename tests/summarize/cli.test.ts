/**
 * `ik summarize vllm` through the compiled binary: exit 0 with the tables, exit 1 when
 * `--decide` is not PUBLISHABLE, `--json` on stdout and `--json-out` to a file, and one-line
 * errors: a malformed runs.tsv (65, file:line), a missing --boots (65), a bad --spread-exempt
 * (64). ~3 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { VLLM_DATA } from "./_unit.ts";

const unit = join(VLLM_DATA, "unit");
const good = ["summarize", "vllm", "--runs", join(unit, "runs.tsv"), "--results", join(unit, "results"), "--boots", join(unit, "boots.tsv"),
  "--sb-data", join(VLLM_DATA, "question.jsonl"), "--sb-out", "16"];
let tmp: string;
before(async () => (tmp = await mkdtemp(join(tmpdir(), "ik-sum-cli-"))));
after(() => rm(tmp, { recursive: true, force: true }));

describe("ik summarize vllm (binary)", () => {
  test("the good unit: tables, FLAGS none, PUBLISHABLE, exit 0; the JSONL warning on stderr", async () => {
    const r = await runIk([...good, "--decide", "A B"], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^== configuration \(first boot; FLAGS list any boot that differs\) ==$/m);
    assert.match(r.stdout, /^== random, pass B ==$/m);
    assert.match(r.stdout, /^== sb-c1-A: MTP per Spec-Bench category \(mapping verified\) ==$/m);
    assert.match(r.stdout, /^-- task groups \(MT-bench pooled\) --\nmt_bench +5 /m);
    assert.match(r.stdout, /^FLAGS: none$/m);
    assert.match(r.stdout, /^DECISION: PUBLISHABLE \(max A\/B spread /m);
    assert.match(r.stderr, /^ik: summarize vllm: warning: .*rnd-c4-B\.json holds 2 results \(--append-result\); using the last$/m);
  });

  test("an optional file given empty is not given, as the seed reads it (a script's unset variable)", async () => {
    const plain = ["summarize", "vllm", "--runs", join(unit, "runs.tsv"), "--results", join(unit, "results")];
    const a = await runIk([...plain, "--json"], { timeoutMs: 30_000 });
    const b = await runIk([...plain, "--boots", "", "--container", "", "--sb-data", "", "--sb-dir", "", "--json-out", "", "--json"], { timeoutMs: 30_000 });
    assert.equal(b.code, a.code, b.stderr);
    assert.equal(b.stdout, a.stdout);
  });

  test("--decide not PUBLISHABLE exits 1; without --decide the same unit exits 0", async () => {
    const dir = join(VLLM_DATA, "failed");
    const args = ["summarize", "vllm", "--runs", join(dir, "runs.tsv"), "--results", join(dir, "results")];
    const r = await runIk([...args, "--decide", "A"], { timeoutMs: 30_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^DECISION: NOT-PUBLISHABLE fail-modern: 2 failed requests; /m);
    const plain = await runIk(args, { timeoutMs: 30_000 });
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stdout, /DECISION/);
  });

  test("--json prints one object; --json-out writes the same", async () => {
    const out = join(tmp, "s.json");
    const r = await runIk([...good, "--decide", "A,B", "--json", "--json-out", out], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.verdict, "PUBLISHABLE");
    assert.equal(j.runs.length, 6);
    assert.deepEqual(j.flags, []);
    assert.equal(j.spreads.length, 3);
    assert.deepEqual(JSON.parse(await readFile(out, "utf8")), j);
  });

  test("a malformed runs.tsv: exit 65, one line naming file:line", async () => {
    const runs = join(tmp, "runs.tsv");
    const text = await readFile(join(unit, "runs.tsv"), "utf8");
    await writeFile(runs, text.replace("\t4\t18\t27\t", "\tfour\t18\t27\t"));
    const r = await runIk(["summarize", "vllm", "--runs", runs, "--results", join(unit, "results")], { timeoutMs: 30_000 });
    assert.equal(r.code, 65);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^ik: .*runs\.tsv:4: conc 'four' is not a positive number; /);
  });

  test("missing inputs and bad flags: one line each", async () => {
    const missing = await runIk(["summarize", "vllm", "--runs", join(unit, "runs.tsv"), "--results", join(unit, "results"), "--boots", join(tmp, "nope.tsv")], { timeoutMs: 30_000 });
    assert.equal(missing.code, 65);
    assert.match(missing.stderr, /^ik: --boots: .*nope\.tsv: no such file; /);
    const noDir = await runIk(["summarize", "vllm", "--runs", join(unit, "runs.tsv"), "--results", join(tmp, "none")], { timeoutMs: 30_000 });
    assert.equal(noDir.code, 65);
    assert.match(noDir.stderr, /^ik: --results: .*none: no such directory; /);
    const exempt = await runIk([...good, "--spread-exempt", "1,x"], { timeoutMs: 30_000 });
    assert.equal(exempt.code, 64);
    assert.match(exempt.stderr, /^ik: --spread-exempt: 'x' is not a positive level; /);
    for (const r of [missing, noDir, exempt]) assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  });
});
