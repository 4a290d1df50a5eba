/**
 * `ik bench serve --dataset sharegpt --dataset-path FILE` against `ik mock` (dist/ik, loopback
 * only; ~5 s, both runtimes): single mode runs the set built in memory, sends exactly its prompts,
 * and records the dataset (name, source file and sha256, filters) with the same prompt-set sha256
 * that `ik prompts build` writes for the same flags. The dataset flags' usage rules exit 64.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeDatasetFixtures } from "../../scripts/make_dataset_fixtures.ts";
import { runIk, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

type Obj = Record<string, any>;
let dir: string, env: Record<string, string>, mock: MockProc, fx: Record<string, string>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-serve-dataset-"));
  fx = makeDatasetFixtures(join(dir, "src"));
  const key = join(dir, "endpoint.key");
  await writeFile(key, "cd".repeat(32) + "\n", { mode: 0o600 });
  env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: key };
  mock = await startMock([]);
});
after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

const serve = (...args: string[]) =>
  runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "1", "--warmup", "0", ...args], { env, timeoutMs: 60_000 });

describe("bench serve --dataset (dist/ik)", { skip: BINARY_ONLY_SUITE }, () => {
  test("single mode runs the sharegpt sample and records the dataset; lengths by the server's /tokenize", async () => {
    const r = await serve("--dataset", "sharegpt", "--dataset-path", fx["sharegpt.json"], "--limit-per-bucket", "3", "--seed", "4", "--json");
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout) as Obj;
    const ds = rec.request.args.dataset;
    assert.equal(ds.name, "sharegpt");
    assert.equal(ds.file, "sharegpt.json");
    assert.equal(ds.source_sha256, createHash("sha256").update(await readFile(fx["sharegpt.json"])).digest("hex"));
    assert.ok(Array.isArray(ds.filters) && ds.filters.length === 5);
    assert.equal(rec.data.prompt_set_name, "dataset:sharegpt");
    // The mock (vllm) has /tokenize: the lengths are the server's, not words.
    assert.equal(ds.length_method, "server_tokenize:vllm");
    assert.doesNotMatch(r.stderr, /lengths are approximate/);

    const out = join(dir, "same.jsonl");
    const b = await runIk(["prompts", "build", "--dataset", "sharegpt", "--dataset-path", fx["sharegpt.json"], "--num-prompts", "3", "--seed", "4", "--out", out,
      "--tokenize-via", mock.base, "--model", "mock-model"]);
    assert.equal(b.code, 0, b.stderr);
    const text = await readFile(out, "utf8");
    assert.equal(rec.data.prompt_set_sha256, createHash("sha256").update(text).digest("hex"), "the same set as prompts build writes");

    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).split("\n").filter((l) => l).map((l) => JSON.parse(l));
    const ids = text.split("\n").filter((l) => l).map((l) => JSON.parse(l).id).sort();
    assert.deepEqual([...new Set(rows.map((x: Obj) => x.id))].sort(), ids);
    assert.ok(rows.every((x: Obj) => x.ok && x.bucket === "sharegpt"), "every request ok");
    const maxTokens = Object.fromEntries(text.split("\n").filter((l) => l).map((l) => [JSON.parse(l).id, JSON.parse(l).max_tokens]));
    for (const x of rows) assert.equal(x.max_tokens, maxTokens[x.id], `${x.id}: max_tokens from the answer`);
  });

  test("a server without a /tokenize ik knows: lengths as words, said on stderr and in the record", async () => {
    const plain = await startMock(["--engine", "openai"]);
    try {
      const r = await runIk(["bench", "serve", "--base-url", plain.base, "--model", "mock-model", "--rounds", "1", "--warmup", "0", "--dataset", "sonnet",
        "--dataset-path", fx["sonnet.txt"], "--limit-per-bucket", "2", "--json"], { env, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      const rec = JSON.parse(r.stdout) as Obj;
      assert.equal(rec.request.args.dataset.length_method, "words");
      assert.match(r.stderr, /the server cannot count tokens for ik .*: lengths are counted as words \(approximate\)/);
      assert.match(r.stderr, /lengths are approximate/);
    } finally {
      await plain.stop();
    }
  });

  test("usage: --dataset needs --dataset-path, not with --prompts; --dataset-path needs --dataset (64)", async () => {
    for (const args of [
      ["--dataset", "sharegpt"],
      ["--dataset-path", fx["sharegpt.json"]],
      ["--dataset", "sharegpt", "--dataset-path", fx["sharegpt.json"], "--prompts", "builtin:default"],
    ]) {
      const r = await serve(...args);
      assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
    }
    const bad = await serve("--dataset", "burstgpt", "--dataset-path", fx["burstgpt_badnum.csv"]);
    assert.equal(bad.code, 65, bad.stderr);
    assert.match(bad.stderr, /burstgpt_badnum\.csv:3:/);
  });
});
