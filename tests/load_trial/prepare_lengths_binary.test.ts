/**
 * Through dist/ik against `ik mock` (issue 19 §1): `load-trial prepare --synth IN:OUT
 * --tokenize-via URL` makes IN exact with the server's own tokenizer (chat template included), and
 * `load-trial run` holds every request's usage.prompt_tokens against it in summary.json (0 error);
 * without it the lengths are words, said as approximate at prepare time and in the summary (off by
 * the mock's 7 template tokens); the length flags are refused where they do not apply. ~4 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

describe("load-trial prepare --synth lengths (binary)", () => {
  let dir = "";
  let mock: MockProc;
  const env = () => ({ IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-lt-len-"));
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "1", "--tpot-ms", "1"]);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const prepare = (name: string, extra: string[]) =>
    runIk(["load-trial", "prepare", "--out", join(dir, name), "--synth", "a:64:4", "--synth", "b:150:4", "--requests", "6", "--json", ...extra], { env: env() });
  const trial = async (workload: string, name: string) => {
    // --base-url, the name serve and probe use, is accepted beside the seed's --base.
    const r = await runIk(["load-trial", "run", "--base-url", mock.base, "--expected-model", "mock-model", "--workload", workload, "--rate", "20", "--requests", "8",
      "--ttft", "2", "--tpot", "0.05", "--attainment", "0.5", "--out", join(dir, name)], { env: env(), timeoutMs: 30_000 });
    assert.ok(r.code === 0 || r.code === 2, `${r.code}: ${r.stderr}`);
    return JSON.parse(await readFile(join(dir, name, "summary.json"), "utf8"));
  };

  test("--tokenize-via: each request's input_tokens is the server's count, and usage agrees with it on every request", async () => {
    const p = await prepare("exact", ["--tokenize-via", mock.base]);
    assert.equal(p.code, 0, p.stderr);
    assert.equal(p.stderr, "", "an exact workload has nothing to warn about");
    const info = JSON.parse(p.stdout);
    assert.equal(info.source.length_method, "server_tokenize:vllm");
    const w = JSON.parse(await readFile(info.path, "utf8"));
    assert.deepEqual(w.requests.map((r: { input_tokens: number }) => r.input_tokens), [64, 150, 64, 150, 64, 150]);
    const s = await trial(info.path, "exact-run");
    assert.equal(s.prompt_lengths.all.n, 8);
    assert.equal(s.prompt_lengths.all.max_abs_error, 0);
    assert.deepEqual(s.prompt_lengths.limitations, []);
    const rows = (await readFile(join(dir, "exact-run", "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    for (const r of rows) assert.equal(r.prompt_tokens, r.input_tokens, `seq ${r.seq}`);
  });

  test("words (no --tokenize-via): approximate at prepare time and in the summary, off by the template", async () => {
    const p = await prepare("words", []);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stderr, /^ik: load-trial prepare: lengths are approximate: .*--tokenize-via URL/);
    assert.equal(JSON.parse(p.stdout).source.length_method, "words");
    const s = await trial(JSON.parse(p.stdout).path, "words-run");
    assert.equal(s.prompt_lengths.all.max_abs_error, 7, "one message: words + 4 + 3");
    assert.ok(s.prompt_lengths.limitations.some((l: string) => /approximate/.test(l)), JSON.stringify(s.prompt_lengths));
  });

  test("length flags where they do not apply: one line, 64", async () => {
    const set = await prepare("set", []);
    assert.equal(set.code, 0);
    const withPrompts = await runIk(["load-trial", "prepare", "--out", join(dir, "x1"), "--prompts", "builtin:default", "--tokenize-via", mock.base], { env: env() });
    assert.equal(withPrompts.code, 64, withPrompts.stderr);
    assert.match(withPrompts.stderr, /^ik: --tokenize-via: applies only with --synth/);
    const modelAlone = await prepare("x2", ["--model", "mock-model"]);
    assert.equal(modelAlone.code, 64, modelAlone.stderr);
    assert.match(modelAlone.stderr, /^ik: --model: needs --tokenize-via URL/);
    const both = await prepare("x3", ["--tokenize-via", mock.base, "--tokenizer", "tok.json"]);
    assert.equal(both.code, 64, both.stderr);
    assert.match(both.stderr, /--tokenize-via: cannot be combined with --tokenizer/);
  });
});
