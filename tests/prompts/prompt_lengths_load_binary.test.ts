/**
 * Prompt-length error in load mode, through dist/ik against `ik mock` (issue 19 §1): a set sized by
 * the mock's /tokenize run with `bench serve --mode load` gets `data.prompt_lengths` per bucket with
 * 0 error over the untagged requests and the pool's reused (tagged) prompts apart; every journaled
 * row states its `target_prompt_tokens`; a words set is flagged approximate and off by the mock's
 * template tokens; a one-process slice split in two after the fact and merged keeps the same check.
 * Budget: ~8 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { jsonl, loadArgs, merge, mergedRecords, type Obj, runLocalShards, shardEnv, splitSlice, startAt } from "../shard/_sharded.ts";

describe("prompt lengths in load mode (binary)", { skip: BINARY_ONLY_SUITE }, () => {
  let mock: MockProc;
  let dir = "";
  let env: Record<string, string> = {};
  let exact = "";
  before(async () => {
    mock = await startMock(["--engine", "vllm"]);
    dir = await mkdtemp(join(tmpdir(), "ik-plen-load-"));
    env = await shardEnv(dir);
    exact = join(dir, "exact.jsonl");
    const r = await runIk(["prompts", "synth", "--tokenize-via", mock.base, "--bucket", "in64:64:4,in200:200:4", "--per-bucket", "3", "--out", exact], { env });
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** The measured record and rows of a load run over `set` (10 requests at 25 req/s: 6 prompts, 4 reused with a tag). */
  const load = async (set: string) => {
    const r = await runIk(["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--prompts", set, "--rates", "25", "--requests", "10", "--warmup", "0", "--json"], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const recDir = join(env.IK_RUNS_DIR, JSON.parse(r.stdout).data.measurement);
    const rec = JSON.parse(await readFile(join(recDir, "evidence.json"), "utf8"));
    return { rec, rows: jsonl(await readFile(join(recDir, "requests.jsonl"), "utf8")) };
  };

  test("an exact set: 0 error per bucket over the untagged requests, the reused ones apart, each row states its target", async () => {
    const { rec, rows } = await load(exact);
    const pl = rec.data.prompt_lengths;
    assert.deepEqual(pl.length_methods, { "server_tokenize:vllm": 6 });
    assert.equal(rows.length, 10);
    for (const r of rows) {
      assert.equal(r.target_prompt_tokens, r.bucket === "in64" ? 64 : 200, String(r.id));
      if (r.salt === null) assert.equal(r.prompt_tokens, r.target_prompt_tokens, String(r.id));
    }
    const untagged = rows.filter((r) => r.salt === null).length;
    assert.ok(untagged >= 1 && untagged <= 6, `untagged ${untagged}`);
    assert.deepEqual([pl.all.n, pl.all.max_abs_error, pl.all.exact], [untagged, 0, untagged]);
    const b = pl.buckets as Record<string, { n: number; tagged: { n: number; mean_excess: number | null } }>;
    assert.equal(b.in64.n + b.in200.n, untagged);
    assert.equal(b.in64.tagged.n + b.in200.tagged.n, 10 - untagged, "the reused prompts are counted apart");
    for (const x of Object.values(b)) if (x.tagged.n) assert.ok((x.tagged.mean_excess as number) > 0, "the tag adds tokens");
    assert.ok(!rec.limitations.some((l: string) => /approximate|differed/.test(l)), rec.limitations.join(" | "));
  });

  test("a words set: approximate, said in the load record, off by the mock's template tokens", async () => {
    const words = join(dir, "words.jsonl");
    const s = await runIk(["prompts", "synth", "--bucket", "w:40:8", "--per-bucket", "10", "--out", words], { env });
    assert.equal(s.code, 0, s.stderr);
    const { rec } = await load(words);
    assert.equal(rec.data.prompt_lengths.buckets.w.max_abs_error, 7, "Σ(words + 4) + 3 against words");
    assert.equal(rec.data.prompt_lengths.all.n, 10);
    assert.ok(rec.limitations.some((l: string) => /prompt lengths are approximate/.test(l)), rec.limitations.join(" | "));
    assert.ok(rec.limitations.some((l: string) => /differed from the set's input_tokens in 10 of 10/.test(l)), rec.limitations.join(" | "));
  });

  test("a slice split in two and merged: the merged record's check is the slice's own", async () => {
    const store = { ...env, IK_RUNS_DIR: join(dir, "slices") };
    const [r] = await runLocalShards(1, loadArgs(mock.base, startAt(1500), ["--prompts", exact, "--rates", "25", "--requests", "10"]), { env: store, staggerMs: 0, jobIndex: false });
    assert.equal(r.code, 0, r.stderr);
    const sliceDir = join(store.IK_RUNS_DIR, JSON.parse(r.stdout).evidence_id);
    const slice = JSON.parse(await readFile(join(sliceDir, "evidence.json"), "utf8")) as Obj;
    const own = (slice.data as Obj).prompt_lengths as Obj;
    assert.equal((own.all as Obj).max_abs_error, 0);
    const dirs = await splitSlice(sliceDir, 2, join(dir, "split"));
    const m = await merge(dirs, env, join(dir, "merged"));
    assert.equal(m.code, 0, m.stderr);
    const got = await mergedRecords(m, join(dir, "merged"));
    assert.deepEqual((got.measured.data as Obj).prompt_lengths, own);
  });
});
