/**
 * `ik prompts synth --tokenize-via` end to end through the binary against `ik mock`: a set sized by
 * the mock's /tokenize runs through `bench serve` single mode with 0 error between usage
 * prompt_tokens and input_tokens in the record; a words set is flagged approximate (and is off by
 * the mock's 7 template tokens); --prefix-len and --range-ratio against the sglang personality;
 * an unreachable URL, a server without tokenize endpoints and conflicting flags fail in one line
 * with 69 / 64. Budget: ~6 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chatPromptTokens } from "../../lib/mock/tokens.ts";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { freePort } from "../_helpers/ports.ts";
import { runIk, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

describe("prompts synth --tokenize-via against ik mock (binary)", { skip: BINARY_ONLY_SUITE }, () => {
  let vllm: MockProc;
  let sglang: MockProc;
  let trtllm: MockProc;
  let dir = "";
  let env: Record<string, string> = {};
  before(async () => {
    [vllm, sglang, trtllm] = await Promise.all([startMock(["--engine", "vllm"]), startMock(["--engine", "sglang"]), startMock(["--engine", "trtllm"])]);
    dir = await mkdtemp(join(tmpdir(), "ik-synth-tok-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    await Promise.all([vllm, sglang, trtllm].map((m) => m?.stop()));
    await rm(dir, { recursive: true, force: true });
  });

  const serve = async (base: string, set: string) => {
    const r = await runIk(["bench", "serve", "--base-url", base, "--model", "mock-model", "--prompts", set, "--rounds", "2", "--warmup", "0", "--json"], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };

  test("a set sized by the server's /tokenize: every untagged request's usage prompt_tokens = input_tokens (0 error)", async () => {
    const out = join(dir, "exact.jsonl");
    const r = await runIk(["prompts", "synth", "--tokenize-via", vllm.base, "--bucket", "in64:64:4,in200:200:4", "--per-bucket", "3", "--out", out, "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    assert.equal(made.length_method, "server_tokenize:vllm");
    assert.deepEqual(made.limitations, []);
    const manifest = JSON.parse(await readFile(join(dir, "exact.manifest.json"), "utf8"));
    assert.equal(manifest.length_method, "server_tokenize:vllm");
    assert.ok(manifest.tokenize.calls > 0 && manifest.tokenize.calls <= 1 + 2 + 6 * 12, `calls ${manifest.tokenize.calls}`);
    const rec = await serve(vllm.base, out);
    const pl = rec.data.prompt_lengths;
    assert.deepEqual(pl.length_methods, { "server_tokenize:vllm": 6 });
    assert.deepEqual([pl.all.n, pl.all.max_abs_error, pl.all.mean_abs_error, pl.all.exact], [6, 0, 0, 6]);
    for (const b of ["in64", "in200"]) {
      assert.equal(pl.buckets[b].max_abs_error, 0, b);
      assert.equal(pl.buckets[b].n, 3, b);
      assert.equal(pl.buckets[b].tagged.n, 3, `${b}: round 1 is tagged`);
      assert.ok(pl.buckets[b].tagged.mean_excess > 0, "the tag adds tokens");
    }
    assert.ok(!rec.limitations.some((l: string) => /approximate|differed/.test(l)), rec.limitations.join(" | "));
  });

  test("a words set: approximate, said at synth time and in the record, off by the mock's template tokens", async () => {
    const out = join(dir, "words.jsonl");
    const r = await runIk(["prompts", "synth", "--bucket", "w:40:8", "--per-bucket", "2", "--out", out], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /lengths are approximate/);
    assert.match(r.stdout, /lengths by words/);
    const rec = await serve(vllm.base, out);
    assert.equal(rec.data.prompt_lengths.buckets.w.max_abs_error, 7, "Σ(words + 4) + 3 against words");
    assert.ok(rec.limitations.some((l: string) => /prompt lengths are approximate/.test(l)), rec.limitations.join(" | "));
  });

  test("--prefix-len and --range-ratio (sglang personality): exact, one prefix per bucket, the tag after it", async () => {
    const out = join(dir, "pre.jsonl");
    const r = await runIk(["prompts", "synth", "--tokenize-via", sglang.base, "--bucket", "p:120:4", "--per-bucket", "6", "--prefix-len", "40", "--range-ratio", "0.25", "--seed", "3", "--out", out, "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).length_method, "server_tokenize:sglang");
    const ps = parsePromptSetText(await readFile(out, "utf8"), "pre.jsonl");
    const at = ps[0].extra.cache_salt_at as number;
    const prefix = String(ps[0].messages[0].content).slice(0, at);
    assert.equal(prefix.trim().split(/\s+/).length, 40, "40 pseudo-tokens");
    for (const p of ps) {
      const n = p.extra.input_tokens as number;
      assert.ok(n >= 90 && n <= 150, `${p.id}: ${n}`);
      assert.equal(chatPromptTokens(p.messages), n, p.id);
      assert.equal(String(p.messages[0].content).slice(0, at), prefix, p.id);
      assert.ok((p.maxTokens as number) >= 3 && (p.maxTokens as number) <= 5);
    }
    assert.ok(new Set(ps.map((p) => p.extra.input_tokens)).size > 1, "lengths vary");
    const rec = await serve(sglang.base, out);
    assert.equal(rec.data.prompt_lengths.all.max_abs_error, 0);
  });

  test("unreachable URL, a server without tokenize endpoints, conflicting flags: one line, 69 / 64", async () => {
    const out = join(dir, "never.jsonl");
    const port = await freePort();
    const down = await runIk(["prompts", "synth", "--tokenize-via", `http://127.0.0.1:${port}`, "--bucket", "a:64:8", "--out", out], { env });
    assert.equal(down.code, 69, down.stderr);
    assert.match(down.stderr, /^ik: --tokenize-via http:\/\/127\.0\.0\.1:\d+: cannot reach the server/);
    assert.equal(down.stderr.trim().split("\n").length, 1, down.stderr);
    const trt = await runIk(["prompts", "synth", "--tokenize-via", trtllm.base, "--bucket", "a:64:8", "--out", out], { env });
    assert.equal(trt.code, 69, trt.stderr);
    assert.match(trt.stderr, /trtllm.*vllm, sglang and llamacpp only/);
    const forced = await runIk(["prompts", "synth", "--tokenize-via", trtllm.base, "--tokenize-engine", "vllm", "--bucket", "a:64:8", "--out", out], { env });
    assert.equal(forced.code, 69, forced.stderr);
    assert.match(forced.stderr, /cannot tokenize: HTTP 404/);
    assert.equal(forced.stderr.trim().split("\n").length, 1);
    const wrongModel = await runIk(["prompts", "synth", "--tokenize-via", vllm.base, "--model", "nope", "--bucket", "a:64:8", "--out", out], { env });
    assert.equal(wrongModel.code, 69, wrongModel.stderr);
    assert.match(wrongModel.stderr, /cannot tokenize: HTTP 404 .*nope/);
    const rightModel = await runIk(["prompts", "synth", "--tokenize-via", vllm.base, "--model", "mock-model", "--bucket", "a:64:8", "--per-bucket", "1", "--out", out, "--json"], { env });
    assert.equal(rightModel.code, 0, rightModel.stderr);
    assert.equal(JSON.parse(rightModel.stdout).tokenize.model, "mock-model");
    for (const [args, re] of [
      [["--tokenize-via", vllm.base, "--tokenizer", "x.json"], /cannot be combined with --tokenizer/],
      [["--range-ratio", "0.2", "--input-stddev", "5"], /--range-ratio: cannot be combined/],
      [["--tokenize-engine", "vllm"], /needs --tokenize-via/],
      [["--model", "m"], /--model: needs --tokenize-via/],
      [["--tokenize-via", vllm.base, "--prefix-len", "64"], /--prefix-len: bucket a: 64 input tokens is not more than/],
    ] as const) {
      const u = await runIk(["prompts", "synth", ...args, "--bucket", "a:64:8", "--out", out], { env });
      assert.equal(u.code, 64, `${args.join(" ")}: ${u.stderr}`);
      assert.match(u.stderr, re);
    }
  });
});
