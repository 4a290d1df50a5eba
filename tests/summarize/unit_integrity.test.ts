/**
 * summarize vllm's integrity on in-memory units: a result file that does not say `failed` (vLLM
 * v0.9–v0.11 without --save-detailed) reports failed null, not 0, and its container-line check
 * counts num_prompts − completed; a repeated (pass, dataset, conc) cell and serial ranges that
 * overlap in one container log are flagged naming runs.tsv's lines. In-process, < 1 s.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { renderUnit } from "../../lib/summarize/mod.ts";
import { MEM_ROOT, summarizeMem, tsv } from "./_mem.ts";

/** A result file without arrays; `extra` adds or overrides keys. */
const result = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    date: "20250101-000000", backend: "openai-chat", model_id: "m", tokenizer_id: "m", num_prompts: 10, request_rate: "inf", duration: 2.0, completed: 10,
    total_input_tokens: 100, total_output_tokens: 80, request_throughput: 5, output_throughput: 40, total_token_throughput: 90,
    median_ttft_ms: 50.0, p99_ttft_ms: 60.0, median_tpot_ms: 8.0, p99_tpot_ms: 9.0, ...extra,
  });
const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `ik-request serial=${from + i} prompt=10 cached=0 gen=8 acc=0 prop=0\n`).join("");

test("failed unknown: null in the JSON, and num_prompts − completed counted against the container lines", async () => {
  const s = await summarizeMem({
    "runs.tsv": tsv([["tag", "dataset", "conc", "serial_lo", "serial_hi", "warmups"], ["old", "random", 4, 0, 12, 2]]),
    // 10 prompts, 8 completed, no `failed` and no arrays; the server saw 2 warm-ups + 10 requests
    "results/old.json": result({ completed: 8, total_output_tokens: 64 }),
    "c.log": lines(1, 12),
  }, { container: join(MEM_ROOT, "c.log") });
  const r = s.runs[0];
  assert.equal(r.failed, null);
  assert.equal(r.completed, 8);
  assert.ok(s.integrity.includes("old: 8 completed of 10 prompts"), s.integrity.join("\n"));
  assert.ok(!s.integrity.some((f) => /container lines/.test(f)), s.integrity.join("\n"));
  assert.ok(!s.integrity.some((f) => /failed requests/.test(f)), s.integrity.join("\n"));
  // a line too many is still found, with the count's source said
  const t = await summarizeMem({
    "runs.tsv": tsv([["tag", "dataset", "conc", "serial_lo", "serial_hi", "warmups"], ["old", "random", 4, 0, 13, 2]]),
    "results/old.json": result({ completed: 8, total_output_tokens: 64 }),
    "c.log": lines(1, 13),
  }, { container: join(MEM_ROOT, "c.log") });
  assert.ok(t.integrity.includes("old: 13 container lines in serials (0,13] vs 8+2 (failed not in the result file: num_prompts - completed) requests + 2 warm-ups (foreign traffic, or lines missing)"), t.integrity.join("\n"));
});

test("failed said by the file: seed-compatible (0 stays 0, the count as before)", async () => {
  const s = await summarizeMem({
    "runs.tsv": tsv([["tag", "dataset", "conc", "serial_lo", "serial_hi", "warmups"], ["new", "random", 4, 0, 12, 2]]),
    "results/new.json": result({ completed: 8, failed: 0, total_output_tokens: 64 }),
    "c.log": lines(1, 12),
  }, { container: join(MEM_ROOT, "c.log") });
  assert.equal(s.runs[0].failed, 0);
  assert.ok(s.integrity.includes("new: 12 container lines in serials (0,12] vs 8+0 requests + 2 warm-ups (foreign traffic, or lines missing)"), s.integrity.join("\n"));
});

test("a repeated (pass, dataset, conc) cell and overlapping serial ranges are flagged with runs.tsv's lines", async () => {
  const files: Record<string, string> = {
    "runs.tsv": tsv([
      ["tag", "pass", "dataset", "conc", "serial_lo", "serial_hi", "warmups"],
      ["a1", "A", "random", 1, 0, 10, 0],
      ["b1", "B", "random", 1, 10, 20, 0],
      ["a1bis", "A", "random", 1, 18, 28, 0],
      ["a2", "A", "random", 2, 28, 38, 0],
      ["b2", "B", "random", 2, 38, 48, 0],
    ]),
    "c.log": lines(1, 48),
  };
  for (const t of ["a1", "b1", "a1bis", "a2", "b2"]) files[`results/${t}.json`] = result({ failed: 0 });
  const runs = join(MEM_ROOT, "runs.tsv");
  const s = await summarizeMem(files, { container: join(MEM_ROOT, "c.log") });
  assert.ok(s.integrity.includes(`a1bis: ${runs}:4 repeats cell (pass A, random, c1) of a1 (${runs}:2); the A/B comparison keeps only the later one with a result`), s.integrity.join("\n"));
  assert.ok(s.integrity.includes(`a1bis: serials (18,28] (${runs}:4) overlap b1's (10,20] (${runs}:3) in ${join(MEM_ROOT, "c.log")}: those container lines are counted in both cells`), s.integrity.join("\n"));
  assert.equal(s.integrity.filter((f) => /repeats cell|overlap/.test(f)).length, 2, s.integrity.join("\n"));
  assert.match(renderUnit(s), /\nFLAGS:\n(?:.*\n)* {2}- a1bis: \S*runs\.tsv:4 repeats cell/);
});

test("per-cell container logs start their own serials: equal ranges in different logs are no overlap", async () => {
  const files: Record<string, string> = {
    "runs.tsv": tsv([["tag", "pass", "dataset", "conc", "serial_lo", "serial_hi", "warmups", "container"], ["a1", "A", "random", 1, 0, 10, 0, "a1.log"], ["b1", "B", "random", 1, 0, 10, 0, "b1.log"]]),
    "a1.log": lines(1, 10), "b1.log": lines(1, 10), "results/a1.json": result({ failed: 0 }), "results/b1.json": result({ failed: 0 }),
  };
  const s = await summarizeMem(files);
  assert.deepEqual(s.integrity, []);
});

test("without a second pass a repeated cell is flagged without the A/B remark", async () => {
  const files: Record<string, string> = {
    "runs.tsv": tsv([["tag", "dataset", "conc", "serial_lo", "serial_hi"], ["x", "random", 1, 0, 10], ["y", "random", 1, 10, 20]]),
    "c.log": lines(1, 20), "results/x.json": result({ failed: 0 }), "results/y.json": result({ failed: 0 }),
  };
  const s = await summarizeMem(files, { container: join(MEM_ROOT, "c.log") });
  const runs = join(MEM_ROOT, "runs.tsv");
  assert.deepEqual(s.integrity, [`y: ${runs}:3 repeats cell (pass -, random, c1) of x (${runs}:2)`]);
});
