/**
 * `ik bench serve --dataset X` builds the same set as `ik prompts build --dataset X --tokenize-via
 * URL` against the same REAL llama-server (../shared/engines/llama.cpp: a Llama-2 SentencePiece
 * vocab that adds a BOS, ChatML template): the same lines, so the same sha256. Both count bare text
 * (ShareGPT's answer lengths, hence max_tokens; Mooncake's 512-token blocks) through the
 * completions API, as vLLM's `tokenizer(text).input_ids` does; a chat-template difference would
 * give other max_tokens. Bun only (a real engine), -t 1. Budget: ~10 s.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeDatasetFixtures } from "../../scripts/make_dataset_fixtures.ts";
import { runIk } from "../_helpers/ik.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";

const skip = llamaSkip();

describe("bench serve --dataset and prompts build --tokenize-via: one set against a real llama-server", { skip }, () => {
  let server: LlamaServer;
  let dir = "";
  let env: Record<string, string> = {};
  let fx: Record<string, string> = {};
  before(async () => {
    server = await startLlama();
    dir = await mkdtemp(join(tmpdir(), "ik-llama-dataset-"));
    fx = makeDatasetFixtures(join(dir, "src"));
    const key = join(dir, "endpoint.key");
    await writeFile(key, "ef".repeat(32) + "\n", { mode: 0o600 });
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: key };
  });
  after(async () => {
    server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [name, n] of [["sharegpt", "4"], ["mooncake", "0"]] as const) {
    test(`${name}: the same sha256 and max_tokens either way`, async () => {
      const out = join(dir, `${name}.jsonl`);
      const b = await runIk(["prompts", "build", "--dataset", name, "--dataset-path", fx[name === "sharegpt" ? "sharegpt.json" : "mooncake.jsonl"], "--num-prompts", n, "--seed", "4",
        "--tokenize-via", server.url, "--model", "tiny-llama", "--out", out], { env, timeoutMs: 60_000 });
      assert.equal(b.code, 0, b.stderr);
      const text = await readFile(out, "utf8");
      const lines = text.trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(lines.every((l) => l.length_method === "server_tokenize:llamacpp"));

      const args = ["bench", "serve", "--base-url", server.url, "--model", "tiny-llama", "--rounds", "1", "--warmup", "0",
        "--dataset", name, "--dataset-path", fx[name === "sharegpt" ? "sharegpt.json" : "mooncake.jsonl"], "--seed", "4", "--json"];
      if (n !== "0") args.push("--limit-per-bucket", n);
      const r = await runIk(args, { env, timeoutMs: 120_000 });
      const rec = JSON.parse(r.stdout);
      assert.equal(rec.request.args.dataset.length_method, "server_tokenize:llamacpp", r.stderr);
      assert.equal(rec.data.prompt_set_sha256, createHash("sha256").update(text).digest("hex"), `the same set as prompts build writes (${r.stderr.slice(0, 400)})`);
      const sent = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
      const want = Object.fromEntries(lines.map((l) => [l.id, l.max_tokens]));
      assert.equal(sent.length, lines.length);
      for (const x of sent) assert.equal(x.max_tokens, want[x.id], `${x.id}: max_tokens`);
    });
  }
});

if (skip) test("real llama-server bench serve --dataset (skipped)", { skip }, () => {});
